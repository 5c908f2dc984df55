"""sim/run.py workloads: the plan of points (no simulation is run here;
the command itself is an explicit, minutes-long run)."""

import argparse

from pandalab.sim import workloads


def test_plan_pairs_every_scheme_with_its_seed_floor_and_policy():
    a = argparse.Namespace(workloads=["fb-hadoop", "web-search"], seed=1,
                           seeds=2, schemes=["pias", "panda", "panda-pf"],
                           variants=["floor", "level"], rpc_rate=500,
                           window=20, sched_extra="ecn-ahead=true")
    todo = workloads.plan(a)
    pts = [p for p, _ in todo]
    assert len({p.name() for p in pts}) == len(pts)
    # Per workload: one collection (fifo-ecn, seed 1), a floor per seed,
    # pias per seed, and each Panda scheme per seed and variant.
    assert len(pts) == 2 * (1 + 2 + 2 * (1 + 2 * 2))
    for p, key in todo:
        assert p.edge_rate == "50Mbps" and p.concurrency == 14
        assert p.cc == "dctcp" and p.ecn_pkts == 20 and p.buffer_pkts == 50
        assert p.rpc_rate == 500 and p.max_time == 3 + 20 + 10
        assert p.sched_extra == "ecn-ahead=true"
        if p.scheme in ("panda", "panda-pf"):
            assert key == "%s-%s" % (p.workload, p.tag[4:])
        elif p.scheme == "pias":
            assert key == p.workload + "-floor"
        else:
            assert key is None
    floors = [p for p in pts if p.flows == 0]
    assert {(p.workload, p.seed) for p in floors} == {
        (w, s) for w in a.workloads for s in (1, 2)}
    # The collection points come first: the policies are made from them.
    first = [p.scheme for p, key in todo[:6]]
    assert first.count("fifo-ecn") == 2
