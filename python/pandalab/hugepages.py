"""A small, temporary hugepage reservation for DPDK (ports of OVS built
with DPDK: pandalab.lab, PortConfig type "dpdk").

    with Hugepages(64) as hp:          # 64 x 2 MB
        ... dpdk-extra="--huge-dir=%s" % hp.mount ...

reserve() adds 'pages' pages of 'size_kb' to the kernel's pool (sysfs
nr_hugepages of that size), checks that the kernel really found them, and
mounts a hugetlbfs limited to them (size=) in a temporary directory of its
own, so DPDK's files live there and nowhere else and one DPDK instance
cannot take more than its share.  release() undoes exactly that: unmounts
its own mount, removes its directory, and lowers the pool by the pages it
added (not to a remembered value, so a reservation someone else made
meanwhile survives).  Nothing is found or cleaned up by name.

HugepagesUnavailable says why a reservation is not possible here (not
root, no hugetlbfs, the kernel cannot find the memory); callers report it
and skip, never fake it.
"""

import os
import shutil
import subprocess
import tempfile

SYSFS = "/sys/kernel/mm/hugepages"


class HugepagesUnavailable(RuntimeError):
    """Hugepages cannot be reserved here; the message says why."""


def _pool(size_kb):
    return os.path.join(SYSFS, "hugepages-%dkB" % size_kb)


def _read(path):
    with open(path) as f:
        return int(f.read().strip())


def _write(path, value):
    with open(path, "w") as f:
        f.write("%d\n" % value)


def unavailable(size_kb=2048):
    """None if hugepages of 'size_kb' could be reserved here, else why not
    (without reserving any)."""
    if os.geteuid() != 0:
        return "hugepages need root (sysfs nr_hugepages, mount)"
    try:
        with open("/proc/filesystems") as f:
            if "hugetlbfs" not in f.read():
                return "the kernel has no hugetlbfs"
    except OSError as e:
        return "cannot read /proc/filesystems: %s" % e
    nr = os.path.join(_pool(size_kb), "nr_hugepages")
    if not os.access(nr, os.W_OK):
        return "no %d kB hugepage pool (%s not writable)" % (size_kb, nr)
    return None


class Hugepages:
    """'pages' hugepages of 'size_kb', reserved and mounted for the life of
    the object (a context manager, or reserve()/release())."""

    def __init__(self, pages=64, size_kb=2048):
        if pages <= 0:
            raise ValueError("pages must be positive, not %r" % pages)
        self.pages = pages
        self.size_kb = size_kb
        self.added = 0          # pages this object added to the pool
        self.mount = None       # its hugetlbfs mount point

    @property
    def megabytes(self):
        return self.pages * self.size_kb // 1024

    def reserve(self):
        why = unavailable(self.size_kb)
        if why:
            raise HugepagesUnavailable(why)
        nr = os.path.join(_pool(self.size_kb), "nr_hugepages")
        try:
            before = _read(nr)
            _write(nr, before + self.pages)
            self.added = max(0, _read(nr) - before)
            if self.added < self.pages:
                raise HugepagesUnavailable(
                    "the kernel found %d of the %d %d kB hugepages asked "
                    "for (memory too fragmented or too little free)"
                    % (self.added, self.pages, self.size_kb))
            self.mount = tempfile.mkdtemp(prefix="panda-huge-")
            res = subprocess.run(
                ["mount", "-t", "hugetlbfs", "-o", "pagesize=%dK,size=%dK"
                 % (self.size_kb, self.pages * self.size_kb), "nodev",
                 self.mount], capture_output=True, text=True)
            if res.returncode != 0:
                os.rmdir(self.mount)
                self.mount = None
                raise HugepagesUnavailable("cannot mount hugetlbfs: %s"
                                           % res.stderr.strip())
        except BaseException:
            self.release()
            raise
        return self

    def release(self):
        """Unmounts and gives back what reserve() took; safe twice."""
        if self.mount:
            res = subprocess.run(["umount", self.mount], capture_output=True,
                                 text=True)
            if res.returncode == 0:
                shutil.rmtree(self.mount, ignore_errors=True)
                self.mount = None
            else:
                # Still in use (a DPDK process we did not end?): leave the
                # pages too, rather than pull them from under it.
                raise RuntimeError("cannot unmount %s: %s" % (
                    self.mount, res.stderr.strip()))
        if self.added:
            nr = os.path.join(_pool(self.size_kb), "nr_hugepages")
            _write(nr, max(0, _read(nr) - self.added))
            self.added = 0

    def record(self):
        """What result files record about the reservation."""
        return {"pages": self.pages, "page_kb": self.size_kb,
                "megabytes": self.megabytes}

    def __enter__(self):
        return self.reserve()

    def __exit__(self, *exc):
        self.release()
