"""Flow-size workloads of the throughput traffic (FHT): a shipped name
(SHIPPED: web-search, data-mining, fb-hadoop, fb-web, ali-storage, in
load_generator/cdf/, each file naming its source) or any CDF file in the
load generator's format.

A workload is checked once, where it enters (the testbed's --workload),
and from then on carried as a Workload: its name, where it came from, the
exact bytes that were checked and their sha256, so a result says which CDF
it used even if the file changes later (the testbed hands the programs a
copy of those bytes, see Workload.write_copy).

The format and its rules are lib/panda/cdf.c's (panda_cdf_parse), which the
load generator and panda-model use: one "<value> <cumulative probability>"
pair per line, '#' comments and blank lines ignored, lines shorter than 256
characters, values in [0, 2^40] and nondecreasing, probabilities in [0, 1]
and nondecreasing, the last one 1 (within 1e-6).  They are repeated here,
with the same messages, so that a bad file is refused before any namespace
is made rather than by the first program that reads it minutes later;
tests/python/test_workload.py holds both to the same files."""

import dataclasses
import hashlib
import math
import os
import re

from pandaovs import paths

# The thesis's (web search) and PIAS's other workload (data mining), and
# three more public ones whose many small flows share the top levels with
# a latency-sensitive connection (each file names its source).
SHIPPED = {"web-search": "web-search.cdf", "data-mining": "data-mining.cdf",
           "fb-hadoop": "fb-hadoop.cdf", "fb-web": "fb-web.cdf",
           "ali-storage": "ali-storage.cdf"}
DEFAULT = "web-search"
MAX_VALUE = 1099511627776.0     # 2^40, PANDA_CDF_MAX_VALUE
MAX_LINE = 255                  # lib/panda/cdf.c reads 256-byte lines
MAX_FILE_BYTES = 1 << 20        # a CDF is a few hundred points, not data
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class WorkloadError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str           # shipped name, or the file's name for a FILE
    path: str           # absolute path it was read from
    shipped: bool
    data: bytes         # the checked contents
    points: tuple       # ((value, cumulative probability), ...)

    @property
    def sha256(self):
        return hashlib.sha256(self.data).hexdigest()

    @property
    def mean_bytes(self):
        return cdf_mean(self.points)

    def record(self, copy=None):
        """What result.json and policy.json keep of the workload."""
        rec = {"name": self.name, "path": self.path, "shipped": self.shipped,
               "sha256": self.sha256, "points": len(self.points),
               "mean_bytes": self.mean_bytes,
               "max_bytes": self.points[-1][0]}
        if copy:
            rec["copy"] = copy
        return rec

    def write_copy(self, path):
        """Writes the checked bytes to 'path' (what the programs read)."""
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(self.data)
        os.replace(tmp, path)
        return path


def cdf_mean(points):
    """Mean of the piecewise-linear distribution (panda_cdf_mean): the
    first point's probability is mass at its value."""
    v0, p0 = points[0]
    mean = v0 * p0
    for (va, pa), (vb, pb) in zip(points, points[1:]):
        mean += (pb - pa) * (va + vb) / 2
    return mean


def _point_error(points, v, pr):
    if v < 0:
        return "negative value %g" % v
    if v > MAX_VALUE:
        return ("value %g above the largest supported, %.0f (2^40)"
                % (v, MAX_VALUE))
    if not 0 <= pr <= 1 + 1e-6:
        return "probability %g outside [0, 1]" % pr
    if points and v < points[-1][0]:
        return "values not sorted (%g after %g)" % (v, points[-1][0])
    if points and pr < points[-1][1]:
        return "probabilities decrease (%g after %g)" % (pr, points[-1][1])
    return None


def _number(text):
    """(float, rest) for a decimal number at the start of 'text', else
    (None, text)."""
    m = NUMBER.match(text)
    if not m:
        return None, text
    v = float(m.group(0))
    return (v, text[m.end():]) if math.isfinite(v) else (None, text)


def parse_cdf(text, name):
    """The points of CDF text 'text' (file 'name' in messages); raises
    WorkloadError naming the file, line and problem."""
    points = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE:
            raise WorkloadError("%s:%d: line too long" % (name, lineno))
        p = line.lstrip(" \t\r")
        if not p or p.startswith("#"):
            continue
        v, rest = _number(p)
        if v is None:
            raise WorkloadError('%s:%d: expected "<value> <probability>", '
                                'got "%s"' % (name, lineno, p))
        pr, rest = _number(rest.lstrip(" \t\r\n\f\v"))
        if pr is None:
            raise WorkloadError("%s:%d: missing cumulative probability "
                                "after value %g" % (name, lineno, v))
        rest = rest.lstrip(" \t\r")
        if rest and not rest.startswith("#"):
            raise WorkloadError('%s:%d: trailing text "%s"'
                                % (name, lineno, rest))
        why = _point_error(points, v, pr)
        if why:
            raise WorkloadError("%s:%d: %s" % (name, lineno, why))
        points.append((v, min(pr, 1.0)))
    if not points:
        raise WorkloadError("%s: empty (no data points)" % name)
    if abs(points[-1][1] - 1.0) > 1e-6:
        raise WorkloadError("%s: last cumulative probability is %g, not 1"
                            % (name, points[-1][1]))
    points[-1] = (points[-1][0], 1.0)
    return tuple(points)


def load(spec):
    """Workload of 'spec': a shipped name (SHIPPED) or a CDF file's path.
    Raises WorkloadError naming the problem."""
    if spec in SHIPPED:
        path, name, shipped = paths.cdf(SHIPPED[spec]), spec, True
    elif not spec:
        raise WorkloadError("empty workload (give %s or a CDF file)"
                            % ", ".join(SHIPPED))
    else:
        path, name, shipped = spec, os.path.basename(spec), False
    path = os.path.abspath(path)
    try:
        if os.path.isdir(path):
            raise WorkloadError("%s: is a directory, not a CDF file" % spec)
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        hint = ("" if shipped or os.sep in spec or spec.endswith(".cdf")
                else " (not a shipped workload either: %s)"
                % ", ".join(SHIPPED))
        raise WorkloadError("%s: cannot open CDF file (%s)%s"
                            % (spec, e.strerror or e, hint))
    if len(data) > MAX_FILE_BYTES:
        raise WorkloadError("%s: larger than %d bytes: not a CDF file"
                            % (spec, MAX_FILE_BYTES))
    if b"\0" in data:
        raise WorkloadError("%s: not a text file (it holds NUL bytes)"
                            % spec)
    # Comments may hold any bytes, as for the C parser; the numbers are
    # ASCII.
    text = data.decode("latin-1")
    return Workload(name=name, path=path, shipped=shipped, data=data,
                    points=parse_cdf(text, spec))
