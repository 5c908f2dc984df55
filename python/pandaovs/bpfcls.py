"""The tc eBPF classifier (bpf/panda-cls.bpf.c) from Python.

panda-bpf (bpf/panda-bpf.c) is the one program that loads the classifier,
attaches it and replaces its policy; this module runs it for the testbed
and the tests, reads what it reports ('show --json', 'histogram'), and
gives the queues it needs to an interface with plain tc (the classes OVS's
linux-htb would make: pandaovs.qos.tc_htb_plan()).

    c = Classifier(build, pin_dir="/sys/fs/bpf/panda-test")
    c.attach(["veth0"], netns="ns1", policy_text="id=1,...")
    c.show()["packets"]           # packets per level
    c.set_policy("id=1,...")      # atomic; raises BpfError, policy kept
    c.detach_all()

An instance is its pin directory: tests and testbed runs use their own, so
that they never touch one an operator loaded.
"""

import json
import os
import subprocess

from pandaovs import paths, qos

LOADER = "bpf/panda-bpf"


class BpfError(RuntimeError):
    """panda-bpf failed; the message is its own (stderr)."""

    def __init__(self, msg, returncode=1):
        super().__init__(msg)
        self.returncode = returncode


def missing(build):
    """None if panda-bpf is built in 'build' (a paths.BuildTree), else why
    not: configure's reason (bpf/bpf-status) or that make has not built it
    though configure could."""
    if build.has(LOADER):
        return None
    why = build.bpf_missing()
    if why:
        return why
    return ("%s is missing though configure could build it: run make in %s"
            % (LOADER, build.root))


class Classifier:
    """One instance of the classifier, pinned in 'pin_dir'."""

    def __init__(self, build=None, pin_dir=None, timeout=60):
        self.build = build or paths.BuildTree()
        self.program = self.build.bin(LOADER)
        self.pin_dir = pin_dir
        self.timeout = timeout

    def run(self, *args, netns=None, check=True):
        """Runs panda-bpf with 'args'; returns its stdout.  Raises
        BpfError with its message if it fails (and 'check')."""
        cmd = [self.program]
        if self.pin_dir:
            cmd += ["--pin-dir", self.pin_dir]
        if netns:
            cmd += ["--netns", netns]
        res = subprocess.run(cmd + list(args), capture_output=True,
                             text=True, timeout=self.timeout)
        if check and res.returncode:
            raise BpfError((res.stderr or res.stdout).strip(),
                           res.returncode)
        return res.stdout

    def probe(self):
        """None if this kernel can run the classifier, else why not."""
        res = subprocess.run([self.program, "probe"], capture_output=True,
                             text=True, timeout=self.timeout)
        if res.returncode == 0:
            return None
        return (res.stdout + res.stderr).strip() or "probe failed"

    def attach(self, ifaces, netns=None, policy_text=None, policy_file=None,
               capacity=None, idle_timeout_ms=None, priority=True):
        args = ["attach"] + list(ifaces)
        if policy_text is not None:
            args += ["--policy-text", policy_text]
        if policy_file is not None:
            args += ["--policy", policy_file]
        if capacity is not None:
            args += ["--capacity", str(capacity)]
        if idle_timeout_ms is not None:
            args += ["--idle-timeout", str(idle_timeout_ms)]
        if not priority:
            args.append("--no-priority")
        return self.run(*args, netns=netns)

    def set_policy(self, text=None, path=None):
        if (text is None) == (path is None):
            raise ValueError("give the policy text or a file")
        if text is not None:
            return self.run("set-policy", "--text", text)
        return self.run("set-policy", path)

    def show(self):
        return json.loads(self.run("show", "--json"))

    def histogram(self, pid=None):
        """The text of 'panda-bpf histogram' (ovs-appctl panda/histogram's
        format: pandaovs.sizehist.parse() reads it)."""
        return self.run("histogram", *([str(pid)] if pid is not None
                                       else []))

    def detach(self, ifaces, netns=None):
        return self.run("detach", *ifaces, netns=netns)

    def detach_all(self):
        return self.run("detach", "--all")

    def loaded(self):
        return bool(self.pin_dir and os.path.exists(
            os.path.join(self.pin_dir, "panda_cls")))


def install_htb(dev, rate, levels, netns=None, min_share=0.1, burst=None,
                mtu=1500):
    """Gives 'dev' (in 'netns') OVS linux-htb's classes with plain tc
    (pandaovs.qos.tc_htb_plan()): queue i = class 1:i+1."""
    prefix = ["ip", "netns", "exec", netns] if netns else []
    for cmd in qos.tc_htb_plan(dev, rate, levels, min_share, burst, mtu):
        subprocess.run(prefix + ["tc"] + cmd, check=True,
                       capture_output=True, text=True)


def htb_class_packets(dev, netns=None):
    """{class minor: packets sent + dropped} of the htb classes of 'dev'
    (qos.parse_tc_classes)."""
    prefix = ["ip", "netns", "exec", netns] if netns else []
    out = subprocess.run(prefix + ["tc", "-s", "class", "show", "dev", dev],
                         check=True, capture_output=True, text=True).stdout
    return {int(cid.split(":")[1] or "0", 16): c["packets"] + c["dropped"]
            for cid, c in qos.parse_tc_classes(out).items()}
