"""TCP congestion control for the experiments: which implementation of an
algorithm this kernel runs, and the project's BPF DCTCP, registered for as
long as an experiment needs it.

Kernels built without the tcp_dctcp module (this project's reference
machine among them) can still run DCTCP: bpf/panda-dctcp.bpf.c is DCTCP as
a BPF struct_ops tcp_congestion_ops, registered as "panda_dctcp" by the
loader bpf/panda-cc.  session("dctcp") gives the kernel's dctcp where the
kernel has it, else registers panda_dctcp for the session and unregisters
it at the end (also on errors and interrupts: it is a context manager), and
says which ran:

    with cc.session("dctcp", build=paths.BuildTree()) as impl:
        impl.algorithm      # "dctcp" or "panda_dctcp": for congctl
        impl.label          # "dctcp (kernel)" or "dctcp (bpf)"

Sessions of several processes share one registration: each holds a shared
lock on LOCK_DIR/<name>.lock while it runs, and the last one out
unregisters the algorithm if a session registered it (a marker file says
so; LOCK_DIR/<name>.mutex serialises registering and unregistering).  A
registration made by an operator (panda-cc load, the Ansible roles) has
no marker and is never unregistered here.  A session killed
with SIGKILL leaves its registration and marker behind; the next session
to end unregisters it.

The testbed (pandalab.testbed.runner), the Mininet front end (through the
same runner) and the system tests use this module; Ansible calls panda-cc
itself (ansible/roles/panda_network).
"""

import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
from typing import Optional

from pandaovs import paths

# The name panda-cc registers (bpf/panda-dctcp.h, PDCTCP_NAME): not
# "dctcp", so that it never collides with the kernel's module and every
# record says which implementation ran.
BPF_DCTCP = "panda_dctcp"
# The algorithms that have a BPF implementation here: requested name ->
# registered name.
BPF_IMPLEMENTATIONS = {"dctcp": BPF_DCTCP}

AVAILABLE = "/proc/sys/net/ipv4/tcp_available_congestion_control"
LOCK_DIR = "/run/panda-ovs"
SO_NETNS_COOKIE = 71        # <asm-generic/socket.h>, Linux 5.14


class CcUnavailable(RuntimeError):
    """The algorithm cannot run here; the message says why."""


def available():
    """The algorithms the kernel has registered now."""
    try:
        with open(AVAILABLE) as f:
            return f.read().split()
    except OSError:
        return []


def kernel_unavailable(name):
    """None if the kernel itself runs 'name' (built in, or as a module that
    modprobe loads now), else why not."""
    if name in available():
        return None
    modprobe = shutil.which("modprobe") or "/sbin/modprobe"
    try:
        res = subprocess.run([modprobe, "tcp_%s" % name],
                             capture_output=True, text=True, timeout=30)
        why = "modprobe tcp_%s: %s" % (name, (res.stderr.strip()
                                              or "exit %d" % res.returncode))
    except (OSError, subprocess.TimeoutExpired) as e:
        why = "modprobe tcp_%s: %s" % (name, e)
    avail = available()
    if name in avail:
        return None
    return ("kernel has no %s (tcp_available_congestion_control: %s; %s)"
            % (name, " ".join(avail), why))


@dataclasses.dataclass(frozen=True)
class Implementation:
    """How this machine runs a requested algorithm."""
    requested: str          # "dctcp", "cubic", ...
    algorithm: str          # the registered name: congctl, TCP_CONGESTION
    kind: str               # "kernel" or "bpf"
    bpf: Optional[dict] = None  # kind "bpf": object, sha256, loader, and
                                # whether this session registered it

    @property
    def label(self):
        """"dctcp (bpf)", "cubic (kernel)": what results record."""
        return "%s (%s)" % (self.requested, self.kind)

    def record(self):
        rec = {"requested": self.requested, "algorithm": self.algorithm,
               "implementation": self.kind, "label": self.label}
        if self.bpf:
            rec["bpf"] = dict(self.bpf)
        return rec


def resolve(name):
    """The Implementation of 'name' registered now (the kernel's own first,
    then the BPF one if it is registered), or None.  Nothing is loaded."""
    avail = available()
    if name in avail:
        return Implementation(name, name, "kernel")
    bpf = BPF_IMPLEMENTATIONS.get(name)
    if bpf and bpf in avail:
        return Implementation(name, bpf, "bpf")
    return None


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


class Loader:
    """panda-cc: the build tree's (with its object) when 'build' (a
    paths.BuildTree) is given, else the installed one on PATH (with the
    object where the package put it, panda-cc's default)."""

    def __init__(self, build=None):
        self.object = None
        if build is not None:
            self.missing = build.bpf_missing()
            self.program = build.path(build.BPF_CC_LOADER)
            self.object = build.path(build.BPF_DCTCP)
        else:
            self.program = shutil.which("panda-cc")
            self.missing = None if self.program else (
                "panda-cc is not installed (built when configure finds "
                "clang, bpftool, libbpf and kernel BTF)")

    def _run(self, *args, check=True):
        if self.missing:
            raise CcUnavailable(self.missing)
        try:
            res = subprocess.run([self.program] + list(args),
                                 capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CcUnavailable("%s %s: %s" % (self.program, args[0], e))
        if check and res.returncode != 0:
            raise CcUnavailable((res.stderr or res.stdout).strip()
                                or "%s %s: exit %d" % (
                                    self.program, args[0], res.returncode))
        return res

    def loaded(self):
        """Is panda_dctcp registered (by anyone)?"""
        return self._run("status", check=False).returncode == 0

    def load(self):
        """Registers it; True if this call did, False if it was already."""
        args = ["load"] + (["--object", self.object] if self.object else [])
        out = self._run(*args).stdout
        return "already loaded" not in out

    def unload(self):
        self._run("unload")

    def stats(self, netns_cookie=None):
        """panda-cc stats: {"loaded", "netns": {cookie: {counter: n}}};
        with 'netns_cookie', that namespace's counters only ({} if it has
        none yet)."""
        args = ["stats"]
        if netns_cookie is not None:
            args += ["--netns-cookie", str(netns_cookie)]
        doc = json.loads(self._run(*args).stdout)
        doc["netns"] = {int(k): v for k, v in doc["netns"].items()}
        return doc

    def record(self):
        rec = {"loader": self.program, "object": self.object
               or "panda-cc's default (the installed object)"}
        if self.object and os.path.isfile(self.object):
            rec["object_sha256"] = _sha256(self.object)
        return rec


class _Users:
    """The sessions that use a BPF algorithm at once, across processes:
    each holds a shared flock on LOCK_DIR/<name>.lock for its duration;
    registering and unregistering happen under an exclusive flock on
    LOCK_DIR/<name>.mutex; the marker file says that a session registered
    the algorithm (so the last one out unregisters it)."""

    def __init__(self, name):
        self.lock = os.path.join(LOCK_DIR, name + ".lock")
        self.mutex = os.path.join(LOCK_DIR, name + ".mutex")
        self.marker = os.path.join(LOCK_DIR, name + ".session-loaded")
        self.fd = None

    @contextlib.contextmanager
    def _exclusive(self):
        os.makedirs(LOCK_DIR, exist_ok=True)
        fd = os.open(self.mutex, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)      # Held for a panda-cc call.
            yield
        finally:
            os.close(fd)

    def enter(self, loader):
        """Registers the algorithm unless it is; returns whether this call
        registered it.  Counts as a user until leave()."""
        with self._exclusive():
            fd = os.open(self.lock, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)
                registered = False
                if not loader.loaded():
                    registered = loader.load()
                    with open(self.marker, "w") as f:
                        f.write("%d %s\n" % (os.getpid(), time.time()))
            except BaseException:
                os.close(fd)
                raise
            self.fd = fd
        return registered

    def leave(self, loader):
        """Unregisters the algorithm if no other session uses it and a
        session registered it; returns whether this call did."""
        fd, self.fd = self.fd, None
        if fd is None:
            return False
        with self._exclusive():
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as e:
                    if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                        return False    # Another session still uses it.
                    raise
                if not os.path.exists(self.marker):
                    return False        # An operator's registration.
                if loader.loaded():
                    loader.unload()
                os.unlink(self.marker)
                return True
            finally:
                os.close(fd)


@contextlib.contextmanager
def session(name, build=None, log=None):
    """Makes 'name' runnable for the duration of the 'with' block and
    yields its Implementation: the kernel's if the kernel has it, else the
    BPF one registered for the block (BPF_IMPLEMENTATIONS).  Raises
    CcUnavailable, with the kernel's and the BPF side's reasons, if
    neither can run.  'build': the paths.BuildTree whose panda-cc and
    object to use (None: the installed ones); 'log': a print-like callable
    for what it does."""
    log = log or (lambda msg: None)
    why = kernel_unavailable(name)
    if why is None:
        yield Implementation(name, name, "kernel")
        return
    bpf_name = BPF_IMPLEMENTATIONS.get(name)
    if bpf_name is None:
        raise CcUnavailable(why)
    loader = Loader(build)
    if loader.missing:
        raise CcUnavailable("%s; BPF %s: %s" % (why, bpf_name,
                                                loader.missing))
    if os.geteuid() != 0:
        raise CcUnavailable("%s; BPF %s needs root to register" % (
            why, bpf_name))
    users = _Users(bpf_name)
    try:
        registered = users.enter(loader)
    except CcUnavailable as e:
        raise CcUnavailable("%s; BPF %s: %s" % (why, bpf_name, e))
    if bpf_name not in available():
        users.leave(loader)
        raise CcUnavailable("%s; BPF %s: registered, but not in "
                            "tcp_available_congestion_control"
                            % (why, bpf_name))
    log("  %s: the kernel has none; BPF %s %s" % (
        name, bpf_name, "registered for this session" if registered
        else "already registered (left registered at the end)"))
    impl = Implementation(name, bpf_name, "bpf", bpf=dict(
        loader.record(), registered_by_this_session=registered))
    try:
        yield impl
    finally:
        if users.leave(loader):
            log("  %s: BPF %s unregistered" % (name, bpf_name))


# -- what the BPF DCTCP did -------------------------------------------------

def netns_cookie(sock=None):
    """The cookie of the network namespace this process (or socket 'sock')
    is in, as panda-cc stats keys it."""
    s = sock or socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        return int.from_bytes(s.getsockopt(socket.SOL_SOCKET,
                                           SO_NETNS_COOKIE, 8), "little")
    finally:
        if sock is None:
            s.close()


# Prints the cookie of the namespace it runs in (for a host's run()).
NETNS_COOKIE_CMD = (paths.PY, "-c", "import socket; s = socket.socket("
                    "socket.AF_INET, socket.SOCK_DGRAM); print(int.from_"
                    "bytes(s.getsockopt(socket.SOL_SOCKET, %d, 8), "
                    "'little'))" % SO_NETNS_COOKIE)

COUNTERS = ("inits", "fallbacks", "fallback_errors", "windows",
            "marked_windows", "reductions", "reduction_factor_sum",
            "reduction_alpha_sum", "reduction_cwnd_sum", "recoveries",
            "timeouts", "undos", "ce_changes", "delayed_acks")


def reaction(before, after, one=1 << 20):
    """What the BPF DCTCP did in a namespace between two counter snapshots
    (Loader.stats()["netns"][cookie], {} for none yet): every counter's
    difference, and over the ECE-driven reductions the mean factor
    ssthresh/cwnd (DCTCP: 1 - alpha/2; Reno would give 0.5), the mean alpha
    and the mean window before.  'one': the counters' fixed-point 1."""
    d = {k: after.get(k, 0) - before.get(k, 0) for k in COUNTERS}
    n = d["reductions"]
    return {"counters": d, "reductions": n,
            "mean_reduction_factor": d["reduction_factor_sum"] / one / n
            if n else None,
            "mean_alpha": d["reduction_alpha_sum"] / one / n if n else None,
            "mean_cwnd_before": d["reduction_cwnd_sum"] / n if n else None}
