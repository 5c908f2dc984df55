"""A small QoS testbed on top of OvsSandbox, shared by
tests/system/test_qos.py and tools/bench-qos.py.

Three hosts on one userspace-datapath bridge:

    cli (10.0.0.1)  request/response client (memcached GETs)
    blk (10.0.0.3)  bulk TCP sender
    srv (10.0.0.2)  memcached and the bulk sink; the switch port towards it
                    is the shaped egress port (QoS made by tools/panda-qos)

OpenFlow: traffic to srv's memcached port goes to queue 'rr_queue', the
bulk flows to queue 'bulk_queue' (set_queue + NORMAL); everything else
NORMAL, i.e. the default queue 0.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ovs_sandbox import OvsSandbox, parse_tc_classes, run  # noqa: E402

TOP = os.path.dirname(os.path.dirname(HERE))
TRAFFIC = os.path.join(HERE, "qos_traffic.py")
PANDA_QOS = os.path.join(TOP, "tools", "panda-qos")
PY = "/usr/bin/python3"

MEMCACHED_PORT = 11211
BULK_PORT = 5001


def default_build_dir():
    return os.environ.get("PANDA_BUILD_DIR",
                          os.path.join(TOP, "_build"))


class QosLab:
    def __init__(self, build_dir=None, tag=None):
        self.build = build_dir or default_build_dir()
        self.sb = OvsSandbox(self.build, tag=tag)
        self.procs = []

    # -- setup ------------------------------------------------------------
    def start(self):
        self.sb.start()
        self.sb.add_bridge("br0")
        self.cli = self.sb.add_host("cli", "10.0.0.1/24")
        self.srv = self.sb.add_host("srv", "10.0.0.2/24")
        self.blk = self.sb.add_host("blk", "10.0.0.3/24")
        # Static neighbours and no IPv6: no ARP or neighbour discovery
        # traffic in the queue counters.
        hosts = (self.cli, self.srv, self.blk)
        for h in hosts:
            for conf in ("all", "default", "eth0"):
                h.run("sysctl", "-qw",
                      "net.ipv6.conf.%s.disable_ipv6=1" % conf, check=False)
        macs = {h: h.run("cat", "/sys/class/net/eth0/address").strip()
                for h in hosts}
        for h in hosts:
            for o in hosts:
                if o is not h:
                    h.run("ip", "neigh", "replace", o.ip, "lladdr", macs[o],
                          "dev", "eth0", "nud", "permanent")
        return self

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        self.sb.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def panda_qos(self, *args):
        """Runs tools/panda-qos in the switch namespace; returns stdout."""
        vsctl = self.sb.bin("utilities/ovs-vsctl")
        return run(*self.sb.ns.cmd(PY, PANDA_QOS, *args, "--vsctl", vsctl),
                   env=self.sb.env)

    def add_queue_flows(self, rr_queue, bulk_queue):
        br = "br0"
        self.sb.ofctl("add-flow", br,
                      "priority=100,tcp,nw_dst=%s,tp_dst=%d,"
                      "actions=set_queue:%d,NORMAL"
                      % (self.srv.ip, MEMCACHED_PORT, rr_queue))
        self.sb.ofctl("add-flow", br,
                      "priority=100,tcp,nw_dst=%s,tp_dst=%d,"
                      "actions=set_queue:%d,NORMAL"
                      % (self.srv.ip, BULK_PORT, bulk_queue))

    # -- observation ------------------------------------------------------
    def tc_classes(self, port=None):
        port = port or self.srv.port
        return parse_tc_classes(self.sb.ns.run("tc", "-s", "class", "show",
                                               "dev", port))

    def tc_qdisc(self, port=None):
        return self.sb.ns.run("tc", "-s", "qdisc", "show", "dev",
                              port or self.srv.port)

    def tx_dropped(self, port=None):
        """The port's tx_dropped, read live (ovs-ofctl dump-ports; the
        database's statistics column lags by up to 5 s)."""
        out = self.sb.ofctl("dump-ports", "br0", port or self.srv.port)
        m = re.search(r"tx pkts=\S+ bytes=\S+ drop=(\d+)", out)
        if not m:
            raise RuntimeError("no tx drop counter in: %s" % out)
        return int(m.group(1))

    @staticmethod
    def nstat(host, counter="TcpRetransSegs"):
        """Absolute value of a SNMP counter in 'host''s namespace (nstat
        -a: absolute, -s: do not touch nstat's history file)."""
        out = host.run("nstat", "-asz", "--json", counter)
        data = json.loads(out)
        for v in data.values():
            if isinstance(v, dict) and counter in v:
                return int(v[counter])
        return int(data.get(counter, 0))

    # -- traffic ----------------------------------------------------------
    def spawn(self, host, *args):
        p = host.popen(PY, TRAFFIC, *args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    def traffic(self, host, *args, timeout=120):
        out = host.run(PY, TRAFFIC, *args, timeout=timeout)
        return json.loads(out.strip().splitlines()[-1])

    def start_memcached(self):
        p = self.srv.popen("memcached", "-U", "0", "-p", MEMCACHED_PORT,
                           "-l", self.srv.ip, "-u", "nobody", "-t", "1",
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        self.procs.append(p)
        self._wait_port(self.srv, MEMCACHED_PORT, p)
        return p

    def start_sink(self, port=BULK_PORT):
        p = self.spawn(self.srv, "sink", "--port", port)
        line = p.stdout.readline()
        if "listening" not in line:
            raise RuntimeError("bulk sink failed: %s" % p.stderr.read())
        return p

    def start_bulk(self, flows, duration, port=BULK_PORT):
        return self.spawn(self.blk, "bulk", self.srv.ip, port,
                          "--flows", flows, "--duration", duration)

    @staticmethod
    def finish(p, timeout=60):
        out, err = p.communicate(timeout=timeout)
        lines = out.strip().splitlines()
        if not lines:
            raise RuntimeError("traffic process failed: %s" % err.strip())
        return json.loads(lines[-1])

    @staticmethod
    def stop_sink(p):
        p.send_signal(signal.SIGINT)
        return QosLab.finish(p)

    def _wait_port(self, host, port, proc, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError("memcached exited: %s"
                                   % proc.stderr.read())
            ss = host.run("ss", "-Hltn", "sport", "= :%d" % port)
            if ss.strip():
                return
            time.sleep(0.1)
        raise RuntimeError("nothing listens on port %d" % port)
