"""OVN (Debian's ovn-central and ovn-host) on the hypervisors of an
overlay.Overlay: the recipe of docs/ovn.md, used by its system test.

    with Overlay(build, tunnel=None) as ov, OvnCentral(ov.hvs[0].sb) as c:
        ctl = [OvnController(hv, c) for hv in ov.hvs]
        c.nbctl("ls-add", "ls0")
        ...

OvnCentral runs what the ovn-central package runs (the northbound and
southbound databases and ovn-northd) with its files in a directory of its
own, in the namespace of the given sandbox; the chassis reach the
southbound database over its Unix socket (a real cloud uses TCP or SSL
between hosts; nothing in this recipe depends on which).  OvnController
runs ovn-host's ovn-controller for one hypervisor, pointed at that
hypervisor's OVS (its database and its br-int's OpenFlow socket).

ovn-controller owns br-int: on every (re)connection to ovs-vswitchd it
deletes every flow, group and meter of the bridge in all tables
(ofctrl's S_CLEAR_FLOWS) and installs its own, so no table or priority of
br-int is safe for anyone else's flows.  The panda flows therefore live on
br-phy (Overlay.add_panda_flows), which OVN does not manage.

Every process is started here and ended by its pid.
"""

import os
import shutil
import tempfile

from .lab import LabError, wait_until
from .sandbox import end_pid, run

OVN_SCHEMA_DIR = "/usr/share/ovn"
BINARIES = ("ovn-controller", "ovn-northd", "ovn-nbctl", "ovn-sbctl",
            "ovn-appctl")


class OvnUnavailable(LabError):
    """OVN is not installed here; the message says what is missing."""


def missing():
    """None if OVN's programs and schemas are installed, else what is
    missing (install-deps.sh installs ovn-central and ovn-host)."""
    lost = [b for b in BINARIES if not shutil.which(b)]
    for schema in ("ovn-nb.ovsschema", "ovn-sb.ovsschema"):
        if not os.path.exists(os.path.join(OVN_SCHEMA_DIR, schema)):
            lost.append(os.path.join(OVN_SCHEMA_DIR, schema))
    if lost:
        return ("OVN not installed (missing %s; Debian packages ovn-central "
                "and ovn-host, see install-deps.sh)" % ", ".join(lost))
    return None


def _daemon(ns, env, rundir, name, *argv, unixctl=True):
    """Starts daemon 'argv' detached in namespace 'ns' with pid, log and
    (if 'unixctl'; ovn-controller has no such option and puts it in
    $OVN_RUNDIR as ovn-controller.PID.ctl) control socket in 'rundir';
    returns its pid."""
    pidfile = os.path.join(rundir, name + ".pid")
    ctl = (["--unixctl=%s" % os.path.join(rundir, name + ".ctl")]
           if unixctl else [])
    run(*ns.cmd(*argv, "--pidfile=%s" % pidfile, "--detach", "--no-chdir",
                "--log-file=%s" % os.path.join(rundir, name + ".log"),
                *ctl, "-vconsole:off"), env=env)
    with open(pidfile) as f:
        return int(f.read().strip())


class OvnCentral:
    """The northbound and southbound databases (the sandbox's
    ovsdb-server, OVN's schemas) and ovn-northd, in the namespace of
    sandbox 'sb'."""

    def __init__(self, sb, keep_dir=False):
        why = missing()
        if why:
            raise OvnUnavailable(why)
        self.sb = sb
        self.keep_dir = keep_dir
        self.dir = tempfile.mkdtemp(prefix="panda-ovn-central-")
        self.env = dict(os.environ, OVN_RUNDIR=self.dir,
                        OVN_LOGDIR=self.dir, OVN_DBDIR=self.dir,
                        OVS_RUNDIR=self.dir, OVS_LOGDIR=self.dir)
        self.pids = {}

    @property
    def nb(self):
        return "unix:%s" % os.path.join(self.dir, "nb.sock")

    @property
    def sb_remote(self):
        return "unix:%s" % os.path.join(self.dir, "sb.sock")

    def start(self):
        try:
            for db in ("nb", "sb"):
                path = os.path.join(self.dir, "ovn%s.db" % db)
                run(self.sb.bin("ovsdb/ovsdb-tool"), "create", path,
                    os.path.join(OVN_SCHEMA_DIR, "ovn-%s.ovsschema" % db))
                self.pids[db] = _daemon(
                    self.sb.ns, self.env, self.dir, "ovsdb-server-%s" % db,
                    self.sb.bin("ovsdb/ovsdb-server"), path,
                    "--remote=punix:%s" % os.path.join(self.dir,
                                                       "%s.sock" % db))
            self.nbctl("--no-wait", "init")
            self.sbctl("init")
            self.pids["northd"] = _daemon(
                self.sb.ns, self.env, self.dir, "ovn-northd", "ovn-northd",
                "--ovnnb-db=%s" % self.nb, "--ovnsb-db=%s" % self.sb_remote)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        for name in ("northd", "sb", "nb"):
            if name in self.pids:
                end_pid(self.pids.pop(name))
        if not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def nbctl(self, *args, timeout=60):
        return run("ovn-nbctl", "--db=%s" % self.nb, "--timeout=%d"
                   % timeout, *args, env=self.env, timeout=timeout + 5)

    def sbctl(self, *args, timeout=60):
        return run("ovn-sbctl", "--db=%s" % self.sb_remote, "--timeout=%d"
                   % timeout, *args, env=self.env, timeout=timeout + 5)


class OvnController:
    """ovn-controller for hypervisor 'hv' (an overlay.Hypervisor), a
    chassis named after it with a Geneve encap at hv.ip, br-int its
    integration bridge."""

    def __init__(self, hv, central, encap="geneve"):
        self.hv = hv
        self.central = central
        self.name = hv.name
        self.encap = encap
        self.env = dict(hv.sb.env, OVN_RUNDIR=hv.sb.dir,
                        OVN_LOGDIR=hv.sb.dir)
        self.pid = None
        hv.sb.vsctl("set", "Open_vSwitch", ".",
                    "external_ids:system-id=%s" % self.name,
                    "external_ids:ovn-remote=%s" % central.sb_remote,
                    "external_ids:ovn-encap-type=%s" % encap,
                    "external_ids:ovn-encap-ip=%s" % hv.ip,
                    "external_ids:ovn-bridge=br-int",
                    "external_ids:ovn-bridge-datapath-type=netdev")

    @property
    def ctl(self):
        return os.path.join(self.hv.sb.dir, "ovn-controller.%d.ctl"
                            % self.pid)

    def start(self):
        self.pid = _daemon(self.hv.sb.ns, self.env, self.hv.sb.dir,
                           "ovn-controller", "ovn-controller",
                           "unix:%s" % os.path.join(self.hv.sb.dir,
                                                    "db.sock"),
                           unixctl=False)
        return self

    def stop(self):
        if self.pid:
            end_pid(self.pid)
            self.pid = None

    def restart(self):
        """Ends ovn-controller and starts it again: the new one reconnects
        to br-int, clears it and installs its flows."""
        self.stop()
        return self.start()

    def appctl(self, *args):
        return run("ovn-appctl", "-t", self.ctl, *args, env=self.env)

    def log(self):
        with open(os.path.join(self.hv.sb.dir, "ovn-controller.log")) as f:
            return f.read()

    def wait_connected(self, timeout=30):
        """Waits until ovn-controller is connected to the southbound
        database and has installed br-int's flows (its first full
        computation done: the tunnel to every other chassis exists)."""
        wait_until(lambda: self.appctl("connection-status").strip()
                   == "connected", timeout,
                   "%s's ovn-controller to connect to the southbound "
                   "database" % self.name)
