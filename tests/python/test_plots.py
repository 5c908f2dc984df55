"""The figures of the testbed (and so of the Mininet front end), the
simulator and the comparisons (pandalab.figures): drawn from a committed
small result.json (tests/python/data/testbed-result-small.json, cut from
a real run of 3 repetitions) in PNG at 300 dpi, PDF and SVG; axes linear
or logarithmic by the values' span; the floor drawn; the workload named
after the run; one name and colour per scheme everywhere.  Needs no root
(matplotlib only)."""

import contextlib
import io
import json
import os
import struct

import pytest

from pandalab import figures
from pandalab.sim.points import SCHEMES as SIM_SCHEMES
from pandalab.testbed import plots, runner
from pandalab.testbed.schemes import ORDER

SMALL = os.path.join(os.path.dirname(__file__), "data",
                     "testbed-result-small.json")


def small_result():
    with open(SMALL) as f:
        return json.load(f)


def png_dpi(path):
    """The PNG's resolution from its pHYs chunk (pixels per metre)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i = data.index(b"pHYs")
    x, y, unit = struct.unpack(">IIB", data[i + 4:i + 13])
    assert unit == 1 and x == y
    return x * 0.0254


@pytest.fixture(scope="module")
def plotted(tmp_path_factory):
    """testbed/run.py plot RUN_DIR on a copy of the small run: (the run's
    directory, the lines it printed)."""
    run_dir = tmp_path_factory.mktemp("run")
    (run_dir / "result.json").write_text(open(SMALL).read())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert runner.launch(["plot", str(run_dir)]) == 0
    return run_dir, out.getvalue().split("\n")[:-1]


def test_every_figure_in_three_formats(plotted):
    """'plot RUN_DIR' redraws a finished run from its result.json and names
    every file it wrote."""
    run_dir, lines = plotted
    assert sorted(os.path.basename(x) for x in lines) == sorted(
        "%s.%s" % (stem, ext) for ext in figures.FORMATS for stem in (
            "fig5.1-p90-vs-requests-cubic", "fig5.2-p99-vs-requests-cubic",
            "fig5.6-latency-vs-concurrency-cubic",
            "fct-vs-concurrency-cubic"))
    for path in lines:
        if path.endswith(".png"):
            assert round(png_dpi(path)) == figures.DPI
        elif path.endswith(".pdf"):
            assert open(path, "rb").read(5) == b"%PDF-"
        else:
            assert "<svg" in open(path).read()
    # SVG keeps text as text: the floor, the workload and the schemes'
    # names can be read from it.
    p99 = (run_dir / "fig5.2-p99-vs-requests-cubic.svg").read_text()
    floor = small_result()["summary"]["floor"]["cubic"]["floor_ms"]
    assert "floor %.3g ms" % floor in p99
    assert "14 web-search flows" in p99
    for name in ("FIFO", "PIAS", "FISH", "FQ (DRR)", "Panda"):
        assert name in p99


def test_workload_named_after_the_run(tmp_path):
    """The flows are the run's workload, not always "web-search"."""
    r = small_result()
    r["metadata"]["workload"]["name"] = "data-mining"
    path = str(tmp_path / "fct.png")
    assert plots.fig_fct(r["summary"]["rows"], "cubic", path,
                         plots.workload_name(r)) == path
    fct = (tmp_path / "fct.svg").read_text()
    assert "data-mining mean flow completion time" in fct
    assert "web-search" not in fct


def test_axes_linear_or_log():
    plt = figures.pyplot()
    fig, ax = plt.subplots()
    assert figures.value_axis(ax, [2.0, 5.0, 9.9]) == "linear"
    assert ax.get_ylim()[0] == 0
    assert figures.value_axis(ax, [1.6, 30.0]) == "log"
    ax.set_ylim(1, 100)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()
              if t.get_text()]
    # Ticks at 1, 2 and 5 x 10^k in plain numbers: 2.3 ms can be read off.
    assert {"1", "2", "5", "10", "20", "50", "100"} <= set(labels), labels
    assert figures.value_axis(ax, [None, float("nan"), 3.0]) == "linear"
    plt.close(fig)


def test_one_palette():
    """Every scheme of the testbed and the simulator has one name and one
    colour, the same in every figure."""
    for s in ORDER + tuple(SIM_SCHEMES):
        assert figures.label(s) != s or s == "oracle", s
        assert figures.color(s) != "#000000" or s == "oracle", s
    assert figures.label("fq-codel") == figures.label("fq_codel")
    assert figures.color("fq-codel") == figures.color("fq_codel")
    labels = [v[0] for v in figures.SCHEMES.values()]
    colors = [v[1] for v in figures.SCHEMES.values()]
    assert len(set(labels)) == len(labels)
    assert len(set(colors)) == len(colors)
    assert plots.COLORS["panda"] == figures.color("panda")


def test_report_command(plotted, tmp_path, capsys):
    """testbed/run.py report RUN_DIR prints the table and targets again."""
    run_dir, _ = plotted
    assert runner.launch(["report", str(run_dir)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["cubic", "panda", "14", "10000"] in [r[:4] for r in rows]
    with pytest.raises(SystemExit) as e:
        runner.launch(["report", str(tmp_path / "none")])
    assert e.value.code == 2


def test_compare_command(tmp_path, capsys):
    """testbed/run.py compare RUN_A LABEL=RUN_B: the two figures in three
    formats and their numbers, each run labelled."""
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "result.json").write_text(open(SMALL).read())
    out = tmp_path / "cmp"
    assert runner.launch(["compare", "--out", str(out), str(a),
                          "second=%s" % b]) == 0
    written = capsys.readouterr().out.split()
    assert sorted(os.path.basename(p) for p in written) == sorted(
        ["compare-levels.%s" % e for e in figures.FORMATS]
        + ["compare-metrics.%s" % e for e in figures.FORMATS]
        + ["compare.json"])
    labels = [r["label"] for r in json.loads((out / "compare.json")
                                             .read_text())]
    assert labels == ["a", "second"]
