"""The shared policy vectors (tests/vectors/policies.txt) against lib/panda,
through the patched ovs-ofctl of the build tree (no root needed):

  text  -> 'ovs-ofctl parse-flow actions=panda(TEXT)': OVS's action parser
           calls panda_policy_parse() and prints panda_policy_format(), or
           'panda: MESSAGE';
  wire  -> 'ovs-ofctl parse-actions OpenFlow13' on the NX action built from
           the body: the switch's decoder prints the canonical text (and
           any difference when it re-encodes the action: none allowed), or
           logs 'panda: MESSAGE'.

Together with tests/python/test_policy.py this keeps lib/panda and
pandaovs.policy.Policy in step, message for message."""

import subprocess

import pytest

from pandaovs import paths
from pandaovs.policy import NX_HEADER_LEN, NX_VENDOR_ID, NXAST_PANDA

OFCTL = paths.BuildTree().path("ovs/build/utilities/ovs-ofctl")


def nx_header(body):
    """The NXAST_PANDA header for a wire body (160 bytes, more with
    rules)."""
    return "ffff%04x%08x%04x" % (NX_HEADER_LEN + len(body), NX_VENDOR_ID,
                                 NXAST_PANDA)

pytestmark = pytest.mark.skipif(
    not paths.BuildTree().has("ovs/build/utilities/ovs-ofctl"),
    reason="no patched ovs-ofctl in %s (./build.sh)"
    % paths.BuildTree().root)


def ofctl(*args, input=None):
    return subprocess.run([OFCTL] + list(args), input=input,
                          capture_output=True, text=True, timeout=60)


def test_vector_in_lib_panda(policy_vector):
    v = policy_vector
    if "text" in v:
        r = ofctl("parse-flow", "actions=panda(%s)" % v["text"])
        if "error" in v:
            assert r.returncode != 0, r.stdout
            assert "ovs-ofctl: panda: %s\n" % v["error"] in r.stderr, \
                r.stderr
            return
        assert r.returncode == 0, r.stderr
        assert "actions=panda(%s)\n" % v["canonical"] in r.stdout, r.stdout
    # One action per run: the decoder's log lines are rate-limited.
    r = ofctl("parse-actions", "OpenFlow13",
              input=nx_header(v["wire"]) + v["wire"].hex() + "\n")
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    if "error" in v:
        assert "OFPBAC_BAD_ARGUMENT" in r.stdout, r.stdout
        assert "|panda: %s\n" % v["error"] in r.stderr, r.stderr
    else:
        # Only the decoded actions: a re-encoding difference would add
        # "expected/actual" lines.
        assert lines == ["actions=panda(%s)" % v["canonical"]], \
            r.stdout + r.stderr
