"""The testbed's port types (testbed/run.py --ports afxdp|dpdk): the
testbed's switch ports become AF_XDP ports, or DPDK ports on net_af_packet
vdevs, served by one PMD thread, on the CPU and with the pmd-maxsleep
asked for, and the panda-sched egress on PM1's port sends what they
receive; what result.json records about them is what OVS reports.
Skipped with the reason when OVS was built without AF_XDP or the kernel
cannot attach XDP to a veth; the DPDK test when there is no DPDK build
($PANDA_DPDK_BUILD_DIR, default <repo>/_build-dpdk) or no hugepages.
About 15 seconds each.  Needs root and a build tree ($PANDA_BUILD_DIR,
default <repo>/_build)."""

import os
import re

import pytest

from pandaovs import paths
from pandalab.lab import PortConfig, dpdk_unavailable
from pandalab.testbed.schemes import QosConfig
from pandalab.testbed import topology

BUILD = paths.build_dir()

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network "
                       "namespaces and OVS)"),
]
NO_BUILD = not os.access(os.path.join(
    BUILD, "ovs/build/vswitchd/ovs-vswitchd"), os.X_OK)

QOS = QosConfig("panda-sched", 50000000, 8, 50, 30000, 50)


def pmd_received(tb):
    """{pmd thread or "main thread": packets received}."""
    out = tb.sb.appctl("dpif-netdev/pmd-stats-show")
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^(pmd thread[^:]*|main thread):\n(?:.*\n)*?\s+packets received: "
        r"(\d+)", out, re.M)}


@pytest.mark.parametrize("kind", ["afxdp", "dpdk"])
def test_pmd_ports_served_by_one_pmd(kind):
    ports = PortConfig(kind, pmd_cpu_mask="0x1", pmd_maxsleep_us=50)
    build = BUILD
    if kind == "dpdk":
        # The DPDK build ($PANDA_DPDK_BUILD_DIR), not the default one.
        build = paths.dpdk_build_dir()
        why = dpdk_unavailable(paths.BuildTree(build))
        if why:
            pytest.skip(why)
    elif NO_BUILD:
        pytest.skip("no OVS build in %s (set PANDA_BUILD_DIR)" % BUILD)
    try:
        tb = topology.Testbed(build, QOS, ports=ports).start()
    except topology.TestbedError as e:
        if "AF_XDP" in str(e) or "need hugepages" in str(e):
            pytest.skip(str(e))
        raise
    try:
        state = tb.port_state()
        assert (state["type"], state["pmd_cpu_mask"],
                state["pmd_maxsleep_us"]) == (kind, "0x1", 50)
        assert set(state["ports"]) == {tb.pm1.port, tb.pm2.port}
        for port, st in state["ports"].items():
            assert st == {"type": kind, "xdp": kind == "afxdp"}, (port, st)
        if kind == "dpdk":
            assert state["dpdk_version"], state
            assert state["hugepages"]["megabytes"] == 128, state
        # One PMD thread, on CPU 0 as the mask asks, polls both ports.
        threads = re.findall(r"pmd thread numa_id \d+ core_id (\d+):",
                             state["pmd_rxq"])
        assert threads == ["0"], state["pmd_rxq"]
        for port in (tb.pm1.port, tb.pm2.port):
            assert "port: %s " % port in state["pmd_rxq"]
        assert tb.sb.vsctl("get", "Open_vSwitch", ".",
                           "other_config:pmd-maxsleep").strip() == '"50"'

        sent0 = tb.sched_show(tb.pm1.port)["levels"][0]["sent_p"]
        rx0 = pmd_received(tb)
        tb.pm1.run("ping", "-c", "20", "-i", "0.05", "-W", "5", tb.pm2.ip)
        # The PMD thread received the 40 packets of the pings; the main
        # thread at most what br0's own (tap) port sent meanwhile.  The
        # egress scheduler on PM1's port sent the 20 replies from PM2.
        rx = {k: v - rx0.get(k, 0) for k, v in pmd_received(tb).items()}
        assert sum(v for k, v in rx.items() if k != "main thread") >= 40, rx
        assert rx.get("main thread", 0) < 20, rx
        sent = tb.sched_show(tb.pm1.port)["levels"][0]["sent_p"] - sent0
        assert sent >= 20, sent
        cpu = tb.thread_cpu()
        assert [k for k in cpu if k.startswith("pmd")], cpu
    finally:
        tb.stop()


@pytest.mark.skipif(NO_BUILD, reason="no OVS build in %s (set "
                    "PANDA_BUILD_DIR)" % BUILD)
def test_bad_port_config_refused():
    bad = PortConfig("afxdp", pmd_maxsleep_us=20000)
    with pytest.raises(topology.TestbedError, match="pmd-maxsleep 20000 us"):
        topology.Testbed(BUILD, QOS, ports=bad)
