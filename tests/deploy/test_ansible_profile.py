"""The link profiles of the Ansible roles (panda_profile: 1g | 10g).

* no root: an unknown profile stops the play with a message naming the
  variable and the value;
* as root, the localhost sandbox: site.yml with the default 1g profile,
  then with panda_profile=10g: OVS's userspace TSO is set in the database
  and ovs-vswitchd restarted exactly once (one new process), the new
  process logged that TSO is on and opened the bridge's port with TSO, the
  bridge's flows and address are back, TCP from the host crosses the
  panda flow as packets larger than one frame (super-packets), the peer's
  offloads and the link rate are the profile's; a second 10g run changes
  nothing and restarts nothing; back to 1g restarts once more, removes the
  key, the port has TSO off again and TCP still works with one-frame
  packets (a tap left over from the TSO process would break it); then
  changed=0 again.  experiment.yml passes the profile to testbed/run.py.

Uses test_ansible's sandbox (private namespaces and directories) and
skips like it without root or a build.
"""

import os
import re
import time

import pytest

from test_ansible import (LOCAL_INV, changed_tasks, need, recap, run,
                          sandbox_session, send_from_host, tail)

TSO_LOG = "Userspace TCP Segmentation Offloading support enabled"
FRAME = 1514
SEND_BYTES = 2000000


def test_unknown_profile_is_refused():
    """A wrong panda_profile stops the play before anything looks up the
    profile's settings (check mode: nothing is touched)."""
    need("ansible-playbook")
    res = run(["ansible-playbook", "-i", LOCAL_INV, "site.yml", "--check",
               "--tags", "always", "-e", "panda_profile=40g"], timeout=120)
    assert res.returncode != 0
    assert "panda_profile must be one of 1g, 10g" in res.stdout, \
        tail(res.stdout)
    assert "'40g'" in res.stdout
    assert recap(res.stdout)["localhost"]["failed"] == 1


class Switch:
    """What the sandbox's ovs-vswitchd is and did."""

    def __init__(self, sb):
        self.sb = sb

    def pid(self):
        with open(os.path.join(self.sb.dir, "ovs-vswitchd.pid")) as f:
            return int(f.read())

    def log_runs(self):
        """The log split into one text per process (each process's first
        line is message 00001)."""
        with open(os.path.join(self.sb.dir, "ovs-vswitchd.log")) as f:
            text = f.read()
        return [r for r in re.split(r"(?m)^(?=\S+\|00001\|)", text) if r]

    def tso_in_db(self):
        return self.sb.vsctl("--if-exists", "get", "Open_vSwitch", ".",
                             "other_config:userspace-tso-enable")

    def offloads(self, ns, dev):
        out = self.sb.ns(ns, "ethtool", "-k", dev, check=True).stdout
        return dict(re.findall(r"(?m)^([a-z-]+): (on|off)", out))


def panda_flow_stats(sb, min_bytes):
    """(n_packets, n_bytes) of the panda flow, once the revalidators have
    brought at least min_bytes into it (the deadline is a safety net)."""
    deadline = time.monotonic() + 120
    while True:
        flows = sb.ofctl("dump-flows", "br-panda")
        m = re.search(r"n_packets=(\d+), n_bytes=(\d+).*priority=100,tcp,"
                      r"in_port=LOCAL actions=panda\(", flows)
        if (m and int(m.group(2)) >= min_bytes) or \
                time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert m, flows
    return int(m.group(1)), int(m.group(2))


def check_switch(sb, sw, tso):
    """The switch after a site.yml run with profile 10g (tso) or 1g."""
    runs = sw.log_runs()
    assert (TSO_LOG in runs[-1]) == tso, runs[-1][-3000:]
    assert sw.tso_in_db() == ('"true"' if tso else "")
    bridge = sw.offloads(sb.hv, "br-panda")
    assert bridge["tcp-segmentation-offload"] == ("on" if tso else "off"), \
        bridge
    # The peer (the other host) sends with TSO and tx checksum under 10g;
    # the switch's side of the veth keeps them off under both (segments
    # are cut after the qdisc).
    peer = sw.offloads(sb.peer, "eth0")
    want = "on" if tso else "off"
    for feature in ("tx-checksumming", "tcp-segmentation-offload",
                    "generic-segmentation-offload",
                    "generic-receive-offload"):
        assert peer[feature] == want, (feature, peer)
    uplink = sw.offloads(sb.hv, "pans-up0")
    assert uplink["tcp-segmentation-offload"] == "off", uplink
    assert uplink["tx-checksumming"] == "off", uplink
    # Flows and address are back after the restart.
    flows = sb.ofctl("dump-flows", "br-panda")
    assert re.search(r"priority=100,tcp,in_port=LOCAL "
                     r"actions=panda\(id=1[,)].*NORMAL", flows), flows
    addr = sb.ns(sb.hv, "ip", "-4", "-o", "addr", "show", "dev", "br-panda",
                 check=True).stdout
    assert "10.99.0.1/24" in addr
    qos = sb.vsctl("get", "Port", "pans-up0", "qos")
    assert sb.vsctl("get", "QoS", qos, "other_config:max-rate") == (
        '"200000000"' if tso else '"100000000"')
    # Traffic: the flow's counters before and after 2 MB from the host.
    pkts0, bytes0 = panda_flow_stats(sb, 0)
    assert send_from_host(sb, SEND_BYTES) == SEND_BYTES
    pkts, nbytes = panda_flow_stats(sb, bytes0 + SEND_BYTES)
    pkts, nbytes = pkts - pkts0, nbytes - bytes0
    assert nbytes >= SEND_BYTES, (pkts, nbytes)
    if tso:
        # Super-packets crossed the action: on average more than a frame.
        assert nbytes / pkts > FRAME, (pkts, nbytes)
    else:
        assert max(0, nbytes - 100000) / pkts <= FRAME, (pkts, nbytes)


@pytest.fixture(scope="module")
def sandbox():
    yield from sandbox_session()


def site(sb, *extra):
    res = sb.playbook("site.yml", *extra, timeout=1800)
    assert res.returncode == 0, tail(res.stdout + res.stderr, 80)
    return res


def test_profile_switch_restarts_vswitchd_once_each_way(sandbox):
    sb = sandbox
    assert sb.first.returncode == 0, tail(sb.first.stdout, 80)
    sw = Switch(sb)
    assert sw.tso_in_db() == ""
    pid, starts = sw.pid(), len(sw.log_runs())

    # 1g -> 10g: one restart, TSO on.
    res = site(sb, "-e", "panda_profile=10g")
    assert recap(res.stdout)["localhost"]["changed"] > 0
    assert sw.pid() != pid
    assert len(sw.log_runs()) == starts + 1, "not exactly one restart"
    check_switch(sb, sw, tso=True)

    # Again: nothing changes, nothing restarts.
    pid, starts = sw.pid(), len(sw.log_runs())
    res = site(sb, "-e", "panda_profile=10g")
    r = recap(res.stdout)["localhost"]
    assert r["changed"] == 0, changed_tasks(res.stdout)
    assert (sw.pid(), len(sw.log_runs())) == (pid, starts)

    # 10g -> 1g (the inventory's): one restart, TSO off, TCP still works.
    res = site(sb)
    assert recap(res.stdout)["localhost"]["changed"] > 0
    assert sw.pid() != pid
    assert len(sw.log_runs()) == starts + 1, "not exactly one restart"
    check_switch(sb, sw, tso=False)

    pid, starts = sw.pid(), len(sw.log_runs())
    res = site(sb)
    r = recap(res.stdout)["localhost"]
    assert r["changed"] == 0, changed_tasks(res.stdout)
    assert (sw.pid(), len(sw.log_runs())) == (pid, starts)


def test_restart_alone_brings_the_flows_back(sandbox):
    """A run limited to the ovs tag (no panda_network, no panda_flows)
    that switches the profile still leaves the bridge with its flows and
    address: the restart handler puts them back."""
    sb = sandbox
    assert sb.first.returncode == 0, "first run failed"
    sw = Switch(sb)
    try:
        pid = sw.pid()
        res = site(sb, "--tags", "ovs", "-e", "panda_profile=10g")
        assert "panda_flows :" not in res.stdout, "not an ovs-only run"
        assert sw.pid() != pid
        assert TSO_LOG in sw.log_runs()[-1]
        flows = sb.ofctl("dump-flows", "br-panda")
        assert "actions=panda(id=1" in flows, flows
        addr = sb.ns(sb.hv, "ip", "-4", "-o", "addr", "show", "dev",
                     "br-panda", check=True).stdout
        assert "10.99.0.1/24" in addr
        ping = sb.ns(sb.peer, "ping", "-c", "2", "-W", "2", "10.99.0.1")
        assert ping.returncode == 0, ping.stdout + ping.stderr
    finally:
        site(sb)
    assert TSO_LOG not in sw.log_runs()[-1]


def test_experiment_passes_the_profile_to_the_testbed(sandbox):
    """experiment.yml runs testbed/run.py with --profile 10g.  An option
    run.py refuses at once (--flt-level0 7) stops it before any trial, so
    the test needs only the command line the play ran."""
    sb = sandbox
    assert sb.first.returncode == 0, "first run failed"
    res = sb.playbook("experiment.yml", "-e", "panda_profile=10g",
                      "-e", '{"panda_experiment_testbed_args": '
                      '["--flt-level0", "7"]}', timeout=600)
    assert res.returncode != 0
    out = res.stdout
    assert re.search(r'"--profile",\s*"10g"', out), tail(out, 40)
    assert "--flt-level0 7: must be in [0, 1]" in out, tail(out, 40)
