"""A CPU limit on one process, for runs that overload a switch by a known
factor: a cgroup of its own with a CPU quota (cgroup v2 cpu.max where the
unified hierarchy has the cpu controller, else v1's cpu.cfs_quota_us), so
that the switch's capacity is a fraction of one CPU whatever the machine
and its other load, and a flood at N times that capacity is N times
whatever it is.  The process's threads all move; they go back to the
cgroup they came from when the limit ends.

    with cpu_limit(pid, 0.1, "rxsplit-bench"):
        ...
"""

import os

V2 = "/sys/fs/cgroup"
V1_CPU = "/sys/fs/cgroup/cpu"
PERIOD_US = 10000       # Short: a throttled process waits at most this.


class CpuLimitError(RuntimeError):
    pass


def _read(path):
    with open(path) as f:
        return f.read()


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _hierarchy():
    """(root, version) of the cgroup hierarchy with the cpu controller."""
    for root in (V2, os.path.join(V2, "unified")):
        ctl = os.path.join(root, "cgroup.controllers")
        if os.path.exists(ctl) and "cpu" in _read(ctl).split():
            return root, 2
    if os.path.exists(os.path.join(V1_CPU, "cpu.cfs_quota_us")):
        return V1_CPU, 1
    raise CpuLimitError("no cgroup hierarchy with the cpu controller "
                        "(cgroup v2 cpu.max or v1 cpu.cfs_quota_us)")


class cpu_limit:
    """Context manager: process 'pid' limited to 'fraction' of one CPU in
    a new cgroup 'name' (made under the hierarchy's root, removed at the
    end)."""

    def __init__(self, pid, fraction, name):
        if not 0 < fraction <= 64:
            raise CpuLimitError("CPU fraction %r out of range" % fraction)
        self.pid, self.fraction, self.name = pid, fraction, name
        self.dir = None
        self.origin = None

    def __enter__(self):
        root, version = _hierarchy()
        self.dir = os.path.join(root, self.name)
        os.makedirs(self.dir, exist_ok=True)
        quota = max(1000, int(PERIOD_US * self.fraction))
        if version == 2:
            _write(os.path.join(self.dir, "cpu.max"),
                   "%d %d" % (quota, PERIOD_US))
        else:
            _write(os.path.join(self.dir, "cpu.cfs_period_us"),
                   str(PERIOD_US))
            _write(os.path.join(self.dir, "cpu.cfs_quota_us"), str(quota))
        self.origin = self._current(root, version)
        # cgroup.procs moves every thread of the process (v1 and v2).
        _write(os.path.join(self.dir, "cgroup.procs"), str(self.pid))
        return self

    def _current(self, root, version):
        for line in _read("/proc/%d/cgroup" % self.pid).splitlines():
            hid, controllers, path = line.split(":", 2)
            if (version == 2 and hid == "0") or \
                    (version == 1 and "cpu" in controllers.split(",")):
                return os.path.join(root, path.lstrip("/"))
        return root

    def __exit__(self, *exc):
        try:
            if os.path.exists("/proc/%d" % self.pid):
                _write(os.path.join(self.origin, "cgroup.procs"),
                       str(self.pid))
        except OSError:
            pass
        try:
            os.rmdir(self.dir)
        except OSError:
            pass
        return False
