"""Auto-tune for hosts that mark with the tc eBPF classifier (panda-bpf)
rather than the panda action: no OpenFlow, so no bridge to pull
histograms from or push flows to.  What the os-ken controller does for a
bridge (app.py: histograms, model, decision, push) is done here for a
list of hosts, each reached by the command that runs its panda-bpf:

    panda-controller tune-bpf --auto-tune-load 0.5 \\
        --host hv1="ssh hv1 panda-bpf" --host hv2="ssh hv2 panda-bpf"

Each round reads every host's `panda-bpf show --json` (the policy in
force) and `panda-bpf histogram` (the text of ovs-appctl panda/histogram,
read by pandaovs.sizehist), gives the histograms of the policy id in force
to the same autotune.Tuner the controller runs (same window, model,
bounds, margin, hysteresis and interval), and on a push runs
`panda-bpf set-policy --text` on every host; the policy written to
--policy-out is the file the Ansible role pushes next time.

Which hosts speak (as "only switches speak for switches" in app.py): the
hosts given on the command line, by a command the operator chose (ssh
with its host keys).  A host whose policy differs from the first host's
(another id, or not yet pushed) is left out of the round and named; a
host that cannot be reached or refuses the new policy keeps the one it
runs, is named, and the others take the new one (one host's failure fails
that host only).  The tuner's own limits (bounds, max_step, source_cap:
autotune.py) apply as they do to bridges, the hosts being the sources.

Nothing here imports os-ken.
"""

import json
import logging
import os
import shlex
import subprocess
import tempfile
import time

from . import autotune
from .. import sizehist
from ..policy import Policy, PolicyError

LOG = logging.getLogger("panda_controller.bpf")


class HostError(RuntimeError):
    pass


class Host:
    """One host, reached by 'argv' (the command that runs its panda-bpf,
    options such as --pin-dir included)."""

    def __init__(self, name, argv, timeout=30):
        self.name = name
        self.argv = list(argv)
        self.timeout = timeout

    @classmethod
    def parse(cls, spec, timeout=30):
        """'NAME=COMMAND' (COMMAND split as a shell would)."""
        name, sep, command = spec.partition("=")
        if not sep or not name.strip() or not command.strip():
            raise ValueError("--host %r: expected NAME=COMMAND, e.g. "
                             "hv1='ssh hv1 panda-bpf'" % spec)
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise ValueError("--host %s: %s" % (name, e)) from None
        return cls(name.strip(), argv, timeout)

    def run(self, *args):
        try:
            res = subprocess.run(self.argv + list(args), capture_output=True,
                                 text=True, timeout=self.timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise HostError("%s: %s" % (self.name, e)) from None
        if res.returncode:
            raise HostError("%s: %s %s: %s" % (
                self.name, " ".join(self.argv), args[0],
                (res.stderr or res.stdout).strip() or
                "exit status %d" % res.returncode))
        return res.stdout

    def policy(self):
        """The Policy in force, or None if the classifier is not loaded or
        has no policy."""
        try:
            show = json.loads(self.run("show", "--json"))
        except ValueError as e:
            raise HostError("%s: show --json: %s" % (self.name, e)) from None
        pol = show.get("policy") if show.get("loaded") else None
        if not pol:
            return None
        try:
            return Policy.from_text(pol["text"])
        except (KeyError, TypeError, PolicyError) as e:
            raise HostError("%s: the policy in force: %s"
                            % (self.name, e)) from None

    def histograms(self):
        """{policy id: sizehist.Histogram}."""
        try:
            return sizehist.parse(self.run("histogram"))
        except sizehist.HistogramError as e:
            raise HostError("%s: histogram: %s" % (self.name, e)) from None

    def set_policy(self, policy):
        self.run("set-policy", "--text", policy.text())


def write_policy(path, policy):
    """Writes the policy text to 'path' atomically (rename)."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".panda-policy-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write("# written by panda-controller tune-bpf, %s\n%s\n" % (
                time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                policy.text()))
        os.replace(tmp, path)
    except OSError:
        os.unlink(tmp)
        raise


class BpfTuner:
    """The auto-tune loop over 'hosts' (a list of Host)."""

    def __init__(self, hosts, settings, policy_out=None, configured=None,
                 clock=time.monotonic):
        names = [h.name for h in hosts]
        if len(set(names)) != len(names):
            raise ValueError("two --host with one name: %s" % names)
        self.hosts = hosts
        self.settings = settings
        self.policy_out = policy_out
        self.clock = clock
        self.tuner = None
        # The operator's policy, whose T and thresholds the bounds are
        # around (autotune.default_bounds()); else the first one found.
        self.configured = configured
        self.decisions = []

    def round(self):
        """One round; returns the decision (a dict, also logged)."""
        current, polled, left_out = None, {}, {}
        for h in self.hosts:
            try:
                p = h.policy()
            except HostError as e:
                left_out[h.name] = str(e)
                continue
            if p is None:
                left_out[h.name] = "no policy loaded"
            elif current is None:
                current = p
                polled[h.name] = h
            elif p != current:
                left_out[h.name] = "runs another policy (%s)" % p.text()
            else:
                polled[h.name] = h
        if current is None:
            return self._decision(None, "wait", "no host runs a policy",
                                  left_out=left_out)
        if current.kind not in ("panda", "compose"):
            return self._decision(current.id, "wait", "the policy in force "
                                  "is kind=%s: auto-tune moves T and the "
                                  "thresholds of panda policies"
                                  % current.kind, left_out=left_out)
        if self.tuner is None or self.tuner.id != current.id:
            self.tuner = autotune.Tuner(current.id, self.settings,
                                        self.clock)
            if self.configured is None or \
                    self.configured.id != current.id:
                self.configured = current
        snaps = {}
        for name, h in sorted(polled.items()):
            try:
                hists = h.histograms()
            except HostError as e:
                left_out[name] = str(e)
                continue
            hist = hists.get(current.id)
            if hist is not None and not hist.shared:
                snaps[name] = hist
        bounds = autotune.effective_bounds(self.configured, None,
                                           self.settings.bound_factor)
        action, reason, proposed, inputs = self.tuner.step(current, snaps,
                                                           bounds)
        pushed, refused = [], {}
        if proposed is not None:
            for name, h in sorted(polled.items()):
                try:
                    h.set_policy(proposed)
                    pushed.append(name)
                except HostError as e:
                    refused[name] = str(e)
            if self.policy_out and pushed:
                write_policy(self.policy_out, proposed)
        return self._decision(current.id, action, reason, left_out=left_out,
                              pushed=pushed, refused=refused, **inputs)

    def _decision(self, pid, action, reason, **inputs):
        for name, why in sorted(inputs.get("left_out", {}).items()):
            LOG.warning("host %s left out: %s", name, why)
        for name, why in sorted(inputs.get("refused", {}).items()):
            LOG.error("host %s kept its policy: %s", name, why)
        return autotune.record_decision(self.decisions, LOG, pid, action,
                                        reason, inputs)

    def run(self, rounds=0, sleep=time.sleep):
        """Rounds every settings.interval seconds; 'rounds' 0: forever."""
        n = 0
        while not rounds or n < rounds:
            if n:
                sleep(self.settings.interval)
            self.round()
            n += 1
