"""What every figure of the project shares - the testbed's, the Mininet
front end's (the same code), the simulator's and the comparisons' - so that
a scheme has one name and one colour wherever it is drawn and a figure is
ready for a paper:

    label(s), color(s)   the scheme's name in a legend and its colour
                         (the testbed's and the simulator's spellings of
                         one scheme, fq_codel and fq-codel, are one)
    pyplot()             matplotlib.pyplot on the Agg backend, imported on
                         first use (a command that draws nothing starts
                         without it), with the house style
    save(fig, path)      PATH (.png, 300 dpi) and the same figure as .pdf
                         and .svg beside it (vector, fonts embedded)
    value_axis(ax, vs)   a linear axis from 0 when the values span less
                         than a decade, else a log axis labelled at 1, 2, 5
                         x 10^k (so that 2.3 ms can be read off)
    floor_line(ax, y)    the run's latency floor, a dashed line with its
                         value in the legend
    legend_above(ax)     the legend in a row above the axes, never over the
                         bars
    na_labels(ax, ...)   "n/a" where a bar has no value, upright in its own
                         slot so that neighbours do not overlap
"""

import math
import os

# name -> (label, colour).  Related schemes share a hue: PIAS red, Panda
# blue (darker: the variants), FISH orange, fair queueing green.  Colours
# of the tab10/tab20 palettes, which stay apart in greyscale print.
SCHEMES = {
    "fifo": ("FIFO", "#7f7f7f"),
    "fifo-ecn": ("FIFO+ECN", "#c7c7c7"),
    "pias": ("PIAS", "#d62728"),
    "pias-pf": ("PIAS+per-flow", "#ff9896"),
    "fish": ("FISH", "#ff7f0e"),
    "fq_codel": ("FQ-CoDel", "#2ca02c"),
    "fq-codel-ns3": ("FQ-CoDel (ns-3)", "#98df8a"),
    "fq-drr": ("FQ (DRR)", "#bcbd22"),
    "panda": ("Panda", "#1f77b4"),
    "panda-pf": ("Panda+per-flow", "#aec7e8"),
    "panda-guard": ("Panda+guard", "#9467bd"),
    "panda-droptail": ("Panda, drop-tail", "#8c564b"),
    "panda-w1": ("Panda, weights 1", "#17becf"),
    "oracle": ("oracle (SRPT)", "#000000"),
}
# Other spellings of the same scheme: the simulator's fq_codel, and the
# testbed's DRR fair queueing as runs before 2026-11-27 named it.
ALIASES = {"fq-codel": "fq_codel", "fq": "fq-drr"}

FORMATS = ("png", "pdf", "svg")
DPI = 300

_plt = None


def _canon(scheme):
    return ALIASES.get(scheme, scheme)


def label(scheme):
    """The scheme's name in legends and tick labels."""
    return SCHEMES.get(_canon(scheme), (scheme, None))[0]


def color(scheme):
    """The scheme's colour (black for one the palette does not know)."""
    return SCHEMES.get(_canon(scheme), (None, "#000000"))[1]


def pyplot():
    """matplotlib.pyplot (Agg backend) with the house style: fonts that a
    two-column paper can shrink, TrueType fonts embedded in PDF (type 42,
    which publishers ask for), text kept as text in SVG."""
    global _plt
    if _plt is None:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.rcParams.update({
            "font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9,
            "legend.fontsize": 8, "xtick.labelsize": 8,
            "ytick.labelsize": 8, "pdf.fonttype": 42, "ps.fonttype": 42,
            "svg.fonttype": "none", "axes.spines.top": False,
            "axes.spines.right": False, "savefig.bbox": "tight",
            "savefig.pad_inches": 0.05})
        _plt = plt
    return _plt


def save(fig, path):
    """Writes 'fig' to 'path' (a .png, DPI dots per inch) and beside it as
    .pdf and .svg; closes it.  Returns the three paths, PNG first."""
    stem = os.path.splitext(path)[0]
    out = []
    for ext in FORMATS:
        p = "%s.%s" % (stem, ext)
        fig.savefig(p, dpi=DPI, metadata=_metadata(ext))
        out.append(p)
    pyplot().close(fig)
    return out


def _metadata(ext):
    # No creation date in PDF and SVG: the same data make the same bytes.
    return {"pdf": {"CreationDate": None},
            "svg": {"Date": None}}.get(ext)


def value_axis(ax, values, axis="y"):
    """Linear from 0 if the positive finite 'values' span less than a
    decade (ratios then read as lengths), else logarithmic with ticks at 1,
    2 and 5 x 10^k labelled in plain numbers.  Returns "linear" or
    "log"."""
    vs = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    set_scale = ax.set_yscale if axis == "y" else ax.set_xscale
    if not vs or max(vs) < 10 * min(vs):
        set_scale("linear")
        if axis == "y":
            ax.set_ylim(bottom=0)
        else:
            ax.set_xlim(left=0)
        return "linear"
    from matplotlib import ticker
    set_scale("log")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(ticker.LogLocator(base=10, subs=(1, 2, 5)))
    target.set_major_formatter(ticker.FuncFormatter(_plain))
    target.set_minor_locator(ticker.LogLocator(base=10,
                                               subs=(3, 4, 6, 7, 8, 9)))
    target.set_minor_formatter(ticker.NullFormatter())
    return "log"


def _plain(v, _pos=None):
    """A tick label without exponent notation: 0.02, 0.5, 2, 50, 2000."""
    if v <= 0:
        return ""
    return ("%.10f" % v).rstrip("0").rstrip(".") if v < 1 else "%g" % v


def floor_line(ax, y, text="floor"):
    """The run's latency floor (memcached unloaded, testbed/targets.py) as
    a dashed line, 'text' and its value written on it at the right (each
    panel its own), the legend saying what the dashed line is."""
    if y is None or not math.isfinite(y) or y <= 0:
        return None
    ax.annotate("%s %.3g ms" % (text, y), (1, y),
                xycoords=("axes fraction", "data"), xytext=(-2, 2),
                textcoords="offset points", ha="right", va="bottom",
                fontsize=7)
    return ax.axhline(y, color="black", ls="--", lw=0.9, zorder=3,
                      label="memcached unloaded")


def legend_above(ax, ncol=None, handles=None, labels=None):
    """The legend in rows above the axes (never over the data)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    n = len(handles)
    ncol = ncol or min(n, 4)
    return ax.legend(handles, labels, loc="lower left",
                     bbox_to_anchor=(0, 1.02, 1, 0.2), mode="expand",
                     ncol=ncol, frameon=False, borderaxespad=0,
                     handlelength=1.5)


def na_labels(ax, xs, ys, colors):
    """"n/a" upright at the foot of each bar slot whose value is missing
    (NaN or None): the large-flow bucket often has no completed flow."""
    for x, y, c in zip(xs, ys, colors):
        if y is None or (isinstance(y, float) and math.isnan(y)):
            ax.annotate("n/a", (x, 0), xycoords=("data", "axes fraction"),
                        xytext=(0, 2), textcoords="offset points",
                        rotation=90, ha="center", va="bottom", fontsize=6,
                        color=c)
