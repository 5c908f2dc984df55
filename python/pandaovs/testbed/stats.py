"""Aggregation over repetitions: the thesis repeats each experiment 10
times, drops the minimum and the maximum and averages the other 8."""

import math


def trimmed(values):
    """{"mean", "std", "min", "max", "n", "n_used", "values"} over the
    non-None values; with 3 or more, the minimum and the maximum are dropped
    (one each) before mean and std.  None when there is no value."""
    vals = [float(v) for v in values if v is not None]
    if not vals:
        return None
    used = sorted(vals)
    if len(used) >= 3:
        used = used[1:-1]
    mean = sum(used) / len(used)
    std = (math.sqrt(sum((v - mean) ** 2 for v in used) / (len(used) - 1))
           if len(used) > 1 else 0.0)
    return {"mean": mean, "std": std, "min": min(vals), "max": max(vals),
            "n": len(vals), "n_used": len(used), "values": vals}


def get(d, path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d
