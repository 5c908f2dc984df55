"""One trial: background web-search flows (closed loop, 'concurrency' in
flight) from PM2 to PM1, and, once they have ramped up, one persistent
memcached connection doing 'requests' GETs.  The load keeps running until
the memcached client has finished (and, for experiment (c), until the FCT
window has closed); both time windows go into the result so the overlap can
be checked.

The load generator computes every figure (latency percentiles, FCT per
size bucket over the FCT window); the trial reads its JSON summaries.

Trial.run() goes through the phases launch -> watch -> stop -> collect ->
check, and ends every process it started, whatever happens."""

import collections
import os
import re
import signal
import subprocess
import time

from pandaovs import cli
from .. import iperf3, loadgen
from ..lab import FG_PORT, MEMCACHED_PORT
from ..sandbox import end_process
from . import pcap
from .topology import PM2_IP

NOTE_EVERY_S = 15       # progress line while memcached runs
POLL_S = 0.5


class TrialError(RuntimeError):
    pass


def tcpdump(host, path, bpf, snaplen=96, count=None, timeout=30,
            iface="eth0", direction=None):
    """Starts tcpdump on 'iface' in 'host' (a Netns) writing 'path' (at
    most 'count' packets; 'bpf' None: every frame; 'direction' "in" or
    "out": only those); returns the Popen once tcpdump says it is
    listening, so no packet of the trial is missed."""
    extra = ["-c", str(count)] if count else []
    extra += ["-Q", direction] if direction else []
    # --immediate-mode: packets reach the file as they arrive, not when a
    # ring-buffer block times out, so a short trial's packets are not lost
    # when the capture is stopped right after it.
    p = host.popen("tcpdump", "-i", iface, "-s", str(snaplen), "-U", "-n",
                   "--immediate-mode",
                   *extra, "-w", path, *([bpf] if bpf else []),
                   stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    buf = ""
    os.set_blocking(p.stderr.fileno(), False)
    while time.monotonic() < deadline and "listening on" not in buf:
        if p.poll() is not None:
            break
        try:
            chunk = p.stderr.read()
        except (OSError, TypeError):
            chunk = None
        if chunk:
            buf += chunk
        time.sleep(0.05)
    if "listening on" not in buf:
        end_process(p)
        raise TrialError("tcpdump did not start: %s"
                         % (buf + (p.stderr.read() or "")).strip())
    return p


def _ms(v):
    return None if v is None else v / 1000.0


def fct_summary(fct_us):
    """panda-fg-client's FCT buckets (fct_us / fct_window_us, microseconds)
    -> {bucket: {completed, unfinished, mean_ms, p50_ms, p99_ms,
    size_range_bytes}}, in the client's bucket order."""
    return {bucket: {"completed": st.get("completed"),
                     "unfinished": st.get("unfinished"),
                     "mean_ms": _ms(st.get("mean")),
                     "p50_ms": _ms(st.get("p50")),
                     "p99_ms": _ms(st.get("p99")),
                     "size_range_bytes": st.get("size_range_bytes")}
            for bucket, st in (fct_us or {}).items()}


def memcached_summary(mcj):
    """panda-mc-client's summary -> the trial's "memcached" record (ms)."""
    lat = (mcj.get("latency_us") or {}).get("all") or {}
    return {
        "requests_ok": mcj.get("requests_ok"),
        "requests_failed": mcj.get("requests_failed"),
        "requests_timed_out": mcj.get("requests_timed_out"),
        "outliers": mcj.get("outliers"),
        "mean_ms": _ms(lat.get("mean")),
        "p50_ms": _ms(lat.get("p50")),
        "p90_ms": _ms(lat.get("p90")),
        "p99_ms": _ms(lat.get("p99")),
        "p99.9_ms": _ms(lat.get("p99.9")),
        "max_ms": _ms(lat.get("max")),
        "window": [mcj.get("window_start_realtime"),
                   mcj.get("window_end_realtime")],
    }


def memcached_failure(mcj):
    """The trial's failure from panda-mc-client's summary, or None.

    A request that timed out (no response within --timeout, 10 s) is
    what the scheme under test did to it: strict priority without a guard
    can starve the memcached connection that long.  It is measured (counted,
    and in the percentiles at the time waited), not a failed trial: failing
    the trial would rerun it on --resume until it came out better.  Errors,
    lost connections and requests never sent are the harness's failures."""
    broken = (mcj.get("requests_failed") or 0) \
        - (mcj.get("requests_timed_out") or 0)
    if broken > 0:
        return "failed: %d memcached requests failed" % broken
    return None


def load_summary(fgj):
    """panda-fg-client's summary -> the trial's "load" record."""
    return {
        "window": [fgj.get("start_realtime"), fgj.get("end_realtime")],
        "goodput_mbps": fgj.get("goodput_mbps"),
        "flows_completed": fgj.get("flows_completed"),
        "flows_unfinished": fgj.get("flows_unfinished"),
        "unfinished_reasons": fgj.get("unfinished_reasons"),
        "mean_in_flight": fgj.get("mean_in_flight"),
    }


def overlap(load_window, mc_window, warmup_s):
    """Did the memcached window lie inside the load window, at least half
    the warm-up after the load's start?"""
    lw, mw = load_window, mc_window
    known = None not in lw + mw
    ok = known and mw[0] >= lw[0] + 0.5 * warmup_s and mw[1] <= lw[1]
    return {"ok": bool(ok), "warmup_s": warmup_s,
            "load_window": lw, "memcached_window": mw,
            "load_before_s": mw[0] - lw[0] if known else None,
            "load_after_s": lw[1] - mw[1] if known else None}


def measured_dscps(path):
    """The DSCPs of the memcached data packets received at PM1 (capture
    'path'), in order, of the measurement connection: panda-mc-client
    first stores its keys on a connection of its own, then opens the
    measured one, so that is the connection opened last.  Only the
    connections whose handshake the capture saw (memcached's SYN-ACK)
    count, so that a stray late packet of an earlier trial's connection
    (a retransmission that a low class delivered after the trial) is never
    taken for it; a capture without handshakes falls back to the
    connection whose data came first last."""
    first, opened = {}, {}
    per_conn = collections.defaultdict(list)
    for p in pcap.tcp_packets(path):
        if p["sport"] != MEMCACHED_PORT:
            continue
        if p["flags"] & 0x12 == 0x12:       # SYN-ACK
            opened.setdefault(p["dport"], p["ts"])
        if p["payload"] == 0:
            continue
        first.setdefault(p["dport"], p["ts"])
        per_conn[p["dport"]].append(p["dscp"])
    if not first:
        return []
    seen = {port: ts for port, ts in opened.items() if port in per_conn}
    pick = seen or first
    return per_conn[max(pick, key=lambda port: pick[port])]


def dscp_levels(path, dscp_map):
    """measured_dscps() per level (by the policy's DSCP map).  Returns
    (levels, other DSCPs)."""
    inv = {d: i for i, d in enumerate(dscp_map)}
    levels = collections.Counter()
    other = collections.Counter()
    for dscp in measured_dscps(path):
        if dscp in inv:
            levels[inv[dscp]] += 1
        else:
            other[dscp] += 1
    return ({str(k): v for k, v in sorted(levels.items())},
            {str(k): v for k, v in sorted(other.items())})


def level0_share(levels):
    """Share of the measured memcached connection's data packets that
    arrived with the top level's DSCP (levels: dscp_levels()'s counts per
    level), or None when none was captured."""
    n = sum(levels.values())
    return levels.get("0", 0) / n if n else None


def class_delta(before, after):
    out = {}
    for cls, a in sorted(after.items()):
        b = before.get(cls, {"bytes": 0, "packets": 0, "dropped": 0})
        out[cls] = {k: a[k] - b.get(k, 0)
                    for k in ("bytes", "packets", "dropped", "lended",
                              "borrowed") if k in a}
    return out


SCHED_COUNTERS = ("sent_p", "sent_b", "drop-limit", "drop-budget",
                  "drop-wred", "drop-push-out", "mark-ecn", "mark-wred",
                  "guard", "shared")


def level_delta(before, after):
    """panda-sched/show level counters (Lab.sched_show) over the trial:
    [{counter: after - before}] per level.  The runner reconfigures the
    QoS (a new scheduler, counters from 0) only between trials."""
    out = []
    for i, a in enumerate(after):
        b = before[i] if i < len(before) else {}
        out.append({k: a[k] - b.get(k, 0) for k in SCHED_COUNTERS
                    if k in a})
    return out


def observed_cc(host):
    """Congestion control algorithms of PM2's established connections."""
    text = host.run("ss", "-Htin", "state", "established", check=False)
    algos = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"\s+(reno|cubic|bbr|dctcp|panda_dctcp|vegas|htcp|"
                     r"bic|westwood)\b", line)
        if m:
            algos[m.group(1)] += 1
    return dict(algos)


def memcached_entry(show):
    """The memcached connection's entry in parsed panda/show, or None."""
    for pid, pol in show.items():
        for c in pol["connections"]:
            if c["sport"] == MEMCACHED_PORT and c["src"] == PM2_IP:
                return {"policy": pid, "connection": c,
                        "packets_per_level": pol["packets_per_level"],
                        "t": time.time()}
    return None


class Trial:
    """tb: a started Testbed; cfg: config.TrialConfig; policy: the
    pandaovs.policy.Policy of a pias/panda scheme (its id names the
    connection table to watch, its DSCP map the levels on the wire)."""

    def __init__(self, tb, cfg, scheme, concurrency, requests, seed,
                 workdir, policy=None, collect=False, log=None, note=None):
        self.tb = tb
        self.cfg = cfg
        self.scheme = scheme
        self.concurrency = concurrency
        self.requests = requests
        self.seed = seed
        self.dir = workdir
        self.policy = policy
        self.collect = collect
        self.log = log or (lambda m: None)
        # What the trial is doing now: a live line on a terminal
        # (pandalab.console), else a log line.
        self.note = note or self.log
        self.caps = []          # tcpdumps
        self.fg = self.mc = None
        self.bg = None          # background iperf3 streams
        self.res = {"scheme": scheme, "cc": tb.cc, "concurrency": concurrency,
                    "requests": requests, "seed": seed, "status": "ok",
                    "dir": workdir}

    def path(self, name):
        return os.path.join(self.dir, name)

    def run(self):
        """Runs the trial; returns its result dict (status "ok" or
        "failed: why")."""
        os.makedirs(self.dir, exist_ok=True)
        try:
            self.launch()
            self.watch()
            self.stop_load()
            self.collect_results()
            self.check()
        except (TrialError, loadgen.LoadgenError, RuntimeError, OSError,
                pcap.PcapError) as e:
            self.res["status"] = "failed: %s" % e
        finally:
            for c in (self.mc, self.fg):
                if c is not None:
                    c.stop()
            if self.bg is not None:
                self.bg.kill()
            for p in reversed(self.caps):
                end_process(p, signal.SIGINT)
        return self.res

    # -- phases ----------------------------------------------------------
    def launch(self):
        """Captures, then the load, the warm-up, then memcached."""
        tb, cfg = self.tb, self.cfg
        tb.check_servers()
        self.res["qos"] = tb.qos_record()
        self.before = tb.bottleneck_counters()
        self.tcp_before = tb.sender_tcp()
        self.caps.append(tcpdump(tb.pm1, self.path("mc-rx.pcap"),
                                 "tcp src port %d" % MEMCACHED_PORT,
                                 snaplen=80))
        if self.collect:
            # Thesis stage 1: packet sizes on the sending side (PM2), FLT
            # and FHT recorded separately.
            self.caps.append(tcpdump(tb.pm2, self.path("flt.pcap"),
                                     "src host %s and tcp src port %d"
                                     % (PM2_IP, MEMCACHED_PORT)))
            self.caps.append(tcpdump(tb.pm2, self.path("fht.pcap"),
                                     "src host %s and tcp src port %d"
                                     % (PM2_IP, FG_PORT),
                                     count=cfg.fht_sample_pkts))
        self.t_load = time.time()
        if self.concurrency > 0 and cfg.iperf3_streams:
            # Long-lived background streams on the flows' path, started
            # with the flows so that the warm-up covers both.
            self.bg = iperf3.Streams(tb.spawn, tb.pm2, tb.pm1,
                                     cfg.iperf3_streams, self.dir,
                                     tag="iperf3-bg")
        if self.concurrency > 0:
            # The FCT window opens after the warm-up; experiment (c) closes
            # it after a fixed time (the same for every scheme), other
            # trials when the load stops, right after memcached's end.
            window = "%g" % cfg.warmup_s
            if cfg.fct_window_s > 0:
                window += ":%g" % cfg.fct_window_s
            self.fg = loadgen.start_fg_client(
                tb.build, PM2_IP, FG_PORT, self.dir, host=tb.pm1,
                cdf=cfg.cdf or loadgen.WEB_SEARCH_CDF,
                connections=self.concurrency,
                duration=3600, drain_timeout=1, max_failures=0,
                seed=self.seed, output=self.path("flows.txt"),
                fct_window=window, no_progress=True, quiet=True)
            time.sleep(cfg.warmup_s)        # the load ramps up
            if self.fg.poll() is not None:
                raise TrialError("panda-fg-client exited during warm-up "
                                 "(status %d): %s" % (
                                     self.fg.returncode,
                                     self.fg.error_tail()))
        self.mc = loadgen.start_mc_client(
            tb.build, PM2_IP, MEMCACHED_PORT, self.dir, host=tb.pm1,
            cdf=loadgen.MEMCACHED_CDF, requests=self.requests,
            keys=cfg.keys, seed=self.seed, no_progress=True, quiet=True,
            **({"interval": "%dus" % cfg.mc_interval_us}
               if cfg.mc_interval_us else {}))

    def watch(self):
        """Until memcached ends: the load must keep running, and (pias,
        panda) the memcached connection's entry in panda/show is noted."""
        tb = self.tb
        self.show = None
        self.cc_seen = None
        t0 = time.monotonic()
        deadline = t0 + self.cfg.mc_timeout_s
        next_note = t0 + NOTE_EVERY_S
        while self.mc.poll() is None:
            now = time.monotonic()
            if now >= next_note:
                next_note += NOTE_EVERY_S
                lvl = (self.show or {}).get("connection", {}).get("level")
                self.note("      ... memcached running for %.0f s%s" % (
                    now - t0, "" if lvl is None
                    else ", its connection at level %d" % lvl))
            if now > deadline:
                raise TrialError("panda-mc-client did not finish within "
                                 "%d s" % self.cfg.mc_timeout_s)
            self._check_load("exited before the memcached client finished")
            if self.cc_seen is None:
                self.cc_seen = observed_cc(tb.pm2)
            if self.policy is not None:
                snap = memcached_entry(tb.panda_show(self.policy.id))
                if snap is not None:
                    self.show = snap
            time.sleep(POLL_S)
        self.t_mc_end = time.time()

    def _check_load(self, what):
        if self.fg is not None and self.fg.poll() is not None:
            raise TrialError("panda-fg-client %s (status %d): %s"
                             % (what, self.fg.returncode,
                                self.fg.error_tail()))
        if self.bg is not None and self.bg.poll() is not None:
            raise TrialError("the background iperf3 client %s (status %d)"
                             % (what, self.bg.poll()))

    def stop_load(self):
        """Keeps the load up until the FCT window (and its grace) has
        passed, then interrupts the flow client; reads the switch's final
        state and stops the captures."""
        tb, cfg = self.tb, self.cfg
        if self.fg is not None:
            t_end = (self.t_load + cfg.warmup_s + cfg.fct_window_s
                     + cfg.fct_grace_s)
            while time.time() < t_end:
                self._check_load("exited early")
                time.sleep(0.2)
            self.fg.interrupt()
        if self.bg is not None:
            bg, self.bg = self.bg, None
            self.res["iperf3_background"] = dict(
                bg.stop(), requested_streams=cfg.iperf3_streams)
        self.after = tb.bottleneck_counters()
        self.tcp_after = tb.sender_tcp()
        if self.policy is not None:
            self.res["panda_show"] = self._final_show()
        # Every memcached response had arrived when the client ended; the
        # pause lets tcpdump read the last ones from its socket (SIGINT
        # drops what it has not read).  A lost packet would only lower a
        # level's share a little, never fail a check.
        time.sleep(0.3)
        for p in self.caps:
            end_process(p, signal.SIGINT)

    def _final_show(self):
        out = {"memcached_connection": self.show}
        for pid, pol in self.tb.panda_show(self.policy.id).items():
            out["policy_%d" % pid] = {
                "action": pol["action"],
                "packets_per_level": pol["packets_per_level"],
                "connections": len(pol["connections"])}
        return out

    def collect_results(self):
        """Reads the programs' summaries into the result."""
        res = self.res
        mcj = self.mc.result()
        # EXIT_INCOMPLETE: some requests failed; the summary says which.
        if self.mc.returncode not in (cli.EXIT_OK, cli.EXIT_INCOMPLETE):
            raise TrialError("panda-mc-client failed (status %d): %s"
                             % (self.mc.returncode, self.mc.error_tail()))
        res["memcached"] = memcached_summary(mcj)
        failed = memcached_failure(mcj)
        if failed:
            res["status"] = failed
        if self.fg is not None:
            fgj = self.fg.result()
            win = fgj.get("fct_window") or {}
            res["fct_whole_run"] = fct_summary(fgj.get("fct_us"))
            res["fct"] = fct_summary(fgj.get("fct_window_us"))
            res["fct_window"] = {
                "start": win.get("start_realtime"),
                "seconds": (win["end_realtime"] - win["start_realtime"]
                            if win.get("end_realtime") else None),
                "grace_s": self.cfg.fct_grace_s}
            res["load"] = load_summary(fgj)
        if "tc_classes" in self.after:
            res["tc_classes"] = class_delta(self.before["tc_classes"],
                                            self.after["tc_classes"])
        else:
            res["sched_levels"] = level_delta(self.before["sched"],
                                              self.after["sched"])
        res["tcp_sender"] = {k: self.tcp_after[k] - self.tcp_before[k]
                             for k in self.tcp_after}
        res["congestion_control_observed"] = self.cc_seen
        dscp_map = list(self.policy.dscp) if self.policy else [0]
        lv, other = dscp_levels(self.path("mc-rx.pcap"), dscp_map)
        res["memcached_levels"] = lv
        res["memcached_level0_share"] = level0_share(lv)
        if other:
            res["memcached_other_dscp"] = other
        res["elapsed_s"] = time.time() - self.t_load
        res["memcached_end_offset_s"] = self.t_mc_end - self.t_load

    def check(self):
        """The memcached window must lie inside the load window."""
        res = self.res
        if self.fg is None:
            return
        res["overlap"] = overlap(res["load"]["window"],
                                 res["memcached"]["window"],
                                 self.cfg.warmup_s)
        if not res["overlap"]["ok"] and res["status"] == "ok":
            res["status"] = "failed: memcached window not inside the " \
                "load window"


def run_trial(tb, cfg, scheme, concurrency, requests, seed, workdir,
              policy=None, collect=False, log=None, note=None):
    """Runs one trial (see Trial); returns its result dict."""
    return Trial(tb, cfg, scheme, concurrency, requests, seed, workdir,
                 policy=policy, collect=collect, log=log, note=note).run()
