"""Aggregation over repetitions, and the 95% confidence intervals that
decide the targets (testbed/README.md, "Repetitions and intervals").

A row's value is the 10% trimmed mean of its repetitions: floor(n / 10)
values dropped at each end, i.e. the thesis's "10 runs, drop the minimum
and the maximum, average the other 8" at 10 repetitions, and the plain
mean below 10 (dropping one of each end of 3 or 5 repetitions would
leave too few values for an interval).  Its interval is Yuen's interval
for that trimmed mean (the winsorized variance, Student's t with h - 1
degrees of freedom, h the values kept), which with nothing trimmed is
the t interval on the mean.

A ratio of two schemes (panda/pias) is decided on the repetitions'
pairs: repetition r of every scheme runs with seed + r, the same flow
sizes and memcached requests, and the seed moves a scheme's memcached
p99 far more than it moves the ratio of two schemes (the request
sequence's tail sets both).  The interval is the same interval on the
per-repetition log-ratios, back-transformed: a geometric mean of the
repetitions' ratios with its 95% interval.  Where a value is zero (a
count) the log-ratio does not exist, and Fieller's interval for the
ratio of the paired means takes its place.

One repetition has no spread to build an interval from.  It is given
the interval [v / ONE_REP_FACTOR, v * ONE_REP_FACTOR]: a single
repetition decides a bound only when it lies further from it than one
repetition's ratio has been seen to lie from the mean of several, so a
tight bound (a +-5% band) is never decided by one repetition."""

import functools
import math

import numpy

CONFIDENCE = 0.95
TRIM = 0.1              # each end; the thesis's 1 of 10
# How far (a factor) one repetition's value may lie from what more
# repetitions would give: testbed/README.md, "Repetitions and intervals",
# derives it from the reference full run's repetitions.
ONE_REP_FACTOR = 3.0

MET, NOT_MET, UNDECIDED = "met", "NOT met", "undecided"


def trim_count(n):
    """Values dropped at each end of n repetitions."""
    return int(n * TRIM)


@functools.lru_cache(maxsize=None)
def _t(df):
    """Student's t quantile of the two-sided CONFIDENCE interval.  scipy
    is imported here, not with the module: it takes a second, and most
    users of the testbed's modules (the command line's checks, --dry-run)
    compute no interval."""
    from scipy import stats as sstats
    return float(sstats.t.ppf(0.5 + CONFIDENCE / 2, df))


def interval(values):
    """(trimmed mean, lo, hi) of 'values' (floats): Yuen's 95% interval
    of the 10% trimmed mean; lo and hi None when fewer than two values
    are kept."""
    x = sorted(values)
    n = len(x)
    g = trim_count(n)
    kept = x[g:n - g]
    h = len(kept)
    mean = sum(kept) / h
    if h < 2:
        return mean, None, None
    wins = [kept[0]] * g + kept + [kept[-1]] * g
    sw2 = numpy.var(wins, ddof=1)
    se = math.sqrt((n - 1) * sw2 / (h * (h - 1)))
    hw = _t(h - 1) * se
    return mean, mean - hw, mean + hw


def trimmed(values, reps=None):
    """{"mean", "std", "min", "max", "n", "n_used", "values", "ci95"}
    over the non-None 'values' (and "reps", the repetition of each value,
    when 'reps' gives them in the same order): the 10% trimmed mean, the
    standard deviation of the values kept, the 95% interval (None below
    two repetitions).  None when there is no value."""
    pairs = [(v, r) for v, r in zip(values, reps if reps is not None
                                     else _none())
             if v is not None]
    if not pairs:
        return None
    vals = [float(v) for v, _ in pairs]
    g = trim_count(len(vals))
    used = sorted(vals)[g:len(vals) - g]
    mean, lo, hi = interval(vals)
    std = (math.sqrt(sum((v - mean) ** 2 for v in used) / (len(used) - 1))
           if len(used) > 1 else 0.0)
    out = {"mean": mean, "std": std, "min": min(vals), "max": max(vals),
           "n": len(vals), "n_used": len(used), "values": vals,
           "ci95": None if lo is None else [lo, hi]}
    if reps is not None:
        out["reps"] = [r for _, r in pairs]
    return out


def _none():
    while True:
        yield None


def get(d, path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


# -- estimates that decide -------------------------------------------------
def by_rep(stat):
    """{rep: value} of a trimmed() statistic made with reps."""
    if not stat or "reps" not in stat:
        return {}
    return dict(zip(stat["reps"], stat["values"]))


def paired(a, b):
    """[(a_r, b_r)] over the repetitions r both statistics have, in
    repetition order ('a', 'b': trimmed() with reps, or {rep: value})."""
    a = a if isinstance(a, dict) and "values" not in a else by_rep(a)
    b = b if isinstance(b, dict) and "values" not in b else by_rep(b)
    return [(a[r], b[r]) for r in sorted(set(a) & set(b))]


def one_rep(v):
    """The interval one repetition's value 'v' (>= 0) is given."""
    return [v / ONE_REP_FACTOR, v * ONE_REP_FACTOR]


def ratio(pairs):
    """The ratio a/b of paired repetitions: {"estimate", "ci95", "n",
    "method"}, or None without pairs.  estimate None when it does not
    exist (every b and a zero)."""
    n = len(pairs)
    if not n:
        return None
    if all(a > 0 and b > 0 for a, b in pairs):
        logs = [math.log(a / b) for a, b in pairs]
        if n == 1:
            est = math.exp(logs[0])
            return {"estimate": est, "ci95": one_rep(est), "n": 1,
                    "method": "one repetition"}
        m, lo, hi = interval(logs)
        return {"estimate": math.exp(m), "ci95": [math.exp(lo),
                                                  math.exp(hi)],
                "n": n, "method": "paired log-ratio, t"
                if not trim_count(n) else "paired log-ratio, Yuen"}
    return _fieller(pairs)


def _fieller(pairs):
    """Ratio of the paired means with Fieller's 95% interval (values that
    may be zero: counts)."""
    n = len(pairs)
    a = [float(x) for x, _ in pairs]
    b = [float(y) for _, y in pairs]
    ma, mb = sum(a) / n, sum(b) / n
    if n == 1:
        if mb > 0:
            est = ma / mb
            return {"estimate": est, "ci95": one_rep(est), "n": 1,
                    "method": "one repetition"}
        return {"estimate": math.inf if ma > 0 else None,
                "ci95": [math.inf, math.inf] if ma > 0 else None,
                "n": 1, "method": "one repetition"}
    est = ma / mb if mb > 0 else (math.inf if ma > 0 else None)
    t2 = _t(n - 1) ** 2 / n
    cov = numpy.cov(a, b, ddof=1)
    saa, sab, sbb = cov[0][0], cov[0][1], cov[1][1]
    qa = mb * mb - t2 * sbb
    qb = ma * mb - t2 * sab
    qc = ma * ma - t2 * saa
    disc = qb * qb - qa * qc
    if qa <= 0 or disc < 0:
        # The denominator's mean is not distinguishable from zero: the
        # interval is unbounded.
        ci = [0.0, math.inf]
    else:
        r = math.sqrt(disc)
        ci = [max(0.0, (qb - r) / qa), (qb + r) / qa]
    return {"estimate": est, "ci95": ci, "n": n,
            "method": "ratio of paired means, Fieller"}


def mean_of(values):
    """One quantity's repetitions (e.g. a share): {"estimate", "ci95",
    "n", "method"}, or None without values."""
    vals = [float(v) for v in values if v is not None]
    if not vals:
        return None
    if len(vals) == 1:
        return {"estimate": vals[0], "ci95": one_rep(vals[0]), "n": 1,
                "method": "one repetition"}
    m, lo, hi = interval(vals)
    return {"estimate": m, "ci95": [lo, hi], "n": len(vals),
            "method": "mean, t" if not trim_count(len(vals))
            else "10% trimmed mean, Yuen"}


def verdict(est, lo=None, hi=None, strict=False):
    """met when the estimate's interval lies inside [lo, hi] (a bound
    None: open on that side; 'strict': the bounds themselves outside),
    NOT met when it lies wholly outside, else undecided (also without an
    estimate)."""
    if not est or est["ci95"] is None:
        return UNDECIDED
    low, high = est["ci95"]
    if strict:
        inside = ((lo is None or low > lo) and (hi is None or high < hi))
        outside = ((lo is not None and high <= lo)
                   or (hi is not None and low >= hi))
    else:
        inside = ((lo is None or low >= lo) and (hi is None or high <= hi))
        outside = ((lo is not None and high < lo)
                   or (hi is not None and low > hi))
    return MET if inside else NOT_MET if outside else UNDECIDED


def combine(verdicts):
    """Several criteria, all needed: NOT met if one is, met if all are,
    else undecided."""
    verdicts = list(verdicts)
    if NOT_MET in verdicts:
        return NOT_MET
    if verdicts and all(v == MET for v in verdicts):
        return MET
    return UNDECIDED


def one_rep_can_decide(lo=None, hi=None):
    """Can one repetition (interval [v/F, vF]) ever meet the bound
    [lo, hi]?  Not when the band is narrower than F^2 (a +-5% band)."""
    if lo is not None and hi is not None:
        return lo > 0 and hi / lo >= ONE_REP_FACTOR ** 2
    return True


def digits_for(v, bounds=(), least=3):
    """Decimals that show 'v' as it stands against each of 'bounds': at
    least 'least' significant digits, and more while 'v' would print as a
    bound it differs from (1.0503 against 1.05: 4)."""
    if v is None or not math.isfinite(v):
        return least
    d = least
    if 0 < abs(v) < 1:
        d = max(d, least - 1 - math.floor(math.log10(abs(v))))
    for b in bounds:
        if b is None or v == b:
            continue
        while d < 9 and "%.*f" % (d, v) == "%.*f" % (d, b):
            d += 1
    return d


def fmt(v, bounds=(), least=3):
    """'v' with digits_for()'s decimals ("-" for None, "inf")."""
    if v is None:
        return "-"
    if not math.isfinite(v):
        return "inf"
    return "%.*f" % (digits_for(v, bounds, least), v)


def fmt_ci(ci, bounds=(), least=3):
    """"[lo, hi]" with the decimals that set each end apart from the
    bounds."""
    if not ci:
        return "-"
    return "[%s, %s]" % (fmt(ci[0], bounds, least), fmt(ci[1], bounds, least))
