"""The command-line convention of every Python program of the project
(panda-qos, panda-controller, testbed/run.py, mininet/run.py, sim/run.py,
the benchmarks): the same as the C programs' (lib/cli/opt.h, log.h;
docs/reference.md, "Command-line convention").

    ArgumentParser   argparse with --version (the project's version and
                     git commit), shell completion through argcomplete
                     when it is installed, usage errors on stderr with
                     exit status 2 and --help on stdout (argparse's own)
    EXIT_*           the exit statuses every program uses
    size, rate, duration
                     argparse types for sizes (bytes), rates (bit/s) and
                     durations (seconds) in the syntax the C programs
                     read (lib/cli/parse.h; tests/vectors/cli-units.txt
                     holds the cases both implementations agree on)
"""

import argparse
import math
import os
import re
import subprocess

from . import __version__

EXIT_OK = 0
EXIT_FAILURE = 1        # a runtime failure
EXIT_USAGE = 2          # a bad command line (argparse's own status)
EXIT_INCOMPLETE = 3     # ran to its end, but the measurement is
                        # incomplete: what it wrote says which part
EXIT_INTERRUPTED = 130  # SIGINT or SIGTERM, after the clean-up


_TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def git_commit():
    """The commit the package comes from: from the file the installation
    wrote beside the package (python/automake.mk), else from the source
    tree it runs in (12 hex digits, "-dirty" when tracked files differ),
    else "unknown"."""
    try:
        with open(os.path.join(os.path.dirname(__file__),
                               "git-commit.txt")) as f:
            return f.read().strip() or "unknown"
    except OSError:
        pass
    try:
        res = subprocess.run(
            ["git", "-C", _TOP, "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, timeout=10)
        if res.returncode == 0 and res.stdout.strip():
            commit = res.stdout.strip()
            st = subprocess.run(
                ["git", "-C", _TOP, "status", "--porcelain",
                 "--untracked-files=no"],
                capture_output=True, text=True, timeout=10)
            return commit + ("-dirty" if st.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def version_string(prog):
    """'PROG (Panda-OVS) VERSION (git COMMIT)', as the C programs print."""
    return "%s (Panda-OVS) %s (git %s)" % (prog, __version__, git_commit())


class _VersionAction(argparse.Action):
    """--version, computed when asked for (git runs only then)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS,
                 default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default,
                         nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        # The program's name as its usage line gives it, without a
        # subcommand's.
        print(version_string(parser.prog.split()[0]))
        parser.exit(EXIT_OK)


_completing = False


def _autocomplete(parser):
    """Shell completion (python3-argcomplete): active only when the shell
    asks for it (argcomplete's environment), so that argcomplete is
    neither needed nor imported otherwise.  Once per process: argcomplete
    parses the command line with the parser itself."""
    global _completing
    if "_ARGCOMPLETE" not in os.environ or _completing:
        return
    try:
        import argcomplete
    except ImportError:
        return
    _completing = True
    argcomplete.autocomplete(parser)


class ArgumentParser(argparse.ArgumentParser):
    """argparse.ArgumentParser with --version and shell completion.  Its
    subparsers are of the same class (they get --version too)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        if self.add_help:
            self.add_argument("--version", action=_VersionAction,
                              help="show the version and exit")

    def parse_known_args(self, args=None, namespace=None):
        _autocomplete(self)
        return super().parse_known_args(args, namespace)


# -- sizes, rates, durations (lib/cli/parse.c has the C side) ----------

_NUMBER = re.compile(r"([0-9]+(?:\.[0-9]+)?)(.*)\Z", re.S)
_MULTIPLIERS = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
                "ki": 1024.0, "mi": 1048576.0, "gi": 1073741824.0,
                "ti": 1099511627776.0}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60,
               "min": 60, "h": 3600}


def _number(text):
    m = _NUMBER.match(text if isinstance(text, str) else "")
    return (float(m.group(1)), m.group(2)) if m else (None, None)


def _multiplier(unit):
    """(multiplier, rest of 'unit') for the longest multiplier 'unit'
    starts with (case-insensitive)."""
    best = max((p for p in _MULTIPLIERS if unit.lower().startswith(p)),
               key=len)
    return _MULTIPLIERS[best], unit[len(best):]


def parse_size(text):
    """'1.5Ki' -> 1536 (bytes); ValueError if 'text' is not a size."""
    v, unit = _number(text)
    if v is not None:
        mult, rest = _multiplier(unit)
        v *= mult
        if rest.lower() in ("", "b") and v == math.floor(v) and v <= 2**53:
            return int(v)
    raise ValueError("%r is not a size in bytes (e.g. 1000, 10K, 1.5Mi, "
                     "64KiB)" % text)


def parse_rate(text, bare=1):
    """'50M', '50Mbit', '1.5G' -> bit/s (float); a number without a unit is
    'bare' bit/s.  ValueError if 'text' is not a rate."""
    v, unit = _number(text)
    if v is not None:
        if not unit:
            return v * bare
        mult, rest = _multiplier(unit)
        if rest.lower() in ("", "bit"):
            return v * mult
    raise ValueError("%r is not a rate (e.g. 50M, 1.5G, 100Mbit; bit/s)"
                     % text)


def parse_duration(text, bare=1):
    """'500ms', '10s', '2m' -> seconds (float); a number without a unit is
    'bare' seconds.  ValueError if 'text' is not a duration."""
    v, unit = _number(text)
    if v is not None:
        if not unit:
            return v * bare
        if unit in _TIME_UNITS:
            return v * _TIME_UNITS[unit]
    raise ValueError("%r is not a duration (e.g. 10s, 500ms, 2m)" % text)


def _ranged(parse, what, lo, hi, fmt):
    def convert(text):
        try:
            v = parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e))
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(
                "%s is out of range [%s, %s]%s" % (
                    text, "-inf" if lo is None else fmt(lo),
                    "inf" if hi is None else fmt(hi), what))
        return v
    return convert


def size(lo=0, hi=None):
    """An argparse type: a size in bytes (int) in [lo, hi]."""
    return _ranged(parse_size, " bytes", lo, hi, lambda v: "%d" % v)


def rate(bare=1, lo=None, hi=None):
    """An argparse type: a rate in bit/s (float) in [lo, hi]; a bare number
    is 'bare' bit/s."""
    return _ranged(lambda t: parse_rate(t, bare), " bit/s", lo, hi,
                   lambda v: "%g" % v)


def duration(bare=1, lo=0, hi=None):
    """An argparse type: a duration in seconds (float) in [lo, hi]; a bare
    number is 'bare' seconds."""
    return _ranged(lambda t: parse_duration(t, bare), " s", lo, hi,
                   lambda v: "%g" % v)
