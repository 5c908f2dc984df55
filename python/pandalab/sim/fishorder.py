"""FISH §2, Fig. 2: why PIAS needs per-flow queues.  Two servers through one
switch at 10 Gbit/s; server 1 sends 8 flows of 50 KB and 3 of 1000 KB to
server 2, one every t (1, 0.1 and 0.05 ms), small flows first (FISH's
scenario 1) or large flows first (scenario 2); the measure is the small
flows' mean FCT.  FISH: in the same interval, the large-first order costs
the small flows up to 19% (PIAS's FIFO levels let a large flow's first
bytes, at the top level with them, go first).

Here the flows are a fixed workload (panda-sim --flow-list), on the
dumbbell with FISH §4.1's settings (DCTCP, RTO_min 5 ms, delayed ACK
1 ms, 240-packet port buffer, ECN K 65 packets, PIAS's), every t and
order for each scheme.  The arrival interval is exactly t between
consecutive flows (FISH calls t the mean interval of its burst and does
not say how it draws it).  KB are 1000 bytes, the buckets' units: the
small flows are the (0, 100 KB] bucket, the large ones (100 KB, 10 MB].

Variants (--variants), one change each against the first:

  alpha1   ns-3's DCTCP as it comes: alpha starts at 1 (Linux's default),
           so a flow's first marked window halves it;
  alpha0   alpha starts at 0, as NS-2 DCTCP simulation scripts commonly
           set it (Agent/TCP set dctcp_alpha_ 0): a young flow hardly
           backs off from its first marks;
  no-ecn   no port ECN threshold (DCTCP sees no marks): the strict levels
           alone.

Policies: the marking schemes run the policy the model gives for web
search at load 0.8 on the same dumbbell (PIAS's thresholds for the
workload the network is tuned for, as FISH's §4 runs PIAS; Panda's T
from a FIFO collection with one memcached-like connection), not one fitted
to the 11 flows of the burst.  --policy runs a given file instead.
"""

import dataclasses

from .. import figures
from . import points as pts

ORDERS = ("small-first", "large-first")
INTERVALS_US = (1000, 100, 50)
SCHEMES = ("pias", "fish", "panda")
SMALL = (8, 50000)       # (flows, bytes): FISH's 8 flows of 50 KB
LARGE = (3, 1000000)     # and 3 of 1000 KB.
PAPER_MAX_RATIO = 1.19   # FISH §2: "at most 19%" worse (PIAS).
VARIANTS = {"alpha1": {}, "alpha0": {"dctcp_alpha_init": 0.0},
            "no-ecn": {"ecn_pkts": 0}}

# FISH §4.1's dumbbell (sim/run.py reproduce's fish41 points): the same
# network for the burst and for the policy's collection.
BASE = pts.Point(topology="dumbbell", edge_rate="10Gbps", cc="dctcp",
                 rpc_pairs=0, min_rto_ms=5, delack_ms=1, buffer_pkts=240,
                 ecn_pkts=65, max_time=2)
POLICY_POINT = dataclasses.replace(
    BASE, scheme="fifo", workload="web-search", load=0.8, flows=40,
    rpc_pairs=1, max_time=20, tag="fig2policy")


def flow_list(order, interval_us, small=SMALL, large=LARGE):
    """The --flow-list text of one scenario: a flow every interval_us,
    the small ones first or the large ones first."""
    if order not in ORDERS:
        raise ValueError("order: %r (%s)" % (order, ", ".join(ORDERS)))
    sizes = [small[1]] * small[0] + [large[1]] * large[0]
    if order == "large-first":
        sizes.reverse()
    lines = ["# FISH Fig. 2, %s, t = %g us: START_US SIZE"
             % (order, interval_us)]
    lines += ["%s %d" % (_us(i * interval_us), s) for i, s in enumerate(sizes)]
    return "\n".join(lines) + "\n"


def _us(x):
    """A start time in us as the list file takes it (decimal, no
    exponent)."""
    return ("%.3f" % x).rstrip("0").rstrip(".")


def points(intervals=INTERVALS_US, schemes=SCHEMES, seed=1,
           variants=tuple(VARIANTS)):
    """Every variant x t x order x scheme, t before order (the paper's
    panels).  The tag says order, t and variant: "large-first-t50us-alpha0"."""
    out = []
    for v in variants:
        if v not in VARIANTS:
            raise ValueError("variant %r (%s)" % (v, ", ".join(VARIANTS)))
        for t in intervals:
            for order in ORDERS:
                for s in schemes:
                    out.append(dataclasses.replace(
                        BASE, scheme=s, flows=SMALL[0] + LARGE[0], seed=seed,
                        flow_list=flow_list(order, t),
                        tag="%s-t%gus-%s" % (order, t, v), **VARIANTS[v]))
    return out


def cell_of(r):
    """(order, t in us, variant) of a result of points(), or Nones."""
    tag = r["point"]["tag"]
    for o in ORDERS:
        head, _, v = tag[len(o) + 2:].partition("us-")
        if tag.startswith(o + "-t") and v in VARIANTS:
            try:
                return o, float(head), v
            except ValueError:
                break
    return None, None, None


def summary(results):
    """One row per variant, scheme and t: the small flows' mean FCT in
    each order, the large-first / small-first ratio, the large flows' mean
    FCT, and how many flows completed."""
    cell = {}
    for r in results:
        o, t, v = cell_of(r)
        if o:
            cell[(v, r["point"]["scheme"], t, o)] = r
    rows = []
    vnames = list(VARIANTS)
    for v, s, t in sorted({k[:3] for k in cell},
                          key=lambda k: (vnames.index(k[0]),
                                         pts.SCHEMES.index(k[1])
                                         if k[1] in pts.SCHEMES else 99,
                                         -k[2])):
        row = {"variant": v, "scheme": s, "t_us": t}
        for o in ORDERS:
            r = cell.get((v, s, t, o))
            f = r["fct"] if r else None
            key = o.replace("-", "_")
            row[key + "_small_mean_ms"] = f["small"]["mean_ms"] if f else None
            row[key + "_large_mean_ms"] = f["medium"]["mean_ms"] if f else None
            row[key + "_completed"] = ("%d/%d" % (f["all"]["completed"],
                                                  f["all"]["flows"])
                                       if f else None)
            row[key + "_point"] = r["name"] if r else None
        a = row["small_first_small_mean_ms"]
        b = row["large_first_small_mean_ms"]
        row["ratio"] = b / a if a and b is not None else None
        rows.append(row)
    return rows


def table(rows):
    def ms(x):
        return "%8.4f" % x if x is not None else "       -"
    out = ["%-7s %-6s %6s %12s %12s %7s %12s %12s %11s" % (
        "variant", "scheme", "t ms", "small: S1st", "small: L1st", "L/S",
        "large: S1st", "large: L1st", "flows")]
    for r in rows:
        out.append("%-7s %-6s %6g %12s %12s %7s %12s %12s %11s" % (
            r["variant"], r["scheme"], r["t_us"] / 1000,
            ms(r["small_first_small_mean_ms"]),
            ms(r["large_first_small_mean_ms"]),
            "%.4f" % r["ratio"] if r["ratio"] is not None else "-",
            ms(r["small_first_large_mean_ms"]),
            ms(r["large_first_large_mean_ms"]),
            "%s %s" % (r["small_first_completed"] or "-",
                       r["large_first_completed"] or "-")))
    out.append("S1st / L1st: small / large flows first; L/S: the small "
               "flows' mean FCT large-first over small-first (FISH, PIAS: "
               "up to %.2f)" % PAPER_MAX_RATIO)
    return "\n".join(out)


def plot(rows, path):
    """FISH's Fig. 2 shape: a panel per t (columns) and variant (rows),
    the small flows' mean FCT per scheme in each order (hatched: large
    flows first)."""
    ts = sorted({r["t_us"] for r in rows}, reverse=True)
    vs = [v for v in VARIANTS if any(r["variant"] == v for r in rows)]
    plt = figures.pyplot()
    fig, axes = plt.subplots(len(vs), len(ts),
                             figsize=(3.6 * len(ts), 3.0 * len(vs) + 0.4),
                             squeeze=False)
    for ax, (v, t) in zip(axes.flat, [(v, t) for v in vs for t in ts]):
        sel = [r for r in rows if r["t_us"] == t and r["variant"] == v]
        shown = []
        for i, r in enumerate(sel):
            for j, o in enumerate(ORDERS):
                y = r[o.replace("-", "_") + "_small_mean_ms"]
                x = i + (j - 0.5) * 0.38
                ax.bar(x, y if y is not None else float("nan"), 0.36,
                       color=figures.color(r["scheme"]),
                       hatch="//" if o == "large-first" else None,
                       edgecolor="black", linewidth=0.4)
                shown.append(y)
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels([figures.label(r["scheme"]) for r in sel])
        ax.set_title("%s, t = %g ms" % (v, t / 1000), fontsize=9)
        ax.set_ylabel("small flows: mean FCT (ms)")
        figures.value_axis(ax, [v for v in shown if v is not None])
    from matplotlib.patches import Patch
    fig.legend([Patch(facecolor="white", edgecolor="black",
                      hatch="//" if o == "large-first" else None)
                for o in ORDERS], ["small flows first", "large flows first"],
               loc="upper center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_figheight()))
    figures.save(fig, path)
    return path
