"""sim/run.py --dry-run: the plan (points, collection first) and the
expected wall time from earlier results, without running or writing
anything."""

import json
import os
import subprocess

from pandaovs import paths

RUN = os.path.join(paths.TOP, "sim", "run.py")


def _dry(out, *args):
    r = subprocess.run([paths.PY, RUN] + list(args) + ["--dry-run", "--out",
                                                      str(out)],
                       capture_output=True, text=True, timeout=120,
                       env=paths.module_env())
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_plan_runs_and_writes_nothing(tmp_path):
    out = tmp_path / "sim"
    lines = _dry(out, "quick", "--jobs", "2")
    assert lines[0].startswith("plan: ")
    names = [ln.split()[0] for ln in lines if ln.startswith("  ")]
    assert names and all("never run" in ln for ln in lines
                         if ln.startswith("  "))
    # The FIFO collection point comes first: the model needs it.
    assert "-fifo-" in names[0]
    assert any("-panda-" in n for n in names)
    assert lines[-1].startswith("expected: unknown for %d of %d"
                                % (len(names), len(names)))
    assert not out.exists()


def test_expected_time_from_earlier_points(tmp_path):
    out = tmp_path / "sim"
    names = [ln.split()[0] for ln in _dry(out, "quick")
             if ln.startswith("  ")]
    for i, n in enumerate(names):
        d = out / "earlier" / "points" / n
        d.mkdir(parents=True)
        (d / "point.json").write_text(json.dumps(
            {"complete": False, "metadata": {"wall_s": 10.0 * (i + 1)}}))
    lines = _dry(out, "quick", "--jobs", "2")
    total = sum(10.0 * (i + 1) for i in range(len(names)))
    assert lines[-1].startswith("expected: about %.0f s" % (total / 2))
    assert "(10 s before)" in lines[1]
    # A complete result in the run's own directory is done, not planned.
    d = out / "quick" / "points" / names[0]
    d.mkdir(parents=True)
    (d / "point.json").write_text(json.dumps(
        {"complete": True, "metadata": {"wall_s": 1.0}}))
    lines = _dry(out, "quick", "--jobs", "2")
    assert "1 already done" in lines[0]
    assert names[0] in lines[1] and "(done)" in lines[1]


def test_fish_fig2_plan(tmp_path):
    """fish-fig2 plans the web-search collection point (the policy) first,
    then every variant x scheme x t x order of FISH's Fig. 2 on the fixed
    list."""
    lines = _dry(tmp_path / "sim", "fish-fig2")
    assert lines[0] == ("fish-fig2: 54 points (pias, fish, panda; "
                        "t = 1000, 100, 50 us; alpha1, alpha0, no-ecn), "
                        "seed 1")
    assert lines[1].startswith("plan: 55 point(s)")
    names = [ln.split()[0] for ln in lines if ln.startswith("  ")]
    assert "-fifo-fig2policy-" in names[0] and "web-search" in names[0]
    rest = names[1:]
    assert len(rest) == 54 and all(n.startswith("db-list-n11-dctcp-")
                                   for n in rest)
    for v in ("alpha1", "alpha0", "no-ecn"):
        for t in ("1000", "100", "50"):
            for order in ("small-first", "large-first"):
                for s in ("pias", "fish", "panda"):
                    assert sum("-%s-%s-t%sus-%s-s1-" % (s, order, t, v) in n
                               for n in rest) == 1, (v, s, order, t)
    lines = _dry(tmp_path / "sim", "fish-fig2", "--variants", "alpha0",
                 "--intervals", "50", "--schemes", "pias")
    assert lines[1].startswith("plan: 3 point(s)")


def test_committed_points_keep_their_names():
    """Fields added to Point later (the flow list, DCTCP's initial alpha)
    enter a point's name only when set: every point of the committed
    quick and leaf-spine runs still has the name it was run under, so a
    sweep begun before resumes and results stay findable."""
    from pandalab.sim import points as pts
    checked = 0
    for run in ("quick-2026-11-27", "leafspine-4x4x4-web-search-l0.8",
                "crosscheck-2026-11-27"):
        path = os.path.join(paths.TOP, "docs", "results", "sim", run,
                            "result.json")
        with open(path) as f:
            doc = json.load(f)
        for r in doc["points"]:
            assert pts.Point(**r["point"]).name() == r["name"]
            checked += 1
    assert checked >= 20
    # Set, they do enter it.
    base = pts.Point()
    assert pts.Point(dctcp_alpha_init=0.0).name() != base.name()
    assert pts.Point(flow_list="0 1000\n").name() != base.name()


def test_reproduce_fish_collects_with_a_memcached_pair():
    """FISH's points carry no memcached-like connection; their collection
    must (panda-model fits Panda's T to its FLT samples, and without them
    the collection gives every scheme of the part no policy).  The other
    parts' collections keep their own pairs."""
    from pandalab.sim import cli

    args = cli.parser().parse_args(["reproduce", "--parts", "pias,fish",
                                    "--schemes", "pias,panda"])
    todo = cli.reproduce_points(args)
    fish = [p for p in todo if not p.rpc_pairs]
    assert fish and all(cli.reproduce_group(p).rpc_pairs == 1 for p in fish)
    assert all(cli.reproduce_group(p).scheme == "fifo" for p in todo)
    others = [p for p in todo if p.rpc_pairs]
    assert others and all(cli.reproduce_group(p).rpc_pairs == p.rpc_pairs
                          for p in others)
