"""Where things are: the installed package's files, or the source tree and
the build tree, and the Python that runs the package.  The one place that
knows the layout (tests, the testbed, the benchmarks and the launchers all
ask here).

Installed ('make install', the Debian packages): 'make install' writes
pandaovs/install_paths.py (from python/install_paths.py.in) with the
directories configure chose, so the programs, the policy library and the
CDFs are found where the packages put them, with no checkout.  From a
checkout (no install_paths module) they are in the build tree and the
source tree.

The build tree is the one ./build.sh makes (default <repo>/_build), or the
one named by $PANDA_BUILD_DIR (tests/run.sh sets it) or by an explicit
argument (--build-dir).  Inside it: ovs/build/... (the patched OVS),
load_generator/panda-*, tools/panda-model, sim/panda-sim (the ns-3
simulator, when configure found ns-3; sim/ns3-status says why not),
bpf/panda-cc and bpf/*.bpf.o (the BPF programs, when configure found their
toolchain; bpf/bpf-status says why not).
"""

import os

try:
    from . import install_paths as _installed
except ImportError:
    _installed = None

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
TOP = os.path.dirname(PYTHON_DIR)
# True when this package runs from where 'make install' put it.
INSTALLED = _installed is not None


def _install_dir(name):
    """Directory 'name' of install_paths, taken relative to where the
    package is now rather than where it was installed, so that an
    installed tree moved as a whole (a package unpacked with dpkg-deb -x
    into a scratch root) still finds its files."""
    path = getattr(_installed, name)
    return os.path.normpath(os.path.join(
        PYTHON_DIR, os.path.relpath(path, _installed.PYTHONDIR)))


CDF_DIR = (_install_dir("CDF_DIR") if INSTALLED
           else os.path.join(TOP, "load_generator", "cdf"))
POLICY_LIBRARY = "libpanda-policy.so.1"
# Debian's interpreter: python3-os-ken and matplotlib import there (a pyenv
# python3 on PATH does not see them).
PY = "/usr/bin/python3"


class NotBuilt(RuntimeError):
    """A program the build tree should hold is missing."""


def build_dir(explicit=None):
    """The build tree: 'explicit', else $PANDA_BUILD_DIR, else <repo>/_build
    (absolute)."""
    return os.path.abspath(explicit or os.environ.get("PANDA_BUILD_DIR")
                           or os.path.join(TOP, "_build"))


def dpdk_build_dir(explicit=None):
    """The build tree of OVS with DPDK ports (DPDK=1 ./build.sh):
    'explicit', else $PANDA_DPDK_BUILD_DIR, else <repo>/_build-dpdk
    (absolute).  A tree of its own, so the default build never needs
    DPDK."""
    return os.path.abspath(explicit or os.environ.get("PANDA_DPDK_BUILD_DIR")
                           or os.path.join(TOP, "_build-dpdk"))


def cdf(name):
    """A distribution shipped with the load generator: installed in
    $(pkgdatadir)/cdf, in a checkout load_generator/cdf."""
    return os.path.join(CDF_DIR, name)


def tool(name):
    """The path of a project program (panda-model, ...): installed in
    $(bindir), from a checkout in the build tree's tools/.  Not checked:
    callers say what is missing when they run it."""
    if INSTALLED:
        return os.path.join(_install_dir("BINDIR"), name)
    return os.path.join(build_dir(), "tools", name)


def policy_library():
    """libpanda-policy.so.1, which pandaovs.policy binds: installed in
    $(pkglibdir); from a checkout in the build tree ($PANDA_BUILD_DIR, else
    <repo>/_build, else the DPDK build tree, which has the same library:
    a checkout built only with DPDK=1 still finds one)."""
    if INSTALLED:
        return os.path.join(_install_dir("PKGLIBDIR"), POLICY_LIBRARY)
    rel = os.path.join("lib", "panda", POLICY_LIBRARY)
    first = os.path.join(build_dir(), rel)
    if os.environ.get("PANDA_BUILD_DIR") or os.path.exists(first):
        return first
    dpdk = os.path.join(dpdk_build_dir(), rel)
    return dpdk if os.path.exists(dpdk) else first


class BuildTree:
    """Paths of the programs in one build tree."""

    LOADGEN = ("panda-fg-server", "panda-fg-client", "panda-mc-client",
               "panda-adp-server", "panda-adp-client")
    SIM = "sim/panda-sim"
    # The BPF programs and their loader (bpf/; built when configure found
    # clang, bpftool, libbpf and kernel BTF, bpf/bpf-status says why not).
    BPF_CC_LOADER = "bpf/panda-cc"
    BPF_DCTCP = "bpf/panda-dctcp.bpf.o"

    def __init__(self, root=None):
        self.root = build_dir(root)

    def path(self, rel):
        return os.path.join(self.root, rel)

    def has(self, rel):
        return os.access(self.path(rel), os.X_OK)

    def bin(self, rel):
        """'rel' under the build tree; NotBuilt if it is not executable."""
        p = self.path(rel)
        if not os.access(p, os.X_OK):
            raise NotBuilt("%s is not built (run ./build.sh, or make in %s)"
                           % (p, self.root))
        return p

    def ovs(self, rel):
        """An OVS program, e.g. ovs("utilities/ovs-ofctl")."""
        return self.bin(os.path.join("ovs", "build", rel))

    def loadgen(self, name):
        """A program of load_generator/ (BuildTree.LOADGEN)."""
        return self.bin(os.path.join("load_generator", name))

    def tool(self, name):
        """tools/panda-model and friends."""
        return self.bin(os.path.join("tools", name))

    def missing(self, rels):
        return [r for r in rels if not self.has(r)]

    def sim_missing(self):
        """(None, False) if the simulator is built, else (why not, whether
        the build should have it): configure's reason from sim/ns3-status
        (ns-3 absent, --without-ns3: not expected), or that make has not
        built it though configure found ns-3 (expected: an error)."""
        if self.has(self.SIM):
            return None, False
        try:
            with open(self.path("sim/ns3-status")) as f:
                status = f.read().strip()
        except OSError:
            return "%s: no build tree (run ./build.sh)" % self.root, False
        if status.startswith("built"):
            return ("%s is missing though configure found ns-3 (%s): run "
                    "make in %s" % (self.path(self.SIM), status, self.root),
                    True)
        return "simulator %s" % status, False


    def bpf_missing(self):
        """None if the BPF congestion control and its loader are built,
        else why not: configure's reason from bpf/bpf-status, or that make
        has not built them though configure could."""
        if self.has(self.BPF_CC_LOADER) and os.path.isfile(
                self.path(self.BPF_DCTCP)):
            return None
        try:
            with open(self.path("bpf/bpf-status")) as f:
                status = f.read().strip()
        except OSError:
            return ("%s: no bpf/bpf-status (a build tree configured before "
                    "the BPF programs existed, or none: run ./build.sh)"
                    % self.root)
        if status.startswith("built"):
            return ("%s and %s are missing though configure could build "
                    "them (%s): run make in %s"
                    % (self.BPF_CC_LOADER, self.BPF_DCTCP, status,
                       self.root))
        return "the BPF programs are %s" % status


def module_env(env=None):
    """'env' (default os.environ) with python/ on PYTHONPATH, so that a
    child '/usr/bin/python3 -m pandaovs.X' finds the package."""
    env = dict(os.environ if env is None else env)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = PYTHON_DIR + (os.pathsep + old if old else "")
    return env


def module_cmd(module, *args):
    """argv that runs pandaovs.<module> with Debian's interpreter (use with
    module_env())."""
    return [PY, "-m", "pandaovs." + module] + [str(a) for a in args]
