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
