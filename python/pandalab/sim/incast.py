"""TCP SkyLine's incast experiments (seed 003) with tsl-sim (sim/TSL.md).

One point (TslPoint) is one tsl-sim run: a scheme (tsl, newreno, cubic,
dctcp), N workers, an SRU, rounds, the switch buffer, and TSL's switches.
Its point.json:

  {"complete": true, "name", "point": {parameters},
   "metadata": {ns3_version, git_commit, git_dirty, seed, wall_s, events,
                sim_end_s, loadavg_before/after, cpus, command},
   "goodput_gbps", "link_fraction", "rto", "rto_max_per_worker",
   "complete_rounds", "run": tsl-sim's run.json}

The experiments (paper figure in brackets), each a list of points:

  incast    goodput and RTOs against N for every buffer/SRU setting and
            scheme: TSL, NewReno and CUBIC with and without delayed ACKs,
            DCTCP [Figs 2, 13a]
  rounds    the same with 4 rounds: TSL with and without window alignment,
            DCTCP, NewReno [Figs 3, 13b]
  wred      TSL against N for maxTh_unlabel 0.3 .. 0.9 [Fig 10]
  cawa      TSL with CAWA, without it, and without delayed ACKs [Fig 12]
  ablation  TSL with one mechanism off at a time
  timer     TSL with the host timer's accuracy t_minAcc 1 us .. 5 ms [Fig 11]
  hetero    the incast schemes at 256 KB / 256 KB on the networks of §5.6:
            1 Gbit/s and 10 Gbit/s, each with a 100 us base RTT
            [Figs 13c, 13d]
  fairness  5 long flows joining and leaving [Fig 14]
  rounds-sweep  NewReno and DCTCP over 2, 8 and 16 rounds at 128 KB
            (1 and 4 rounds are incast's and rounds') [Fig 3]
  icws      DCTCP with an initial window of 1, 2, 4 and 10 segments at
            128 KB / 256 KB [Fig 4]
  minth     TSL against N for WRED's minTh 0.05 .. 0.5 of the buffer,
            maxTh_unlabel 0.7 [Fig 9]

summarize() gives, per setting and scheme, the largest N that keeps at
least 80% of the link rate and the RTOs, and whether the paper's ordering
(TSL above DCTCP above TCP at high N) holds.
"""

import dataclasses
import hashlib
import json
import os

from .. import figures as paper
from . import points as pts
from . import sweep

SCHEMES = ("tsl", "dctcp", "newreno", "cubic")
KB = 1024
LINK_BPS = 10e9
TARGET = 0.8          # "keeps >= 80% of the link rate"

# The paper's grid of N (Figs 2, 13 go to a few hundred senders).
N_GRID = (4, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256)


@dataclasses.dataclass(frozen=True)
class TslPoint:
    """tsl-sim's parameters; None means tsl-sim's default (sim/TSL.md)."""
    scheme: str = "tsl"
    workers: int = 16
    sru: int = 256 * KB
    rounds: int = 1
    buffer: int = 128 * KB
    delack: bool = None          # None: on for tsl, off for the others.
    signal: bool = None
    label_rtx: bool = None
    protect: bool = None
    cawa: bool = None
    align: bool = None
    min_th: float = None
    max_th_unlabel: float = None
    wred_prob: float = None
    timer_us: float = None
    init_cwnd: int = None
    mode: str = "incast"
    stagger: float = None
    hold: float = None
    sample: float = None
    seed: int = 1
    max_time: float = 60
    tag: str = ""
    edge_rate: str = None        # None: tsl-sim's 10 Gbit/s.
    link_delay_us: float = None  # None: tsl-sim's 2 us (base RTT 8 us).

    def label(self):
        """The scheme as the figures name it (TSL variants, delayed ACK)."""
        s = self.scheme
        if self.delack is not None and self.delack != (s == "tsl"):
            s += "+delack" if self.delack else "-delack"
        for f in ("signal", "label_rtx", "protect", "cawa", "align"):
            v = getattr(self, f)
            if v is not None and not v:
                s += "-" + f.replace("_", "")
        for f, short in (("min_th", "minth"), ("max_th_unlabel", "maxth"),
                         ("wred_prob", "p"), ("timer_us", "timer"),
                         ("init_cwnd", "icw")):
            v = getattr(self, f)
            if v is not None:
                s += " %s=%g" % (short, v)
        return s

    def name(self):
        parts = [self.mode, self.label().replace(" ", "-").replace("=", ""),
                 "n%d" % self.workers,
                 "sru%dk" % (self.sru // KB), "buf%dk" % (self.buffer // KB),
                 "r%d" % self.rounds, "s%d" % self.seed]
        if self.tag:
            parts.insert(-1, self.tag)
        # Fields added later count only when set, so that the points
        # of earlier runs keep their names (and resume finds them).
        fields = {k: v for k, v in dataclasses.asdict(self).items()
                  if v is not None or k not in _LATER_FIELDS}
        digest = hashlib.sha1(json.dumps(fields, sort_keys=True).encode())
        return "-".join(parts) + "-" + digest.hexdigest()[:6]

    def args(self):
        a = ["--scheme=" + self.scheme, "--mode=" + self.mode,
             "--workers=%d" % self.workers, "--sru=%d" % self.sru,
             "--rounds=%d" % self.rounds, "--buffer=%d" % self.buffer,
             "--seed=%d" % self.seed, "--max-time=%g" % self.max_time]
        for f in ("delack", "signal", "label_rtx", "protect", "cawa",
                  "align"):
            v = getattr(self, f)
            if v is not None:
                a.append("--%s=%d" % (f.replace("_", "-"), int(v)))
        for f in ("min_th", "max_th_unlabel", "wred_prob", "timer_us",
                  "init_cwnd", "stagger", "hold", "sample", "link_delay_us"):
            v = getattr(self, f)
            if v is not None:
                a.append("--%s=%g" % (f.replace("_", "-"), v))
        if self.edge_rate is not None:
            a.append("--edge-rate=" + self.edge_rate)
        return a


_LATER_FIELDS = ("edge_rate", "link_delay_us")


class TslContext(pts.Context):
    def binary(self):
        return os.path.join(self.build_dir, "sim", "tsl-sim")


def run_point(ctx, point, policy=None):
    """Runs 'point' unless its result exists; returns the result.  Raises
    pts.PointError with tsl-sim's message on failure."""
    done = pts.load_result(ctx, point)
    if done:
        return done
    d = ctx.point_dir(point)
    os.makedirs(d, exist_ok=True)
    cmd = [ctx.binary()] + point.args() + ["--out=" + d]
    wall, load_before, usage = pts.run_logged(ctx, point, cmd, d)
    with open(os.path.join(d, "run.json")) as f:
        run = json.load(f)
    res_ = run["result"]
    doc = {
        "complete": True,
        "name": point.name(),
        "point": dataclasses.asdict(point),
        "label": point.label(),
        "metadata": pts.metadata(ctx, point, run, cmd, wall, load_before,
                                 usage, sim_end_s=run["run"]["sim_end_s"]),
        # An unfinished run (rounds not done by --max-time) has goodput 0:
        # it delivered less than asked in longer than the run.
        "goodput_gbps": (res_["goodput_bps"] or 0) / 1e9,
        "link_fraction": res_["link_fraction"] or 0,
        "complete_rounds": sum(1 for r in res_["rounds"]
                               if r.get("end_ns") is not None),
        "rto": run["tcp"]["rto"],
        "rto_max_per_worker": run["tcp"]["rto_max_per_worker"],
        "run": run,
    }
    tmp = os.path.join(d, "point.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, os.path.join(d, "point.json"))
    return doc


def describe(r):
    return "%s N=%d: %.2f Gbit/s, %d RTOs (max %d per worker)" % (
        r["label"], r["point"]["workers"], r["goodput_gbps"], r["rto"],
        r["rto_max_per_worker"])


# ------------------------------------------------------------ experiments

SETTINGS = ((128 * KB, 100 * KB), (128 * KB, 256 * KB),
            (256 * KB, 100 * KB), (256 * KB, 256 * KB))


def baselines(**kw):
    """The paper's baselines: TCP (NewReno, CUBIC) with and without
    delayed ACKs, and DCTCP."""
    return [TslPoint(scheme="dctcp", **kw)] + [
        TslPoint(scheme=s, delack=d, **kw)
        for s in ("newreno", "cubic") for d in (False, True)]


# Buffer/SRU settings of each experiment: the paper's (Figs 10 and 13a over
# all four; 12 and 13b at 256 KB / 256 KB), and 128 KB / 256 KB for the
# 4 rounds as well (Fig. 3) and for the ablation.
PART_SETTINGS = {
    "incast": SETTINGS,
    "rounds": ((128 * KB, 256 * KB), (256 * KB, 256 * KB)),
    "wred": SETTINGS,
    "cawa": ((256 * KB, 256 * KB),),
    "ablation": ((128 * KB, 256 * KB),),
    "timer": ((256 * KB, 256 * KB),),
    "hetero": ((256 * KB, 256 * KB),),
    "rounds-sweep": ((128 * KB, 256 * KB),),
    "icws": ((128 * KB, 256 * KB),),
    "minth": SETTINGS,
}

# The parts of sim/run.py tsl --parts: the experiments and the fairness
# run.
PARTS = tuple(PART_SETTINGS) + ("fairness",)

# §5.6's networks (Figs 13c, 13d): the rate, the delay per link (a base
# RTT crosses four links: 25 us gives the paper's 100 us) and the tag that
# names their curves.
HETERO = (("1Gbps", 25.0, "1g-rtt100us"), ("10Gbps", 25.0, "10g-rtt100us"))
HETERO_TAGS = tuple(t for _, _, t in HETERO)


def experiment(part, grid=N_GRID, settings=None, seed=1):
    """The points of one experiment (module docstring); 'settings'
    (buffer, SRU) pairs default to PART_SETTINGS[part]."""
    if part not in PART_SETTINGS:
        raise ValueError("unknown experiment %r" % part)
    out = []
    for buf, sru in settings or PART_SETTINGS[part]:
        kw = dict(buffer=buf, sru=sru, seed=seed)
        for n in grid:
            if part == "incast":
                out += [TslPoint(workers=n, **kw)] + baselines(workers=n, **kw)
            elif part == "rounds":
                out += [TslPoint(workers=n, rounds=4, **kw),
                        TslPoint(workers=n, rounds=4, align=False, **kw),
                        TslPoint(scheme="dctcp", workers=n, rounds=4, **kw),
                        TslPoint(scheme="newreno", workers=n, rounds=4, **kw)]
            elif part == "wred":
                out += [TslPoint(workers=n, max_th_unlabel=m, tag="wred", **kw)
                        for m in (0.3, 0.5, 0.7, 0.9)]
            elif part == "cawa":
                out += [TslPoint(workers=n, tag="cawa", **kw),
                        TslPoint(workers=n, cawa=False, tag="cawa", **kw),
                        TslPoint(workers=n, delack=False, tag="cawa", **kw)]
            elif part == "timer":
                out += [TslPoint(workers=n, timer_us=t, tag="timer", **kw)
                        for t in (1, 5, 50, 500, 5000)]
            elif part == "hetero":
                for rate, delay, tag in HETERO:
                    net = dict(kw, edge_rate=rate, link_delay_us=delay,
                               tag=tag)
                    out += [TslPoint(workers=n, **net)] + baselines(
                        workers=n, **net)
            elif part == "rounds-sweep":
                out += [TslPoint(scheme=sch, workers=n, rounds=r, **kw)
                        for sch in ("newreno", "dctcp") for r in (2, 8, 16)]
            elif part == "icws":
                out += [TslPoint(scheme="dctcp", workers=n, init_cwnd=w,
                                 tag="icws", **kw) for w in (1, 2, 4, 10)]
            elif part == "minth":
                out += [TslPoint(workers=n, min_th=m, tag="minth", **kw)
                        for m in (0.05, 0.1, 0.2, 0.3, 0.5)]
            elif part == "ablation":
                out += [TslPoint(workers=n, tag="ablation", **kw)] + [
                    TslPoint(workers=n, tag="ablation", **{f: False}, **kw)
                    for f in ("signal", "label_rtx", "protect", "cawa")]
    return out


def fairness_point(seed=1):
    """§5.7 at 256 KB: 5 long flows, one joining every stagger, all five
    for 'hold', leaving in order.  The paper's 5 s steps (45 s at 10
    Gbit/s: about 4e7 packets) are scaled to 20 ms: TCP converges in a few
    hundred RTTs of 8 us, far below either."""
    return TslPoint(scheme="tsl", mode="fairness", workers=5,
                    buffer=256 * KB, stagger=0.02, hold=0.02, sample=0.001,
                    seed=seed, max_time=5)


# ---------------------------------------------------------------- summary

def _key(r):
    p = r["point"]
    return (p["mode"], p["rounds"], p["buffer"], p["sru"], p["tag"],
            r["label"])


def curves(results):
    """{(mode, rounds, buffer, sru, tag, label): [(N, result)] by N}."""
    out = {}
    for r in results:
        out.setdefault(_key(r), []).append((r["point"]["workers"], r))
    return {k: sorted(v, key=lambda x: x[0]) for k, v in out.items()}


def largest_n(curve, target=TARGET):
    """The largest N of the grid up to which every point keeps 'target' of
    the link rate (None if even the smallest does not), and the largest N
    at which any point does (differs when a curve recovers after a dip)."""
    held = None
    for n, r in curve:
        if r["link_fraction"] < target:
            break
        held = n
    anyn = max((n for n, r in curve if r["link_fraction"] >= target),
               default=None)
    return held, anyn


def fairness(result):
    """Jain's index of the flows' throughput per sample while all of them
    run, from one stagger after the last joined (time to converge) until
    the first leaves; its mean, minimum, and the mean total throughput."""
    cfg = result["run"]["config"]
    n, dt = cfg["workers"], cfg["sample_s"]
    start = (n - 1) * cfg["stagger_s"] + cfg["stagger_s"]
    stop = (n - 1) * cfg["stagger_s"] + cfg["hold_s"]
    rows = [row for j, row in enumerate(result["run"]["result"]
                                        ["samples_bytes"])
            if start <= j * dt and (j + 1) * dt <= stop + cfg["stagger_s"]]
    jain = [sum(r) ** 2 / (n * sum(x * x for x in r))
            for r in rows if sum(r)]
    if not jain:
        return None
    return {"samples": len(jain), "jain_mean": sum(jain) / len(jain),
            "jain_min": min(jain),
            "total_gbps": sum(sum(r) for r in rows) * 8 / dt / 1e9
            / len(rows)}


def summarize(results):
    """Per experiment setting and scheme: largest N at >= 80% of the link,
    the RTOs there and beyond, and the paper's ordering at high N; Jain's
    index of the fairness run."""
    rows = []
    by_setting = {}
    for key, curve in sorted(curves(results).items(),
                             key=lambda kv: tuple(str(x) for x in kv[0])):
        mode, rounds, buf, sru, tag, label = key
        if mode != "incast":
            continue
        held, anyn = largest_n(curve)
        first_rto = next((n for n, r in curve if r["rto"] > 0), None)
        row = {"rounds": rounds, "buffer_kb": buf // KB, "sru_kb": sru // KB,
               "tag": tag, "scheme": label, "n_max_80pct": held,
               "n_any_80pct": anyn, "first_n_with_rto": first_rto,
               "goodput_gbps": {n: round(r["goodput_gbps"], 3)
                                for n, r in curve},
               "rto": {n: r["rto"] for n, r in curve},
               "rto_max_per_worker": {n: r["rto_max_per_worker"]
                                      for n, r in curve}}
        rows.append(row)
        by_setting.setdefault((rounds, buf, sru, tag), {})[label] = row
    ordering = []
    for (rounds, buf, sru, tag), rs in sorted(by_setting.items()):
        need = ("tsl", "dctcp", "newreno")
        if (tag and tag not in HETERO_TAGS) or \
                not all(s in rs for s in need):
            continue
        n = {s: rs[s]["n_max_80pct"] or 0 for s in need}
        tcp_best = max(rs[s]["n_max_80pct"] or 0 for s in rs
                       if s.startswith(("newreno", "cubic")))
        ordering.append({
            "rounds": rounds, "buffer_kb": buf // KB, "sru_kb": sru // KB,
            "tag": tag,
            "n_max_80pct": {s: rs[s]["n_max_80pct"] for s in rs},
            "tsl_gt_dctcp": n["tsl"] > n["dctcp"],
            "dctcp_gt_tcp": n["dctcp"] > tcp_best,
            "paper_ordering_holds": n["tsl"] > n["dctcp"] > tcp_best})
    fair = [fairness(r) for r in results if r["point"]["mode"] == "fairness"]
    return {"target_link_fraction": TARGET, "rows": rows,
            "ordering": ordering, "fairness": fair[0] if fair else None}


def table(summary):
    lines = ["%-6s %-7s %-7s %-22s %8s %8s %10s" % (
        "rounds", "buffer", "SRU", "scheme", "N@80%", "any N", "1st RTO N")]
    for r in summary["rows"]:
        lines.append("%-6d %-7s %-7s %-22s %8s %8s %10s" % (
            r["rounds"], "%dK" % r["buffer_kb"], "%dK" % r["sru_kb"],
            r["scheme"] + ("/" + r["tag"] if r["tag"] else ""),
            r["n_max_80pct"], r["n_any_80pct"], r["first_n_with_rto"]))
    for o in summary["ordering"]:
        lines.append("ordering %dK/%dK, %d round(s)%s: TSL > DCTCP > TCP: %s "
                     "(N@80%%: %s)" % (
                         o["buffer_kb"], o["sru_kb"], o["rounds"],
                         ", " + o["tag"] if o.get("tag") else "",
                         "yes" if o["paper_ordering_holds"] else "NO",
                         ", ".join("%s %s" % kv for kv in
                                   sorted(o["n_max_80pct"].items()))))
    f = summary.get("fairness")
    if f:
        lines.append("fairness: Jain's index with all flows running %.3f "
                     "(min %.3f over %d samples), total %.2f Gbit/s" % (
                         f["jain_mean"], f["jain_min"], f["samples"],
                         f["total_gbps"]))
    return "\n".join(lines)


# ---------------------------------------------------------------- figures

COLORS = {"tsl": "#d62728", "dctcp": "#1f77b4", "newreno": "#7f7f7f",
          "newreno+delack": "#bcbd22", "cubic": "#2ca02c",
          "cubic+delack": "#17becf"}


def _plot_panels(results, path, title, metric, ylabel, rounds=1, tag="",
                 hline=None):
    """One panel per buffer/SRU setting, one line per scheme label:
    'metric' of each point against N (the paper's Figs 2, 10, 12, 13)."""
    plt = paper.pyplot()
    cs = {k: v for k, v in curves(results).items()
          if k[0] == "incast" and k[1] == rounds and k[4] == tag}
    settings = sorted({(k[2], k[3]) for k in cs})
    if not settings:
        return None
    fig, axes = plt.subplots(1, len(settings),
                             figsize=(4.6 * len(settings), 3.6), squeeze=False)
    for ax, (buf, sru) in zip(axes[0], settings):
        for k, curve in sorted(cs.items(), key=lambda kv: kv[0][5]):
            if (k[2], k[3]) != (buf, sru):
                continue
            xs = [n for n, _ in curve]
            ys = [metric(r) for _, r in curve]
            ax.plot(xs, ys, marker="o", markersize=3, label=k[5],
                    color=COLORS.get(k[5]))
        if hline is not None:
            ax.axhline(hline, color="k", linestyle=":", linewidth=0.8)
        ax.set_title("buffer %d KB, SRU %d KB" % (buf // KB, sru // KB),
                     fontsize=9)
        ax.set_xlabel("senders N")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    paper.save(fig, path)
    return path


def _plot_fairness(results, path):
    plt = paper.pyplot()
    fr = [r for r in results if r["point"]["mode"] == "fairness"]
    if not fr:
        return None
    r = fr[0]
    cfg = r["run"]["config"]
    rows = r["run"]["result"]["samples_bytes"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i in range(cfg["workers"]):
        ys = [row[i] * 8 / cfg["sample_s"] / 1e9 for row in rows]
        xs = [(j + 1) * cfg["sample_s"] for j in range(len(rows))]
        ax.plot(xs, ys, linewidth=0.9, label="flow %d" % (i + 1))
    ax.set_xlabel("time, s")
    ax.set_ylabel("throughput, Gbit/s")
    ax.set_title("%s: %d long flows, buffer %d KB (Fig. 14, steps %g s)"
                 % (r["label"], cfg["workers"], cfg["buffer_bytes"] // KB,
                    cfg["stagger_s"]), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    paper.save(fig, path)
    return path


def figures(results, out_dir):
    """Every figure the results allow; returns their paths."""
    gp = (lambda r: r["goodput_gbps"])
    rto = (lambda r: r["rto_max_per_worker"])
    line = TARGET * LINK_BPS / 1e9
    made = [
        _plot_panels(results, os.path.join(out_dir, "incast-goodput.png"),
                     "goodput vs senders, one round (Figs 2, 13a)", gp,
                     "goodput, Gbit/s", hline=line),
        _plot_panels(results, os.path.join(out_dir, "incast-rto.png"),
                     "largest RTO count of a sender, one round", rto,
                     "RTOs (max per sender)"),
        _plot_panels(results, os.path.join(out_dir, "rounds-goodput.png"),
                     "goodput vs senders, 4 rounds (Figs 3, 13b)", gp,
                     "goodput, Gbit/s", rounds=4, hline=line),
        _plot_panels(results, os.path.join(out_dir, "wred-goodput.png"),
                     "TSL, maxTh_unlabel sweep (Fig. 10)", gp,
                     "goodput, Gbit/s", tag="wred", hline=line),
        _plot_panels(results, os.path.join(out_dir, "cawa-goodput.png"),
                     "TSL with/without CAWA, delayed ACK (Fig. 12a)", gp,
                     "goodput, Gbit/s", tag="cawa", hline=line),
        _plot_panels(results, os.path.join(out_dir, "cawa-rto.png"),
                     "TSL with/without CAWA: max RTOs (Fig. 12b)", rto,
                     "RTOs (max per sender)", tag="cawa"),
        _plot_panels(results, os.path.join(out_dir, "ablation-goodput.png"),
                     "TSL with one mechanism off", gp, "goodput, Gbit/s",
                     tag="ablation", hline=line),
        _plot_panels(results, os.path.join(out_dir, "timer-goodput.png"),
                     "TSL: host timer accuracy t_minAcc (Fig. 11)", gp,
                     "goodput, Gbit/s", tag="timer", hline=line),
        _plot_fairness(results, os.path.join(out_dir, "fairness.png")),
    ] + [
        _plot_panels(results, os.path.join(out_dir, "%s-goodput.png" % tag),
                     "goodput vs senders, %s, base RTT %g us (Fig. 13%s)"
                     % (rate, 4 * delay, "c" if rate == "1Gbps" else "d"),
                     gp, "goodput, Gbit/s", tag=tag,
                     hline=TARGET * (1 if rate == "1Gbps" else 10))
        for rate, delay, tag in HETERO]
    return [m for m in made if m]


# ---------------------------------------------------------------- outputs

CSV_FIELDS = ["name", "mode", "scheme", "label", "workers", "sru", "rounds",
              "buffer", "tag", "seed", "goodput_gbps", "link_fraction",
              "complete_rounds", "rto", "rto_max_per_worker",
              "fast_recovery", "sa_recovery", "dsp_sent", "drops", "marks",
              "delack_timeouts", "wall_s", "events", "ns3_version",
              "git_commit"]


def row(r):
    p, run = r["point"], r["run"]
    q = run.get("queues") or {}
    return {
        "name": r["name"], "mode": p["mode"], "scheme": p["scheme"],
        "label": r["label"], "workers": p["workers"], "sru": p["sru"],
        "rounds": p["rounds"], "buffer": p["buffer"], "tag": p["tag"],
        "seed": p["seed"], "goodput_gbps": r["goodput_gbps"],
        "link_fraction": r["link_fraction"],
        "complete_rounds": r["complete_rounds"], "rto": r["rto"],
        "rto_max_per_worker": r["rto_max_per_worker"],
        "fast_recovery": run["tcp"]["fast_recovery"],
        "sa_recovery": run["tcp"]["sa_recovery"],
        "dsp_sent": run["tcp"]["dsp_sent"],
        "drops": sum(v["dropped_packets"] for v in q.values()),
        "marks": sum(v["marked_packets"] for v in q.values()),
        "delack_timeouts": run["receiver"]["delack_timeouts"],
        "wall_s": r["metadata"]["wall_s"], "events": r["metadata"]["events"],
        "ns3_version": r["metadata"]["ns3_version"],
        "git_commit": r["metadata"]["git_commit"],
    }


def write_outputs(out_dir, results, errors, extra=None):
    """result.json (points, errors, summary, extra) and result.csv;
    returns the summary."""
    summary = summarize(results)
    sweep.write_outputs(out_dir, {r["name"]: r for r in results}, errors,
                        dict(extra or {}, summary=summary),
                        fields=CSV_FIELDS, row_of=row)
    return summary
