"""The congestion-control conditions a run compares the schemes under
(--cc), and which of them are the thesis's own.

The thesis ran two (ch. 5):
  cubic   CUBIC senders that do not negotiate ECN (Linux's default
          net.ipv4.tcp_ecn=2: accept ECN when asked, never ask; PM1 opens
          every connection, so none is ECN-capable): every queue is
          drop-tail for them, whatever ECN threshold the switch has.  Figs
          5.1, 5.2 and 5.6 at 1 Gbit/s; its 10 Gbit/s figures (5.7-5.9,
          5.11) too, which mark nothing.
  dctcp   DCTCP on both hosts (ECN negotiated by the algorithm itself),
          with the switch marking CE above its port threshold K (30 KB at
          1 Gbit/s).  Figs 5.3, 5.4, 5.5 and 5.10.
Beside them, "ecn-NAME" runs algorithm NAME with ECN negotiated
(net.ipv4.tcp_ecn=1) - "ecn-cubic" is CUBIC answering each CE-marked
window as a loss (RFC 3168) - and any other name runs that algorithm
without ECN.  Those are conditions of our own: they never carry a thesis
figure's number (figure_number).

One table (THESIS_FIGURES) says which figure each condition's plots
answer; plots.py names the files after it.
"""

import dataclasses
from typing import Optional

ECN_PREFIX = "ecn-"

# The algorithms that negotiate ECN by themselves (the kernel's
# TCP_CONG_NEEDS_ECN): "ecn-dctcp" would name the same condition twice.
ECN_NATIVE = ("dctcp",)

# The thesis's figure numbers: profile -> condition -> one per plot kind
# (PLOTS), None where the thesis has no such figure under that condition.
PLOTS = ("p90-vs-requests", "p99-vs-requests", "latency-vs-concurrency",
         "fct-vs-concurrency")
THESIS_FIGURES = {
    "1g": {"cubic": ("5.1", "5.2", "5.6", None),
           "dctcp": ("5.3", "5.4", "5.5", "5.10")},
    "10g": {"cubic": ("5.7", "5.8", "5.9", "5.11")},
}


class ConditionError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Condition:
    name: str               # what --cc gives: "cubic", "ecn-cubic", ...
    algorithm: str          # the TCP congestion control asked for
    ecn: bool               # do the senders negotiate ECN?

    @property
    def tcp_ecn(self):
        """net.ipv4.tcp_ecn in PM1 and PM2: 1 (ask for ECN) for ECN
        conditions, 2 (Linux's default: accept, never ask) otherwise;
        DCTCP asks by itself (and its route carries "features ecn")."""
        return 1 if self.ecn else 2

    def thesis_unlike(self, profile, marks):
        """None if a run of this condition on 'profile' whose egress marks
        ECN ('marks': schemes.QosConfig.marks) is the thesis's, else how it
        differs."""
        if self.name not in THESIS_FIGURES.get(profile, {}):
            if self.ecn and self.algorithm != "dctcp":
                return ("%s negotiates ECN: the thesis ran CUBIC without "
                        "ECN and DCTCP with it, never a loss-based "
                        "algorithm with ECN" % self.name)
            return ("the thesis ran no %s figures at %s"
                    % (self.name, profile))
        if self.algorithm == "dctcp" and not marks:
            return ("DCTCP without a port ECN threshold (--ecn-threshold 0 "
                    "or linux-htb): the thesis's switch marked at K")
        return None

    def record(self, profile, marks, implementation=None):
        """What result.json keeps about the condition."""
        why = self.thesis_unlike(profile, marks)
        rec = {"name": self.name, "algorithm": self.algorithm,
               "senders_negotiate_ecn": self.ecn,
               "net.ipv4.tcp_ecn": self.tcp_ecn,
               "route": "congctl %s%s" % (
                   implementation.algorithm if implementation
                   else self.algorithm,
                   " features ecn" if self.algorithm in ECN_NATIVE else ""),
               "thesis_condition": why is None,
               "thesis_figures": dict(zip(PLOTS, THESIS_FIGURES[profile][
                   self.name])) if why is None else None,
               "not_thesis_because": why,
               "description": self.describe(marks)}
        if implementation is not None:
            rec["implementation"] = implementation.record()
        return rec

    def describe(self, marks):
        if self.algorithm == "dctcp":
            return ("DCTCP on PM1 and PM2 (ECN negotiated by the algorithm):"
                    " the window falls by alpha/2 per window of CE marks"
                    + ("" if marks else "; this egress marks nothing, so it "
                       "backs off on loss alone"))
        if self.ecn:
            return ("%s with ECN negotiated (tcp_ecn=1): %s"
                    % (self.algorithm, "each window with a CE mark is cut "
                       "as after a loss (RFC 3168)" if marks
                       else "this egress marks nothing"))
        return ("%s without ECN (tcp_ecn=2, Linux's default; PM1 opens the "
                "connections and does not ask): the port's ECN threshold "
                "marks only ECN-capable packets, so the queue is drop-tail "
                "for these" % self.algorithm)


def parse(name):
    """The Condition named 'name' (--cc's values); ConditionError if it is
    not one."""
    name = name.strip()
    ecn = name.startswith(ECN_PREFIX)
    algo = name[len(ECN_PREFIX):] if ecn else name
    if not algo or not all(c.isalnum() or c in "_-" for c in algo) \
            or len(algo) > 15:
        raise ConditionError("%r is not a congestion control name" % name)
    if ecn and algo in ECN_NATIVE:
        raise ConditionError("%s: %s negotiates ECN by itself; say %s"
                             % (name, algo, algo))
    return Condition(name, algo, ecn or algo in ECN_NATIVE)


def figure_number(condition, profile, marks, plot):
    """The thesis's number for plot kind 'plot' (PLOTS) of a run of
    'condition' (a Condition) on 'profile', or None where the run is not
    the thesis's condition or the thesis has no such figure."""
    if condition.thesis_unlike(profile, marks):
        return None
    return THESIS_FIGURES[profile][condition.name][PLOTS.index(plot)]


def figure_file(condition, profile, marks, plot):
    """The file name of a plot: "fig<number>-<plot>-<condition>.png" under
    the thesis's condition, "<plot>-<condition>.png" otherwise."""
    num = figure_number(condition, profile, marks, plot)
    base = "%s-%s.png" % (plot, condition.name)
    return "fig%s-%s" % (num, base) if num else base


def thesis_ecn_threshold(rate_bps):
    """The thesis's K (30 KB at 1 Gbit/s) scaled to 'rate_bps' in
    proportion, in bytes."""
    return int(round(30000 * rate_bps / 1e9))


def ecn_threshold_decision(threshold, rate_bps, concurrencies=(),
                           mss=1448, frame=1514, rtt_s=1e-3):
    """Why the port's ECN threshold is what it is (result.json
    metadata.qos.ecn_threshold_decision, testbed/README.md "Port ECN
    threshold"): the threshold against the thesis's K scaled with the
    rate, against the bytes the flows' minimum windows keep queued, and
    against DCTCP's guideline K > C * RTT / 7 for an RTT of 'rtt_s' (an
    upper bound of the testbed's unloaded round trip)."""
    scaled = thesis_ecn_threshold(rate_bps)
    guideline = rate_bps / 8 * rtt_s / 7
    rec = {
        "threshold_bytes": threshold,
        "thesis": "30000 bytes at 1 Gbit/s (0.24 ms of the link)",
        "scaled_to_rate_bytes": scaled,
        "threshold_ms_at_rate": round(threshold * 8 / rate_bps * 1e3, 3)
        if rate_bps else None,
        "dctcp_guideline": "K > C * RTT / 7 = %d bytes at %g Mbit/s for "
                           "an RTT of %g ms" % (guideline, rate_bps / 1e6,
                                                rtt_s * 1e3),
        "min_windows_bytes": {str(n): 2 * n * frame
                              for n in sorted(set(concurrencies))},
    }
    if threshold == scaled:
        rec["decision"] = "scaled with the rate, as the thesis's K is to 1 " \
                          "Gbit/s"
    elif threshold == 30000:
        rec["decision"] = (
            "kept in bytes (30000), not scaled: scaled to the rate it "
            "would be %d bytes, %s, while N flows at DCTCP's minimum window "
            "(2 segments) keep 2 * N frames queued whatever the rate (14 "
            "flows: %d bytes), so every packet would be marked and the "
            "queue would be set by the minimum windows, not by K.  In "
            "bytes, K stands to the flows' windows as the thesis's did (its "
            "14 flows' minimum windows, less its ~12 KB bandwidth-delay "
            "product, were about K); in time it is %g ms here against 0.24 "
            "ms there, so absolute latencies are larger by that.  DCTCP's "
            "guideline K > C * RTT / 7 (%d bytes) holds for both values and "
            "decides nothing here"
            % (scaled, "under one frame" if scaled < frame
               else "%.1f frames" % (scaled / frame), 2 * 14 * frame,
               round(threshold * 8 / rate_bps * 1e3, 2), guideline))
    elif threshold == 0:
        rec["decision"] = "off (--ecn-threshold 0): drop-tail"
    else:
        rec["decision"] = "set by --ecn-threshold"
    return rec
