"""The BPF DCTCP (bpf/panda-dctcp.bpf.c, loaded by bpf/panda-cc through
pandalab.cc) on this kernel:

  - it registers, shows in net.ipv4.tcp_available_congestion_control, a
    socket can choose it, a second load is a no-op, and it unregisters
    cleanly (unless another session or an operator is using it: then the
    test says so and leaves it);
  - it reacts to CE as DCTCP, on a real connection through panda-sched's
    port ECN: one long flow through a port shaped to RATE with an ECN
    threshold of K bytes.  Each ECE-driven reduction must cut the window
    by about alpha/2 (factor 1 - alpha/2, well above Reno's 0.5), as the
    sender's own TCP_INFO shows (ssthresh taken against the window just
    before the reduction, and the window the reduction ends at), and
    alpha must follow the fraction of CE-echoed deliveries the kernel
    counts.  The receiver's CE state machine must have run (state flips
    answered with immediate ACKs).

Skips, with the reason, where the BPF programs are not built or the kernel
has no BPF struct_ops for tcp_congestion_ops.  Needs root.
"""

import json
import os
import socket
import subprocess

import pytest

from pandaovs import paths
from pandalab import cc
from pandalab.lab import Lab

BUILD = paths.BuildTree()
FLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "cc_flow.py")

RATE = 50000000                 # The testbed's 1g-profile rate.
# Port ECN threshold: 30 frames, so that the flow's window (about K plus
# the bandwidth-delay product, some 30 segments) is large enough for the
# cut, cwnd * alpha / 2 rounded down to whole segments as in the kernel's
# DCTCP, to follow alpha (at 10 segments it is mostly 0 or 1).
K = 45000
FLOW_S = 5
PORT = 5300
CONDITIONS = ("panda-sched %d Mbit/s, one level, ECN threshold %d B; one "
              "flow; hosts: tx checksum, TSO, GSO, GRO off; kernel %s"
              % (RATE // 1000000, K, os.uname().release))


def struct_ops_unavailable():
    """None if this kernel can register a BPF tcp_congestion_ops, else
    why not (checked in the kernel's BTF, where the struct_ops value type
    of tcp_congestion_ops exists only if the kernel supports it)."""
    try:
        with open("/sys/kernel/btf/vmlinux", "rb") as f:
            btf = f.read()
    except OSError as e:
        return "no kernel BTF (%s): BPF struct_ops needs it" % e
    if b"bpf_struct_ops_tcp_congestion_ops" not in btf:
        return ("the kernel has no BPF struct_ops for tcp_congestion_ops "
                "(no bpf_struct_ops_tcp_congestion_ops in its BTF)")
    return None


@pytest.fixture(scope="module")
def loader():
    if os.geteuid() != 0:
        pytest.skip("needs root (BPF, network namespaces)")
    why = BUILD.bpf_missing() or struct_ops_unavailable()
    if why:
        pytest.skip(why)
    return cc.Loader(BUILD)


def test_load_register_unload(loader):
    users = cc._Users(cc.BPF_DCTCP)
    registered = users.enter(loader)
    try:
        # The registration outlived panda-cc's process.
        assert cc.BPF_DCTCP in cc.available()
        assert loader.loaded()
        assert cc.resolve("dctcp").algorithm in ("dctcp", cc.BPF_DCTCP)
        # A socket can choose it by name (root may choose any registered
        # algorithm).
        s = socket.socket()
        try:
            s.setsockopt(socket.IPPROTO_TCP, 13, cc.BPF_DCTCP.encode())
            assert s.getsockopt(socket.IPPROTO_TCP, 13, 16).rstrip(
                b"\0").decode() == cc.BPF_DCTCP
        finally:
            s.close()
        # Loading again changes nothing.
        assert loader.load() is False
        assert cc.available().count(cc.BPF_DCTCP) == 1
        stats = loader.stats()
        assert stats["loaded"] and stats["stats_map_id"] > 0
    finally:
        unregistered = users.leave(loader)
    if not registered:
        print("\n%s was registered before this test (another session or "
              "an operator): left registered, unload not tested"
              % cc.BPF_DCTCP)
        return
    assert unregistered
    assert cc.BPF_DCTCP not in cc.available()
    res = subprocess.run([loader.program, "status"], capture_output=True,
                         text=True)
    assert res.returncode == 3 and "not loaded" in res.stdout, res
    # Unloading what is not loaded is not an error.
    loader.unload()


def reductions(samples):
    """The ECE-driven reductions in TCP_INFO samples [t, ca_state, cwnd,
    ssthresh, ...]: entries into CWR (ca_state 2) from Open/Disorder, each
    (cwnd before, ssthresh set, cwnd when the reduction ended: the first
    sample back in Open/Disorder)."""
    out = []
    cur = None
    for prev, s in zip(samples, samples[1:]):
        if prev[1] < 2 and s[1] == 2:
            cur = [prev[2], s[3], None]
        elif cur and s[1] < 2:
            cur[2] = s[2]
            out.append(tuple(cur))
            cur = None
        elif s[1] > 2:
            cur = None          # Recovery or loss: not a CE reaction.
    return out


def test_reacts_to_ce_by_alpha(loader):
    with Lab(BUILD.root, [("snd", "10.0.0.1"), ("rcv", "10.0.0.2")],
             static_arp=True) as lab, \
            cc.session("dctcp", build=BUILD) as impl:
        for h in lab.hosts:
            h.run("ip", "route", "replace", "10.0.0.0/24", "dev", "eth0",
                  "congctl", impl.algorithm, "features", "ecn")
        lab.shape(lab.rcv.port, RATE, 1, qos_type="panda-sched",
                  sched=[("ecn-threshold", K)])
        sink = lab.spawn("sink", lab.rcv, paths.PY, FLOW, "sink", "--bind",
                         lab.rcv.ip, "--port", PORT)
        lab.wait_listen(lab.rcv, PORT, sink)
        snd_ns = int(lab.snd.run(*cc.NETNS_COOKIE_CMD))
        rcv_ns = int(lab.rcv.run(*cc.NETNS_COOKIE_CMD))
        before = loader.stats()["netns"]
        out = lab.snd.run(paths.PY, FLOW, "send", lab.rcv.ip, PORT,
                          "--seconds", FLOW_S, timeout=FLOW_S + 60)
        after = loader.stats()["netns"]
        level = lab.sched_show(lab.rcv.port)["levels"][0]
    flow = json.loads(out)
    snd = cc.reaction(before.get(snd_ns, {}), after.get(snd_ns, {}))
    rcv = cc.reaction(before.get(rcv_ns, {}), after.get(rcv_ns, {}))
    samples = flow["samples"]
    events = reductions(samples)
    obs = [ss / c for c, ss, _ in events if c]
    ended = [e / c for c, _, e in events if c and e]
    first, last = samples[len(samples) // 3], samples[-1]
    ce_fraction = ((last[6] - first[6]) / (last[5] - first[5])
                   if last[5] > first[5] else 0)
    print("\n%s\n%s: %d reductions (BPF), mean factor %.3f, mean alpha "
          "%.3f, mean cwnd before %.1f; TCP_INFO: %d reductions seen, mean "
          "ssthresh/cwnd %.3f, mean cwnd after/before %.3f; CE-echoed "
          "fraction of deliveries (last 2/3) %.3f; switch: %d CE marks, %d "
          "drops; receiver: %d CE state flips, %d delayed ACKs flushed; "
          "sender: %d recoveries, %d timeouts"
          % (CONDITIONS, impl.label, snd["reductions"],
             snd["mean_reduction_factor"] or 0, snd["mean_alpha"] or 0,
             snd["mean_cwnd_before"] or 0, len(obs),
             sum(obs) / len(obs) if obs else 0,
             sum(ended) / len(ended) if ended else 0, ce_fraction,
             level["mark-ecn"], level["drop-limit"],
             rcv["counters"]["ce_changes"], rcv["counters"]["delayed_acks"],
             snd["counters"]["recoveries"], snd["counters"]["timeouts"]))
    assert flow["cc"] == impl.algorithm
    # Marks, not losses, made the reductions.
    assert level["mark-ecn"] > 0 and level["drop-limit"] == 0, level
    assert snd["counters"]["recoveries"] == 0, snd
    # Alpha is updated once per window of data, and a reduction happens in
    # at most one window of each (many windows carry no mark at all).
    assert snd["reductions"] >= 20, snd
    assert snd["counters"]["windows"] > snd["reductions"], snd
    assert 0 < snd["counters"]["marked_windows"] <= snd["counters"][
        "windows"], snd
    # Each reduction cuts cwnd * alpha / 2, rounded down to segments: the
    # mean factor is 1 - alpha/2 up to one segment of the window before,
    # and far from Reno's halving (0.5) or CUBIC's 0.7.
    alpha, factor = snd["mean_alpha"], snd["mean_reduction_factor"]
    assert 0 < alpha < 1, snd
    assert factor > 0.75, snd
    assert 1 - alpha / 2 - 0.01 <= factor <= \
        1 - alpha / 2 + 1.0 / snd["mean_cwnd_before"] + 0.01, snd
    # The sender's own TCP_INFO shows the same cuts: ssthresh against the
    # window sampled just before the reduction, and the window the
    # reduction ended at (the sampler misses reductions shorter than its
    # stalls on a busy machine, so it sees a part of them).
    assert len(obs) >= 10, events
    assert abs(sum(obs) / len(obs) - factor) < 0.05, (obs, snd)
    assert abs(sum(ended) / len(ended) - factor) < 0.05, (ended, snd)
    # Alpha estimates the fraction of CE-echoed deliveries, which the
    # kernel counts independently (tcpi_delivered_ce).
    assert 0 < ce_fraction < 1
    assert abs(alpha - ce_fraction) < 0.5 * ce_fraction + 0.05, (
        alpha, ce_fraction)
    # The receiver's CE state machine ran: every flip of the CE state of
    # arriving data was answered at once.
    assert rcv["counters"]["ce_changes"] > 0, rcv
