"""The kernel split of a system port's receive by priority (OVS patch
netdev-linux "Split a port's receive by priority in the kernel", lib/panda's
panda/rxsplit.h and bpf/panda-rxsplit.bpf.c).

A bridge (datapath_type=netdev, flows NORMAL) between hosts cli and srv, in
namespaces named rxsplit*; ovs-vswitchd is held to a tenth of a CPU (a
cgroup of its own, pandalab.cpulimit), so that the frame blaster on cli
overloads the thread that reads cli's port many times over, whatever the
machine, and the port's packet socket queue overflows.  Through it, level-0
probes: UDP datagrams with DSCP 46, which the port's ingress priority
(app=46:0, everything else level 1) ranks high, counted at srv.

  - with the split, the flood fills the low socket's queue and (almost)
    every probe arrives;
  - the same run with the split turned off (panda-ingress-split=false:
    the userspace ingress priority alone, one socket) loses many probes:
    the proof that the flood overflows the socket, so that the first
    assertion means something;
  - the port's status says the split is active, and removing the key
    returns the port to one socket.

Takes about 20 seconds.  Needs root and a build with BPF programs
(bpf/bpf-status); skipped with the reason otherwise.
"""

import json
import os
import re
import subprocess
import threading

import pytest

from pandaovs import paths
from pandalab.cpulimit import CpuLimitError, cpu_limit
from pandalab.lab import Lab, wait_until

BUILD = paths.BuildTree()
HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "udp_probe.py")
BLAST_C = os.path.join(HERE, "..", "..", "bench", "bench-blast.c")
SINK_MAC = "02:00:00:00:99:99"      # Nobody's: srv's kernel drops them.
POLICY = "id=1,kind=app,app=46:0,levels=2,default_level=1"
PROBE_PORT = 7000
PROBES, PROBE_PPS = 300, 150
CPU = 0.1           # Of one CPU, for ovs-vswitchd.

pytestmark = [pytest.mark.usefixtures("ovs_ready")]


def bpf_status():
    path = os.path.join(BUILD.root, "bpf", "bpf-status")
    if not os.path.exists(path):
        return "no bpf/bpf-status in the build tree"
    with open(path) as f:
        text = f.read().strip()
    return None if text.startswith("built") else text


@pytest.fixture
def lab(tmp_path):
    why = bpf_status()
    if why:
        pytest.skip("build without BPF programs: %s" % why)
    blaster = str(tmp_path / "bench-blast")
    subprocess.run(["cc", "-O2", "-o", blaster, BLAST_C], check=True)
    with Lab(BUILD.root, [("cli", "10.0.0.1", 1), ("srv", "10.0.0.2", 2)],
             static_arp=True, ns_prefix="rxsplit") as lab:
        lab.sb.ofctl("del-flows", "br0")
        lab.sb.ofctl("add-flow", "br0", "actions=NORMAL")
        lab.blaster = blaster
        try:
            with cpu_limit(lab.sb.daemon_pids["ovs-vswitchd"], CPU,
                           "rxsplit-test-%d" % os.getpid()):
                yield lab
        except CpuLimitError as e:
            pytest.skip(str(e))


def log_count(lab, pattern):
    return len(re.findall(pattern, lab.sb.log()))


def set_split(lab, split):
    """Ingress priority on cli's port, the kernel split on or off; waits
    until the port's receive queue was reopened accordingly."""
    port = lab.cli.port
    active0 = log_count(lab, r"%s: receive split by priority: active" % port)
    removed0 = log_count(lab, r"%s: receive split by priority removed"
                         % port)
    lab.sb.vsctl("set", "interface", port,
                 "other_config:panda-ingress-priority=%s" % POLICY,
                 "other_config:panda-ingress-split=%s"
                 % ("true" if split else "false"))
    if split:
        wait_until(lambda: log_count(lab, r"%s: receive split by priority: "
                                     "active" % port) > active0
                   or "split unavailable" in lab.sb.log(), 20,
                   "the split of %s" % port)
        m = re.search(r"kernel split unavailable: .*", lab.sb.log())
        if m:
            pytest.skip(m.group(0))
    else:
        wait_until(lambda: "ingress priority set" in lab.sb.log()
                   and log_count(lab, r"%s: receive split by priority "
                                 "removed" % port) >= removed0, 20,
                   "the priority on %s" % port)


def probe_loss(lab, seconds=4.0):
    """Fraction of PROBES level-0 datagrams lost while the blaster floods
    cli's port with 64-byte frames at full speed."""
    recv = lab.spawn("udprecv", lab.srv, paths.PY, PROBE, "udprecv",
                     "--ports", PROBE_PORT, "--expect", PROBES,
                     "--duration", seconds + 6, stdout=subprocess.PIPE,
                     text=True)
    assert "listening" in recv.stdout.readline()

    def blast():
        lab.cli.run(lab.blaster, "eth0", 64, 1000, seconds, SINK_MAC,
                    timeout=seconds + 60)
    t = threading.Thread(target=blast)
    t.start()
    try:
        # The queue is full before the first probe leaves.
        wait_until(lambda: int(lab.srv.run(
            "cat", "/sys/class/net/eth0/statistics/rx_packets")) > 1000,
            10, "the flood at srv")
        out = lab.cli.run(paths.PY, PROBE, "udp", lab.srv.ip, PROBE_PORT,
                          "--count", PROBES, "--pps", PROBE_PPS,
                          "--tos", "0xb8", timeout=60)
        assert json.loads(out.strip().splitlines()[-1])["sent"] == PROBES
    finally:
        t.join()
    out, _ = recv.communicate(timeout=60)
    counts = json.loads(out.strip().splitlines()[-1])["dscp_counts"]
    got = counts[str(PROBE_PORT)].get("46", 0)
    return 1 - got / PROBES


def test_split_keeps_level0_through_socket_overflow(lab):
    set_split(lab, False)
    without = probe_loss(lab)
    set_split(lab, True)
    # The bridge refreshes the status column every few seconds.
    wait_until(lambda: "active" in lab.sb.vsctl(
        "get", "interface", lab.cli.port, "status"), 20,
        "panda_rx_split in the status")
    with_split = probe_loss(lab)
    print("level-0 loss: %.1f%% one socket (userspace priority), %.1f%% "
          "with the kernel split" % (100 * without, 100 * with_split))
    # The flood overflows the one socket's queue: else the run proves
    # nothing about the split.
    assert without >= 0.2, "only %.0f%% lost without the split" % (
        100 * without)
    assert with_split <= 0.05, "%.1f%% lost with the split" % (
        100 * with_split)


def test_removing_the_key_returns_to_one_socket(lab):
    set_split(lab, True)
    port = lab.cli.port
    lab.sb.vsctl("remove", "interface", port, "other_config",
                 "panda-ingress-priority")
    wait_until(lambda: "%s: receive split by priority removed" % port
               in lab.sb.log(), 20, "the split's removal")

    def status_gone():
        return "panda_rx_split" not in lab.sb.vsctl(
            "get", "interface", port, "status")
    wait_until(status_gone, 20, "the status key's removal")
    # The bridge still forwards: the port reads from one socket again.
    lab.cli.run("ping", "-c", "3", "-i", "0.2", "-W", "2", lab.srv.ip)
