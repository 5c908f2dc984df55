"""The Mininet front end (pandalab.mininet) on its smallest
topology, the dumbbell with one host per side:

    pm2 -- s1 ==(s1-eth1, shaped)==> s2 -- pm1

* Mininet builds it with the build tree's OVS inside a private network
  namespace: two netdev bridges, fail_mode=secure, every switch port with
  panda-sched (K levels);
* pm2 and pm1 reach each other (static forwarding, table 1);
* with the project's controller attached (the second run), the same, the
  panda rule being the controller's;
* a known flow is marked and queued as the policy says, at both switches:
  200 KB from pm2 to pm1 under 'kind=pias,thresholds=10000,dscp=10/20,
  queues=0/1' leaves s1 (panda action at the host-facing ingress) with
  DSCP 10 while the connection has sent at most 10000 bytes and DSCP 20
  after (seen at pm1, packet by packet), and s2, which has no panda
  action, puts exactly the DSCP-20 packets in queue 1 of its port towards
  pm1 (panda-sched's level counters): the fabric schedules by DSCP;
* an OVS elsewhere on the machine (another sandbox with a bridge of the
  same name, s1) keeps its bridge: Mininet never talks to it;
* stop() leaves nothing behind: the sandbox's namespace, its OVS daemons,
  every Mininet shell (hosts and switches) and its temporary directory
  are gone, and no switch interface is left in the test's namespace.

Needs root, Debian's mininet (skipped with the reason if it does not
import) and a build tree ($PANDA_BUILD_DIR, default <repo>/_build).
About 25 seconds (two topologies, ~12 s each).
"""

import os
import re
import subprocess

import pytest

from pandaovs import paths
from pandalab.lab import LabError, wait_until
from pandalab.mininet import net
from pandaovs.policy import Policy
from pandalab.sandbox import OvsSandbox, end_process, run
from pandalab.testbed import pcap
from pandalab.testbed.schemes import QosConfig
from pandalab.testbed.trial import tcpdump

BUILD = paths.build_dir()
NEEDED = ("ovs/build/vswitchd/ovs-vswitchd", "ovs/build/ovsdb/ovsdb-server",
          "ovs/build/utilities/ovs-vsctl")
PORT = 5599
SIZE = 200000
THRESHOLD = 10000
POLICY = Policy.from_text("id=42,kind=pias,thresholds=%d,dscp=10/20,"
                          "queues=0/1" % THRESHOLD)

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root "
                       "(network namespaces, OVS)"),
    pytest.mark.skipif(net.available() is not None,
                       reason=str(net.available())),
    pytest.mark.skipif(
        not all(os.access(os.path.join(BUILD, n), os.X_OK) for n in NEEDED),
        reason="no OVS build in %s (set PANDA_BUILD_DIR)" % BUILD),
]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def link_names():
    out = run("ip", "-o", "link", "show")
    return set(re.findall(r"^\d+: ([^:@]+)", out, re.M))


@pytest.fixture
def other_ovs():
    """Another OVS on the machine, with a bridge called like Mininet's."""
    sb = OvsSandbox(BUILD).start()
    try:
        sb.add_bridge("s1")
        yield sb
    finally:
        sb.stop()


def level_sent(tb, port):
    return [lv.get("sent_p", 0) for lv in tb.sched_show(port)["levels"]]


@pytest.mark.parametrize("controller", [False, True],
                         ids=["ofctl", "controller"])
def test_dumbbell(other_ovs, tmp_path, controller):
    from pandalab.mininet.testbed import MininetTestbed
    from pandalab.mininet.topo import Dumbbell
    # A buffer larger than the transfer: nothing is dropped between the
    # panda action and the capture, so the capture sees every packet the
    # action counted, in its order.
    qos = QosConfig(type="panda-sched", rate_bps=100 * 10**6, levels=8,
                    queue_pkts=1000, ecn_threshold=0, guard_permille=0)
    topo = Dumbbell()
    links_before = link_names()
    tb = MininetTestbed(BUILD, qos, topo, controller=controller)
    procs = []
    try:
        tb.start_network()
        sb = tb.sb
        ns, tmpdir = sb.ns.name, sb.dir
        pids = list(sb.pids) + [n.pid for n in sb.net.hosts + sb.net.switches]
        if controller:
            pids.append(tb.ctl.ctl.pid)
        assert all(alive(p) for p in pids)
        assert ns in run("ip", "netns", "list")

        # The bridges, in the sandbox's OVS.
        assert sorted(sb.vsctl("list-br").split()) == ["s1", "s2"]
        for br in ("s1", "s2"):
            assert sb.vsctl("get", "Bridge", br, "datapath_type").strip() \
                == "netdev"
            assert sb.vsctl("get", "Bridge", br, "fail_mode").strip() \
                == "secure"
        tb.set_scheme("pias", POLICY)
        for port in ("s1-eth1", "s1-eth2", "s2-eth1", "s2-eth2"):
            assert tb.qos_status(port).get("state") == "active", port
            assert len(tb.sched_show(port)["levels"]) == 8
        assert tb.bottleneck == "s1-eth1"
        rates = {}
        for port in ("s1-eth1", "s2-eth2"):
            qos_uuid = sb.vsctl("get", "Port", port, "qos").strip()
            rates[port] = int(sb.vsctl("get", "QoS", qos_uuid,
                                       "other_config:max-rate").strip('"\n'))
        assert rates == {"s1-eth1": 10**8, "s2-eth2": 10**9}

        for a, b in ((tb.pm2, tb.pm1), (tb.pm1, tb.pm2)):
            a.run("ping", "-c", "2", "-i", "0.2", "-W", "5", b.ip)

        before = {p: level_sent(tb, p) for p in ("s1-eth1", "s2-eth2")}
        cap_path = str(tmp_path / "pm1.pcap")
        cap = tcpdump(tb.pm1, cap_path, "tcp and src host %s and dst port %d"
                      % (tb.pm2.ip, PORT), snaplen=80)
        procs.append(cap)
        srv = tb.pm1.popen("nc", "-l", str(PORT),
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        procs.append(srv)
        tb.wait_listen(tb.pm1, PORT, srv)
        tb.pm2.run("sh", "-c", "head -c %d /dev/zero | nc -N %s %d"
                   % (SIZE, tb.pm1.ip, PORT), timeout=120)
        srv.wait(timeout=60)

        # The connection's last packets (pm2's ACK of pm1's FIN) may still
        # be on their way through the switches and into the capture when
        # both programs have exited: wait until the counters and the
        # capture agree (or stop changing: then the assertions below say
        # how they differ).
        def snapshot():
            return ({p: level_sent(tb, p) for p in ("s1-eth1", "s2-eth2")},
                    [p for p in pcap.tcp_packets(cap_path)
                     if p["dport"] == PORT])
        last = [None]

        def settled():
            after, packets = snapshot()
            n20 = sum(1 for p in packets if p["dscp"] == 20)
            if all(after[p][1] - before[p][1] == n20 for p in after):
                return after, packets
            last[0] = (after, packets)
            return None
        try:
            after, packets = wait_until(settled, 10, "the capture")
        except LabError:
            after, packets = last[0]
        end_process(cap, sig=2)
        data = [p for p in packets if p["payload"] > 0]
        assert sum(p["payload"] for p in data) >= SIZE
        sent = 0
        for i, p in enumerate(data):
            sent += p["payload"]
            want = 10 if sent <= THRESHOLD else 20
            assert p["dscp"] == want, (
                "data packet %d (%d bytes sent with it): DSCP %d, want %d"
                % (i, sent, p["dscp"], want))
        # Every packet of the connection, pure ACKs too (they take the
        # connection's level without moving its counter).
        n20 = sum(1 for p in packets if p["dscp"] == 20)
        n10 = sum(1 for p in packets if p["dscp"] == 10)
        assert n10 + n20 == len(packets)
        assert n20 > 0 and n10 > 0
        delta = {port: [a - b for a, b in zip(after[port], before[port])]
                 for port in after}
        # Queue 1 of both ports carried exactly the DSCP-20 packets; at s2
        # only its DSCP -> queue flows put them there.
        for port in ("s1-eth1", "s2-eth2"):
            assert delta[port][1] == n20, (port, delta[port])
            assert delta[port][0] >= n10, (port, delta[port])
            assert not any(delta[port][2:]), (port, delta[port])
        # Who installed the panda rule: the controller (its cookie) or
        # ovs-ofctl (cookie 0).
        panda = [line for line in tb.ofctl("dump-flows", "s1").splitlines()
                 if "panda(" in line]
        assert len(panda) == 1
        cookie = int(re.search(r"cookie=(0x[0-9a-f]+)", panda[0]).group(1),
                     16)
        assert (cookie >> 32 == 0x50414e44) if controller else cookie == 0
        show = tb.panda_show(POLICY.id)
        assert show[POLICY.id]["packets_per_level"][1] >= n20
    finally:
        for p in procs:
            end_process(p)
        tb.stop()

    # Nothing left: namespace, daemons, Mininet's shells, directory, links.
    assert ns not in run("ip", "netns", "list")
    assert not [p for p in pids if alive(p)]
    assert not os.path.exists(tmpdir)
    leaked = {n for n in link_names() - links_before
              if re.match(r"s[12](-eth\d+)?$", n)}
    assert not leaked
    # The other OVS was not touched.
    assert other_ovs.vsctl("list-br").split() == ["s1"]
