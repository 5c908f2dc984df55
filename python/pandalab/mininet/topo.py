"""The Mininet front end's topologies and their static forwarding.

Two topologies, both Mininet Topo graphs (mininet.topo.Topo) with roles
the experiment needs on top:

  dumbbell    the thesis's dumbbell, as the namespace testbed runs it but
              with the bottleneck between two switches:

                pm2 [h3 h5 ..] -- s1 ==bottleneck==> s2 -- pm1 [h4 h6 ..]

              PM2 (memcached, panda-fg-server) on the left switch, PM1
              (the clients) on the right one; the bottleneck is s1's port
              towards s2.  'hosts' hosts per side (default 1: the
              smallest topology, the one the suite tests).

  leafspine   'leaves' leaf switches, each joined to every one of 'spines'
              spine switches, 'hosts' hosts per leaf.  PM2 on the first
              leaf, PM1 on the last; the bottleneck is the last leaf's
              port towards PM1 (the receiver's downlink, where the
              fabric's traffic to one host converges).  Leaves spread the
              flows over the spines with an OpenFlow select group (one
              hash per connection: ECMP).

Addresses: PM1 is 10.0.0.1 and PM2 10.0.0.2, as on the testbed (the
experiment code addresses them so), the other hosts 10.0.0.3 and up, all
in 10.0.0.0/24.  Each host's interface is eth0 (as on the testbed: the
experiment captures and sets routes on eth0); the switch side is
Mininet's '<switch>-eth<port>'.  Datapath ids are explicit (Mininet would
derive them from the digits of the name, and leaf1 and spine1 would
collide).

Forwarding is static and per destination address (no flooding, no
learning, no loops to break): hosts get permanent neighbour entries for
each other, and every switch gets, per host, the port(s) on its shortest
paths to that host (forwarding()).  Where there are several (a leaf
towards a remote host: one uplink per spine), a select group hashes each
connection onto one of them.  The same rules serve every scheme; the
scheme changes only table 0 (pandalab.mininet.testbed).
"""

import collections

from mininet.topo import Topo

SUBNET = "10.0.0.0/24"
PM1_IP = "10.0.0.1"
PM2_IP = "10.0.0.2"


class PandaTopo(Topo):
    """A Topo whose hosts carry their address and whose switches know
    which of their ports face hosts.  Subclasses call add_host/add_switch
    and then set self.pm1, self.pm2 (host names) and self.bottleneck
    ((switch, neighbour): the shaped port is the switch's port towards the
    neighbour)."""

    kind = None

    def build(self, **params):      # Topo's hook; subclasses override
        raise NotImplementedError

    def add_switch(self, name, dpid):
        return self.addSwitch(name, dpid="%016x" % dpid)

    def add_host(self, name, index, switch):
        """Host 'name' with address 10.0.0.'index', linked to 'switch'
        (its eth0)."""
        if not 1 <= index <= 254:
            raise ValueError("too many hosts for %s (at most 254)" % SUBNET)
        self.addHost(name, ip="10.0.0.%d/24" % index)
        self.addLink(name, switch, intfName1="eth0")
        return name

    # -- derived -------------------------------------------------------------
    def ip(self, host):
        return self.nodeInfo(host)["ip"].split("/")[0]

    def neighbours(self, switch):
        """{ofport: neighbour} of 'switch' (Mininet requests these port
        numbers for the interfaces; one link per pair of nodes here)."""
        return {p: peer for p, (peer, _) in self.ports[switch].items()}

    def ofport(self, switch, neighbour):
        """The OpenFlow port of 'switch' towards 'neighbour'."""
        return next(p for p, n in self.neighbours(switch).items()
                    if n == neighbour)

    def intf(self, switch, neighbour):
        return "%s-eth%d" % (switch, self.ofport(switch, neighbour))

    def host_ports(self, switch):
        """{ofport: host} of the ports of 'switch' that face a host."""
        return {p: n for p, n in self.neighbours(switch).items()
                if not self.isSwitch(n)}

    def switch_intfs(self, switch):
        """The names of every data port of 'switch'."""
        return ["%s-eth%d" % (switch, p)
                for p in sorted(self.neighbours(switch))]

    def bottleneck_intf(self):
        return self.intf(*self.bottleneck)

    def forwarding(self):
        """{switch: {host: [ofport, ...]}}: the ports of 'switch' on its
        shortest paths to 'host' (breadth-first from each host; ties
        kept, so a leaf gets one uplink per spine)."""
        out = {s: {} for s in self.switches()}
        for h in self.hosts():
            dist = {h: 0}
            queue = collections.deque([h])
            while queue:
                n = queue.popleft()
                for m in self.g[n]:
                    if m not in dist and self.isSwitch(m):
                        dist[m] = dist[n] + 1
                        queue.append(m)
            for s in self.switches():
                if s not in dist:
                    continue
                out[s][h] = sorted(
                    p for p, n in self.neighbours(s).items()
                    if dist.get(n) == dist[s] - 1)
        return out

    def describe(self):
        """What result.json records about the topology."""
        return {"kind": self.kind,
                "switches": sorted(self.switches()),
                "hosts": {h: self.ip(h) for h in sorted(self.hosts())},
                "links": sorted("%s-%s" % tuple(sorted(link))
                                for link in self.links()),
                "bottleneck": "%s port %d (%s) towards %s" % (
                    self.bottleneck[0], self.ofport(*self.bottleneck),
                    self.bottleneck_intf(), self.bottleneck[1])}


class Dumbbell(PandaTopo):
    kind = "dumbbell"

    def build(self, hosts=1):
        if hosts < 1:
            raise ValueError("dumbbell: at least one host per side")
        left = self.add_switch("s1", 1)
        right = self.add_switch("s2", 2)
        # The inter-switch link first: port 1 on both switches.
        self.addLink(left, right)
        self.pm2 = self.add_host("pm2", 2, left)
        self.pm1 = self.add_host("pm1", 1, right)
        for i in range(1, hosts):
            self.add_host("h%d" % (2 * i + 1), 2 * i + 1, left)
            self.add_host("h%d" % (2 * i + 2), 2 * i + 2, right)
        self.bottleneck = (left, right)


class LeafSpine(PandaTopo):
    kind = "leafspine"

    def build(self, leaves=2, spines=2, hosts=2):
        if leaves < 2 or spines < 1 or hosts < 1:
            raise ValueError("leafspine: at least 2 leaves, 1 spine and 1 "
                             "host per leaf")
        spine_names = [self.add_switch("spine%d" % (j + 1), 0x100 + j + 1)
                       for j in range(spines)]
        leaf_names = [self.add_switch("leaf%d" % (i + 1), i + 1)
                      for i in range(leaves)]
        for leaf in leaf_names:
            for spine in spine_names:
                self.addLink(leaf, spine)
        self.pm2 = self.add_host("pm2", 2, leaf_names[0])
        self.pm1 = self.add_host("pm1", 1, leaf_names[-1])
        index = 3
        for i, leaf in enumerate(leaf_names):
            # PM1 and PM2 count as one of their leaf's hosts.
            for _ in range(hosts - (1 if i in (0, leaves - 1) else 0)):
                self.add_host("h%d" % index, index, leaf)
                index += 1
        self.bottleneck = (leaf_names[-1], self.pm1)


TOPOS = {"dumbbell": Dumbbell, "leafspine": LeafSpine}
