"""The controller against sandboxed bridges: OVS (pandalab.sandbox) with N
bridges set up as the operator recipe says (controller, fail_mode=secure,
OpenFlow 1.3), the controller's files in a directory, the controller
process in the switch namespace (through its launcher, as an operator runs
it) and its REST interface.  Used by the controller's system test and its
benchmark (bench/bench-controller.py), and by the Mininet front end
(pandalab.mininet.testbed, --controller) on its own sandbox.

Every wait is for a condition (the controller's REST status), with a
timeout only as a safety net.
"""

import json
import os
import re
import signal
import subprocess

from pandaovs import paths
from .lab import LabError, wait_until
from .sandbox import OvsSandbox

LAUNCHER = os.path.join(paths.TOP, "openflow", "controller",
                        "panda_controller.py")
OF_PORT = 6653
REST_PORT = 8181
COOKIE_MATCH = "cookie=0x50414e4400000000/0xffffffff00000000"


def write_json(path, obj):
    """Writes 'obj' atomically (rename), as an operator's tool should."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.rename(tmp, path)


def parse_flow(line):
    """One line of ovs-ofctl dump-flows -> {"raw", "cookie", "table",
    "priority", "n_packets", "panda" (the policy text or None),
    "actions"}."""
    d = {"raw": line.strip()}
    for k in ("cookie", "table", "priority", "n_packets"):
        m = re.search(r"\b%s=([0-9a-fx]+)" % k, line)
        if m:
            d[k] = int(m.group(1), 0)
    d.setdefault("table", 0)
    m = re.search(r"\bpanda\(([^)]*)\)", line)
    d["panda"] = m.group(1) if m else None
    m = re.search(r"actions=(.*)$", line)
    d["actions"] = m.group(1) if m else None
    return d


class ControllerLab:
    """'workdir' holds the configuration (self.config), a policy file
    (self.policy_file) and the controller's log.  'sb': a started sandbox
    whose bridges the caller attaches (attach()) and stops itself (the
    Mininet front end); default a new one with 'bridges', stopped by
    stop()."""

    def __init__(self, workdir, bridges=("br0",), build=None, sb=None):
        self.tmp = str(workdir)
        self.ctl = None
        self.ctl_log = os.path.join(self.tmp, "controller.log")
        self.config = os.path.join(self.tmp, "panda-controller.json")
        self.policy_file = os.path.join(self.tmp, "policy.json")
        self.token_file = os.path.join(self.tmp, "rest-token")
        self.own_sb = sb is None
        self.sb = sb or OvsSandbox(paths.build_dir(build)).start()
        try:
            for br in bridges:
                self.add_bridge(br)
        except BaseException:
            self.stop()
            raise

    def add_bridge(self, br, target="tcp:127.0.0.1:%d" % OF_PORT,
                   settings=()):
        """A bridge as the operator recipe (openflow/controller/
        README.md) sets it up: our controller (at 'target'),
        fail_mode=secure; 'settings' ("column=value" of the Bridge table)
        go into the same transaction as the bridge."""
        self.sb.add_bridge(br, *settings)
        self.attach(br, target)

    def attach(self, br, target="tcp:127.0.0.1:%d" % OF_PORT):
        """Points bridge 'br' at our controller as the recipe says."""
        self.sb.vsctl("set-controller", br, target,
                      "--", "set-fail-mode", br, "secure", "--", "set",
                      "bridge", br, "protocols=OpenFlow10,OpenFlow13")

    # -- the controller ------------------------------------------------------
    def start_controller(self, *extra):
        """Starts the controller; the periodic audit is off unless asked
        for, so that 'last_changes' reflects the event under test."""
        assert self.ctl is None
        if "--audit" not in extra:
            extra += ("--audit", "0")
        if "--listen" not in extra:
            extra += ("--listen", "tcp:127.0.0.1:%d" % OF_PORT)
        self.ctl = self.sb.ns.popen(
            paths.PY, LAUNCHER, "run", "--config", self.config,
            "--rest", "127.0.0.1:%d" % REST_PORT,
            "--rest-token-file", self.token_file, "--poll", "0.3",
            "--log-file", self.ctl_log, *extra,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        return self.ctl

    def kill_controller(self, sig=signal.SIGKILL):
        os.kill(self.ctl.pid, sig)
        self.ctl.wait(timeout=60)
        self.ctl = None

    def rest(self, command="status", check=True):
        """'panda_controller.py status|sync' -> (exit status, JSON body)."""
        res = subprocess.run(
            self.sb.ns.cmd(paths.PY, LAUNCHER, command, "--rest",
                           "127.0.0.1:%d" % REST_PORT,
                           "--rest-token-file", self.token_file),
            capture_output=True, text=True, timeout=300)
        # Unreachable: a failure with nothing on stdout (an HTTP error
        # answer writes its JSON body).
        if check and res.returncode and not res.stdout.strip():
            raise LabError("REST unreachable: %s\n%s"
                           % (res.stderr, self.log()))
        try:
            body = json.loads(res.stdout)
        except ValueError:
            body = None
        return res.returncode, body

    def status(self):
        rc, body = self.rest("status", check=False)
        return body if rc == 0 else None

    def wait_synced(self, n_switches=1, generation=None, timeout=60):
        """Until 'n_switches' bridges are connected and synced to
        'generation' (default: the current one); returns the status."""
        def ok():
            st = self.status()
            if not st:
                return None
            sw = [s for s in st["switches"] if s["connected"]]
            if len(sw) != n_switches:
                return None
            gen = generation or st["config"]["generation"]
            if all(s["state"] == "synced" and s["synced_generation"] == gen
                   for s in sw):
                return st
            return None
        try:
            return wait_until(ok, timeout, "the controller to sync")
        except LabError as e:
            raise LabError("%s\nstatus: %s\nlog:\n%s"
                           % (e, self.status(), self.log()))

    def log(self):
        try:
            with open(self.ctl_log) as f:
                return f.read()
        except OSError:
            return ""

    # -- the switch ----------------------------------------------------------
    def our_flows(self, br="br0"):
        """The controller's flows (its cookie prefix), parsed."""
        out = self.sb.ofctl("-O", "OpenFlow13", "dump-flows", br,
                            COOKIE_MATCH)
        return [parse_flow(l) for l in out.splitlines() if "cookie=" in l]

    def flows(self, br="br0"):
        """The controller's flows with a panda action."""
        return [f for f in self.our_flows(br) if f["panda"]]

    def all_flows(self, br="br0"):
        out = self.sb.ofctl("-O", "OpenFlow13", "dump-flows", br)
        return [parse_flow(l) for l in out.splitlines() if "cookie=" in l]

    def stop(self):
        if self.ctl is not None:
            try:
                self.kill_controller()
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.own_sb:
            self.sb.stop()
