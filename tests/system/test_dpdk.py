"""The panda action and the panda-sched scheduler on DPDK ports (the
ovs-dpdk variant), with OVS built with DPDK (DPDK=1
./build.sh, $PANDA_DPDK_BUILD_DIR, default <repo>/_build-dpdk).

No NIC: every switch port is a netdev-dpdk port on a DPDK net_af_packet
vdev attached to the host's veth (pandalab.lab, PortConfig "dpdk"), with
64 x 2 MB hugepages reserved for the module and given back afterwards, and
one PMD thread on the last CPU (pmd-maxsleep 50 us, so it does not spin a
whole core of the two).  Three hosts: cli sends memcached GETs to srv, srv
fetches bulk flows from blk; both reach srv through srv's switch port,
whose egress is panda-sched.

  - the ports are DPDK ports polled by the one PMD thread;
  - the panda action marks right on them: a 20 MB transfer steps down
    through DSCP 46/26/18/0 in order, memcached requests keep 46, and the
    scheduler's level i sent exactly the packets that srv received with
    level i's DSCP (the action's queue = the level, counted by the
    scheduler, against the DSCP, read from a capture on srv);
  - panda-sched's strict priority: memcached in level 0 beside bulk flows
    queued in level 3 has a median tens of times below the same requests
    in one FIFO level with the bulk flows; and its shaper reaches the rate
    without exceeding it.

Skipped, with the reason, without root, without a DPDK build, or where
hugepages cannot be reserved (pandalab.lab.dpdk_unavailable); DPDK failing
to start or to attach a vdev is reported the same way.  About a minute.
"""

import os
import shutil
import signal
import subprocess

import pytest

from pandaovs import paths
from pandalab import loadgen
from pandalab.lab import (FG_PORT, Lab, PortConfig, PortsUnavailable,
                          dpdk_unavailable, wait_until)
from pandalab.sandbox import end_process

# Helpers of the system tests of the same features on other ports.
from test_panda_action import (DSCP_OF_LEVEL, capture_start,  # noqa: E402
                               check_steps_down, data_dscps, read_packets,
                               received_bytes)
from test_panda_sched import (CONDITIONS, LEVELS, RATE,  # noqa: E402
                              SHAPE_RATE, check_shaping, memcached,
                              memcached_under_bulk, qos_status,
                              reshape_and_measure, set_sched, show)

BUILD = paths.BuildTree(paths.dpdk_build_dir())
WHY = dpdk_unavailable(BUILD) if os.geteuid() == 0 else \
    "needs root (network namespaces, hugepages, OVS)"

pytestmark = [
    pytest.mark.skipif(WHY is not None, reason=str(WHY)),
    pytest.mark.skipif(not shutil.which("tshark")
                       or not shutil.which("tcpdump"),
                       reason="needs tcpdump and tshark"),
]

# As test_panda_action: T below the MSS payload, so full-sized segments
# count and small messages are compensated.
PANDA = ("panda(id=1,threshold=1000,thresholds=100000/1000000/10000000,"
         "dscp=46/26/18/0,queues=0/1/2/3)")
BULK_BYTES = 20 * 1000 * 1000
MC_REQUESTS = 300


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    ports = PortConfig("dpdk", pmd_maxsleep_us=50)
    lab = Lab(BUILD.root, [("cli", "10.0.0.1"), ("srv", "10.0.0.2"),
                           ("blk", "10.0.0.3")], static_arp=True,
              ports=ports)
    try:
        lab.start()
    except PortsUnavailable as e:
        pytest.skip(str(e))
    try:
        for h in lab.hosts:
            # CUBIC on the hosts' route, as test_panda_sched.
            h.run("ip", "route", "replace", "10.0.0.0/24", "dev", "eth0",
                  "congctl", "cubic")
        lab.workdir = str(tmp_path_factory.mktemp("dpdk"))
        os.chmod(lab.workdir, 0o777)
        lab.start_memcached(lab.srv)
        lab.fg_server(lab.blk, FG_PORT)
        yield lab
    finally:
        lab.stop()


def reset_flows(lab, *flows):
    lab.sb.ofctl("del-flows", "br0")
    lab.sb.ofctl("add-flows", "br0", "-",
                 input="\n".join(("priority=0,actions=NORMAL",) + flows)
                 + "\n")


def test_dpdk_ports_one_pmd(lab):
    state = lab.port_state()
    assert state["type"] == "dpdk" and state["dpdk_version"], state
    for port, st in state["ports"].items():
        assert st["type"] == "dpdk", (port, st)
    assert lab.sb.vsctl("get", "Open_vSwitch", ".",
                        "dpdk_initialized").strip() == "true"
    # One PMD thread, on the last CPU, polls every port's queue.
    cores = set(state["pmd_rxq"].split("core_id ")[1:])
    assert len(cores) == 1, state["pmd_rxq"]
    assert state["pmd_rxq"].split("core_id ")[1].split(":")[0] == \
        str(os.cpu_count() - 1), state["pmd_rxq"]
    for h in lab.hosts:
        assert "port: %s " % h.port in state["pmd_rxq"]
    memcached(lab, "dpdk-up", 20)


def test_panda_action_marks_dscp_and_queue(lab, tmp_path):
    set_sched(lab, levels=LEVELS, max_rate=4 * RATE)
    # Everything towards srv: the panda action (DSCP and queue of the
    # connection's level), then NORMAL to srv's port and its scheduler.
    reset_flows(lab, "priority=10,tcp,nw_dst=%s,actions=%s,NORMAL"
                % (lab.srv.ip, PANDA))
    lab.sb.appctl("panda/flush")
    sent0 = [lv["sent_p"] for lv in show(lab)[1]]
    os.chmod(str(tmp_path), 0o777)
    pcap = str(tmp_path / "srv.pcap")
    cap = capture_start(lab.srv, pcap)
    try:
        c = loadgen.start_fg_client(lab.build, lab.blk.ip, FG_PORT,
                                    lab.workdir, host=lab.srv,
                                    tag="dpdk-bulk", size=BULK_BYTES,
                                    requests=1, connections=1, quiet=True)
        assert c.wait(timeout=300) == 0, c.error_tail()
        memcached(lab, "dpdk-panda", MC_REQUESTS)
        # Everything srv's port sent is in the capture (tcpdump -U writes
        # each packet as it comes): wait for the last bulk byte.
        deadline_bytes = BULK_BYTES + MC_REQUESTS * 10
        wait_until(lambda: received_bytes(pcap, lab.srv.ip)
                   >= deadline_bytes, 120, "the capture on srv")
        wait_until(lambda: show(lab)[0]["backlog_p"] == 0, 60,
                   "srv's queue to drain")
    finally:
        end_process(cap, signal.SIGINT)
    sent = [lv["sent_p"] - s0 for lv, s0 in zip(show(lab)[1], sent0)]

    pkts = [p for p in read_packets(pcap) if p[0] != lab.srv.ip]
    check_steps_down(data_dscps(pkts, FG_PORT), "panda bulk on DPDK ports")
    mc = [p[3] for p in pkts if p[0] == lab.cli.ip and p[4] > 0]
    assert len(mc) >= MC_REQUESTS and set(mc) == {46}, sorted(set(mc))
    # Queue = level: level i of the scheduler sent exactly the packets
    # (SYN/FIN included: every IPv4 packet to srv) that arrived with level
    # i's DSCP.
    out = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-e",
                          "ip.src", "-e", "ip.dsfield.dscp", "ip"],
                         capture_output=True, text=True, check=True).stdout
    per_dscp = {}
    for line in out.splitlines():
        src, dscp = line.split("\t")
        if src != lab.srv.ip:
            per_dscp[int(dscp)] = per_dscp.get(int(dscp), 0) + 1
    print("\n%s; DPDK ports (net_af_packet)\nper level: scheduler sent %s,"
          " captured by DSCP %s" % (CONDITIONS, sent, per_dscp))
    assert sent == [per_dscp.get(d, 0) for d in DSCP_OF_LEVEL], \
        (sent, per_dscp)
    assert all(sent), sent


def test_panda_sched_strict_priority_and_shaping(lab):
    reset_flows(lab)
    uuid = set_sched(lab, levels=LEVELS, max_rate=RATE)
    prio, (_, lv) = memcached_under_bulk(lab, 0, LEVELS - 1, "dpdk-prio")
    assert lv[0]["drop-limit"] == 0, lv
    lab.sb.vsctl("set", "qos", uuid, "other_config:per-flow=false")
    wait_until(lambda: "per-flow=false" in qos_status(lab, uuid).get(
        "config", ""), 30, "per-flow=false in effect")
    fifo, _ = memcached_under_bulk(lab, LEVELS - 1, LEVELS - 1, "dpdk-fifo")
    pmd = lab.sb.appctl("dpif-netdev/pmd-stats-show")

    reset_flows(lab)
    ratio, min_backlog = reshape_and_measure(lab, uuid, "per-flow=true")
    print("\n%s; DPDK ports (net_af_packet), one PMD thread\nmemcached "
          "p50/p99 ms under bulk: level 0 %.2f/%.2f, same FIFO level "
          "%.2f/%.2f; shaping to %d Mbit/s: achieved/configured %.4f"
          % (CONDITIONS, prio["p50"], prio["p99"], fifo["p50"], fifo["p99"],
             SHAPE_RATE // 1000000, ratio))
    # The FIFO behind the bulk flows' queue: tens of ms at 50 Mbit/s;
    # strict priority keeps the GETs out of it.
    assert fifo["p50"] > 15, fifo
    assert prio["p50"] * 10 < fifo["p50"], (prio, fifo)
    assert prio["p99"] < fifo["p99"], (prio, fifo)
    # The PMD thread, not the main thread, received the traffic.
    assert "pmd thread" in pmd and "packets received" in pmd, pmd
    check_shaping(ratio, min_backlog)
