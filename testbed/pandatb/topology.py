"""The testbed topology (thesis Fig. 4.4, on one machine).

    PM2 (10.0.0.2)                                   PM1 (10.0.0.1)
    memcached :11211  --eth0==veth--[ br0 (OVS,  ]--veth==eth0--  panda-mc-client
    panda-fg-server :5001           [ netdev DP) ]  ^             panda-fg-client
                                                    |
                                  bottleneck: K-level linux-htb QoS on
                                  the OVS port towards PM1 (tools/panda-qos)

Everything lives in network namespaces made for the run by OvsSandbox
(tests/pylib/ovs_sandbox.py): OVS in its own namespace with run/db/log
directories in a temporary directory, PM1 and PM2 in two more.  Every
process is started by us and ended by its pid; stop() is safe to call
twice and on a half-built testbed.
"""

import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTBED = os.path.dirname(HERE)
TOP = os.path.dirname(TESTBED)
sys.path.insert(0, os.path.join(TOP, "tests", "pylib"))
from ovs_sandbox import OvsSandbox, parse_tc_classes, run  # noqa: E402

PANDA_QOS = os.path.join(TOP, "tools", "panda-qos")
PY = "/usr/bin/python3"

PM1_IP = "10.0.0.1"
PM2_IP = "10.0.0.2"
PM1_OFPORT = 1
PM2_OFPORT = 2
MEMCACHED_PORT = 11211
FG_PORT = 5001


class TestbedError(RuntimeError):
    pass


class Testbed:
    """PM1 and PM2 joined through the patched OVS; the OVS port towards PM1
    is shaped to 'rate_bps' with 'levels' strict-priority queues."""

    def __init__(self, build_dir, rate_bps, levels=8, mtu=1500, cc="cubic",
                 queue_pkts=1000, log=None, keep_dir=False):
        self.build = os.path.abspath(build_dir)
        self.rate_bps = int(rate_bps)
        self.levels = levels
        self.mtu = mtu
        self.cc = cc
        self.queue_pkts = int(queue_pkts)
        self.log = log or (lambda msg: None)
        self.keep_dir = keep_dir
        self.sb = None
        self.pm1 = self.pm2 = None
        self.procs = []             # (name, Popen) we started, ended by pid
        self.scheme = None

    # -- binaries -------------------------------------------------------
    def bin(self, rel):
        path = os.path.join(self.build, rel)
        if not os.access(path, os.X_OK):
            raise TestbedError("%s is not built (run make in %s)"
                               % (path, self.build))
        return path

    # -- lifecycle ------------------------------------------------------
    def start(self):
        self.sb = OvsSandbox(self.build, keep_dir=self.keep_dir)
        try:
            self.sb.start()
            self.sb.add_bridge("br0")
            self.pm1 = self.sb.add_host("pm1", PM1_IP + "/24", mtu=self.mtu,
                                        ofport=PM1_OFPORT)
            self.pm2 = self.sb.add_host("pm2", PM2_IP + "/24", mtu=self.mtu,
                                        ofport=PM2_OFPORT)
            for h in (self.pm1, self.pm2):
                self.set_cc(h)
            # Static forwarding: no learning, no flooding, same path for
            # every scheme.
            self.set_scheme("fifo")
            self.add_qos()
            self.start_servers()
        except BaseException:
            self.stop()
            raise
        return self

    def set_cc(self, host):
        """Congestion control of every connection between PM1 and PM2.
        A namespace may only make an algorithm of
        net.ipv4.tcp_allowed_congestion_control its default (cubic is
        usually not in that list), but a route's congctl attribute is not
        restricted, so the algorithm goes on the subnet route."""
        args = ["ip", "route", "replace", "10.0.0.0/24", "dev", "eth0",
                "congctl", self.cc]
        if self.cc == "dctcp":
            args += ["features", "ecn"]
        host.run(*args)

    def add_qos(self):
        """K-level linux-htb QoS on the port towards PM1 (tools/panda-qos).
        --no-dscp: the panda action writes each level's DSCP itself; a
        Queue DSCP would make OVS rewrite it at output with the DSCP of the
        queue chosen at translation time (queue 0), hiding the level on
        the wire.  The HTB classes get the kernel's default leaf qdisc, a pfifo whose
        limit is the device's txqueuelen when the class is made: that is
        the per-queue buffer, set here first."""
        self.sb.ns.run("ip", "link", "set", self.pm1.port, "txqueuelen",
                       self.queue_pkts)
        env = dict(self.sb.env, PANDA_VSCTL=self.sb.bin(
            "utilities/ovs-vsctl"))
        cmd = self.sb.ns.cmd(PY, PANDA_QOS, "add", self.pm1.port,
                             "--rate", str(self.rate_bps),
                             "--levels", str(self.levels), "--no-dscp")
        res = subprocess.run(cmd, env=env, capture_output=True, text=True,
                             timeout=60)
        if res.returncode:
            raise TestbedError("panda-qos add failed: %s"
                               % (res.stderr.strip() or res.stdout.strip()))
        # OVS applies the QoS asynchronously: wait for the HTB classes.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            classes = self.tc_classes()
            if len(classes) >= self.levels:
                return
            time.sleep(0.2)
        raise TestbedError("the HTB classes did not appear on %s: %s"
                           % (self.pm1.port, self.tc_text("class")))

    def spawn(self, name, host, *cmd, **kw):
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.PIPE)
        p = host.popen(*cmd, **kw)
        self.procs.append((name, p))
        return p

    def start_servers(self):
        self.memcached = self.spawn(
            "memcached", self.pm2, "memcached", "-l", PM2_IP,
            "-p", MEMCACHED_PORT, "-U", "0", "-u", "nobody", "-t", "1",
            "-m", "256", "-c", "1024")
        self.fg_server = self.spawn(
            "panda-fg-server", self.pm2,
            self.bin("load_generator/panda-fg-server"), "--bind", PM2_IP,
            "--port", FG_PORT, "--quiet")
        for port, p in ((MEMCACHED_PORT, self.memcached),
                        (FG_PORT, self.fg_server)):
            self.wait_listen(self.pm2, port, p)

    def wait_listen(self, host, port, proc, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise TestbedError("server for port %d exited: %s"
                                   % (port, proc.stderr.read().strip()))
            if host.run("ss", "-Hltn", "sport", "= :%d" % port).strip():
                return
            time.sleep(0.1)
        raise TestbedError("nothing listens on port %d in %s"
                           % (port, host.name))

    def check_servers(self):
        for name, p in self.procs:
            if p in (self.memcached, self.fg_server) and \
                    p.poll() is not None:
                raise TestbedError("%s exited (status %d)"
                                   % (name, p.returncode))

    def stop(self):
        for name, p in reversed(self.procs):
            end_process(p)
        self.procs = []
        if self.sb:
            self.sb.stop()
            self.sb = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- schemes --------------------------------------------------------
    def set_scheme(self, scheme, action=None):
        """fifo: plain forwarding, everything in queue 0.  pias/panda: the
        panda action with 'action' (lib/panda policy syntax) on TCP from
        PM2 towards PM1, which sets DSCP and queue per level."""
        flows = ["priority=1,in_port=%d,actions=output:%d"
                 % (PM1_OFPORT, PM2_OFPORT),
                 "priority=1,in_port=%d,actions=output:%d"
                 % (PM2_OFPORT, PM1_OFPORT)]
        if scheme in ("pias", "panda"):
            if not action:
                raise TestbedError("scheme %s needs a policy" % scheme)
            flows.append("priority=10,tcp,in_port=%d,actions=panda(%s),"
                         "output:%d" % (PM2_OFPORT, action, PM1_OFPORT))
        elif scheme == "prio":
            # Calibration only: an oracle that puts memcached in the top
            # queue and the web-search flows in the lowest one.
            flows.append("priority=10,tcp,in_port=%d,tp_src=%d,"
                         "actions=set_queue:0,output:%d"
                         % (PM2_OFPORT, MEMCACHED_PORT, PM1_OFPORT))
            flows.append("priority=10,tcp,in_port=%d,tp_src=%d,"
                         "actions=set_queue:%d,output:%d"
                         % (PM2_OFPORT, FG_PORT, self.levels - 1,
                            PM1_OFPORT))
        elif scheme != "fifo":
            raise TestbedError("unknown scheme %r" % scheme)
        self.sb.ofctl("del-flows", "br0")
        self.sb.ofctl("add-flows", "br0", "-",
                      input="\n".join(flows) + "\n")
        if scheme in ("pias", "panda"):
            try:
                self.sb.appctl("panda/flush")
            except RuntimeError:
                pass
        self.scheme = scheme

    def panda_available(self):
        """True if this OVS build has the panda action."""
        try:
            self.sb.appctl("list-commands")
        except RuntimeError:
            return False
        return "panda/show" in self.sb.appctl("list-commands")

    def panda_show(self, policy_id=None):
        args = ["panda/show"] + ([str(policy_id)] if policy_id else [])
        try:
            return self.sb.appctl(*args)
        except RuntimeError as e:
            return "error: %s" % e

    # -- observation ----------------------------------------------------
    def tc_text(self, what="class"):
        return self.sb.ns.run("tc", "-s", what, "show", "dev",
                              self.pm1.port)

    def tc_classes(self):
        return parse_tc_classes(self.tc_text("class"))

    def offload_state(self):
        """ethtool -k of every interface on the data path."""
        out = {}
        for where, ns, dev in (("pm1:eth0", self.pm1, "eth0"),
                               ("pm2:eth0", self.pm2, "eth0"),
                               ("ovs:" + self.pm1.port, self.sb.ns,
                                self.pm1.port),
                               ("ovs:" + self.pm2.port, self.sb.ns,
                                self.pm2.port)):
            text = ns.run("ethtool", "-k", dev, check=False)
            feats = {}
            for line in text.splitlines():
                m = re.match(r"\s*([a-z0-9-]+): (on|off)", line)
                if m and m.group(1) in OFFLOADS:
                    feats[m.group(1)] = m.group(2)
            out[where] = feats
        return out

    def ovs_version(self):
        out = run(self.sb.bin("vswitchd/ovs-vswitchd"), "--version")
        return out.splitlines()[0].strip() if out else "unknown"


OFFLOADS = ("tx-checksumming", "tcp-segmentation-offload",
            "generic-segmentation-offload", "generic-receive-offload",
            "large-receive-offload")


def end_process(p, sig=signal.SIGTERM, timeout=5):
    """Ends a process we started, by its pid."""
    if p.poll() is not None:
        return p.returncode
    try:
        p.send_signal(sig)
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.wait(timeout=5)
    except ProcessLookupError:
        return p.poll()
