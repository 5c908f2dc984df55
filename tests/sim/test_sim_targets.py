"""Issue 15's targets as `sim/run.py reproduce` evaluates them, on
synthetic point records (no simulator needed): the orderings, the
averaging over seeds, the FHT ratio and the selection of the points that
count (leaf-spine shape, workload, load 0.8, untagged)."""

from pandalab.sim import cli

SCHEMES = ("fifo", "pias", "fish", "panda", "panda-pf", "oracle")


def rec(scheme, seed, small_mean, small_p99, all_mean, workload="web-search",
        load=0.8, leaves=4, tag=""):
    """A point record with the fields targets() reads."""
    return {
        "point": {"topology": "leafspine", "leaves": leaves,
                  "hosts_per_leaf": 4, "workload": workload, "load": load,
                  "tag": tag, "interval_us": 0, "cc": "dctcp",
                  "scheme": scheme, "seed": seed},
        "fct": {"small": {"mean_ms": small_mean, "p99_ms": small_p99},
                "all": {"mean_ms": all_mean},
                "medium": {"mean_ms": all_mean / 2},
                "large": {"mean_ms": all_mean * 10}},
    }


# small mean, small p99 per scheme: every ordering holds.
GOOD = {"fifo": (1.3, 8.0), "pias": (0.31, 3.1), "fish": (0.29, 2.2),
        "panda": (0.30, 3.0), "panda-pf": (0.29, 2.7),
        "oracle": (0.22, 0.5)}


def good(seed=1, scale=1.0, **kw):
    return [rec(s, seed, m * scale, p * scale, 6.7 * scale, **kw)
            for s, (m, p) in GOOD.items()]


def test_orderings_met_and_ratio_exact():
    t = cli.targets(good(), 4, 4)["dctcp"]
    for m in ("small_mean_ms", "small_p99_ms"):
        assert t[m + ": oracle <= panda-pf <= panda"] is True
        assert t[m + ": fish <= pias < fifo"] is True
    assert t["small_mean_ms: distance to oracle"]["panda"] == \
        0.30 / 0.22
    assert t["all_mean_ms: panda / pias"] == 1.0
    assert t["all_mean_ms: panda within 5% of pias"] is True
    assert t["seeds"] == [1]


def test_each_broken_link_is_caught():
    # fish above pias breaks the second chain only.
    r = good()
    r[2]["fct"]["small"]["mean_ms"] = 0.32
    t = cli.targets(r, 4, 4)["dctcp"]
    assert t["small_mean_ms: fish <= pias < fifo"] is False
    assert t["small_mean_ms: oracle <= panda-pf <= panda"] is True
    # pias equal to fifo: the last link is strict.
    r = good()
    r[1]["fct"]["small"]["p99_ms"] = 8.0
    r[2]["fct"]["small"]["p99_ms"] = 8.0
    assert cli.targets(r, 4, 4)["dctcp"][
        "small_p99_ms: fish <= pias < fifo"] is False
    # panda's FHT 6% above pias's is outside 5%.
    r = good()
    r[3]["fct"]["all"]["mean_ms"] = 6.7 * 1.06
    t = cli.targets(r, 4, 4)["dctcp"]
    assert t["all_mean_ms: panda within 5% of pias"] is False


def test_means_over_seeds_decide():
    # Seed 2 alone has panda-pf above panda; the means keep the order.
    r = good(1) + good(2, scale=1.5)
    r[6 + 4]["fct"]["small"]["mean_ms"] = 0.30 * 1.5 * 1.01
    t = cli.targets(r, 4, 4)["dctcp"]
    assert t["seeds"] == [1, 2]
    v = t["values_ms"]["small_mean_ms"]
    assert v["panda-pf"] == (0.29 + 0.30 * 1.5 * 1.01) / 2
    assert t["small_mean_ms: oracle <= panda-pf <= panda"] is True


def test_only_matching_points_count():
    # Other workloads, loads, shapes and tagged points are ignored; a
    # workload other than web search is selected by name.
    noise = (good(load=0.5, scale=0.1) + good(leaves=9, scale=0.1)
             + good(tag="x", scale=0.1))
    mining = good(workload="data-mining", scale=2.0)
    r = good() + noise + mining
    assert cli.targets(r, 4, 4)["dctcp"]["values_ms"]["small_mean_ms"][
        "panda"] == 0.30
    t = cli.targets(r, 4, 4, "data-mining")["dctcp"]
    assert t["values_ms"]["small_mean_ms"]["panda"] == 0.60
    assert cli.targets(noise, 4, 4) == {}
