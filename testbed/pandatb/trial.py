"""One trial: background web-search flows (closed loop, 'concurrency' in
flight) from PM2 to PM1, and, once they have ramped up, one persistent
memcached connection doing 'requests' GETs.  The load keeps running until
the memcached client has finished; both time windows go into the result so
the overlap can be checked."""

import collections
import json
import os
import re
import signal
import subprocess
import time

from . import pcap
from .topology import (FG_PORT, MEMCACHED_PORT, PM1_IP, PM2_IP, TOP,
                       end_process)

CDF_DIR = os.path.join(TOP, "load_generator", "cdf")
WEB_SEARCH_CDF = os.path.join(CDF_DIR, "web-search.cdf")
MEMCACHED_CDF = os.path.join(CDF_DIR, "memcached-values.cdf")

CONN_RE = re.compile(r"^\s*(\S+):(\d+) > (\S+):(\d+) counter=(-?\d+)"
                     r"(?: level=(\d+))?")


class TrialError(RuntimeError):
    pass


def parse_panda_show(text):
    """panda/show output -> {policy_id: {"action", "packets_per_level",
    "connections": [{src, sport, dst, dport, counter, level}]}}."""
    out = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"\s*policy (\d+):\s*(?:panda\((.*)\))?\s*$", line)
        if m:
            cur = {"action": m.group(2), "packets_per_level": None,
                   "connections": []}
            out[int(m.group(1))] = cur
            continue
        if cur is None:
            continue
        if "packets per level:" in line:
            vals = line.split("packets per level:")[1].split()
            cur["packets_per_level"] = [int(v.split(":")[1]) for v in vals]
            continue
        m = CONN_RE.match(line)
        if m:
            cur["connections"].append({
                "src": m.group(1), "sport": int(m.group(2)),
                "dst": m.group(3), "dport": int(m.group(4)),
                "counter": int(m.group(5)),
                "level": int(m.group(6)) if m.group(6) else None})
    return out


def tcpdump(host, path, bpf, snaplen=96, count=None):
    """Starts tcpdump in 'host' writing 'path' (at most 'count' packets);
    returns the Popen."""
    extra = ["-c", str(count)] if count else []
    # --immediate-mode: packets reach the file as they arrive, not when a
    # ring-buffer block times out, so a short trial's packets are not lost
    # when the capture is stopped right after it.
    p = host.popen("tcpdump", "-i", "eth0", "-s", str(snaplen), "-U", "-n",
                   "--immediate-mode",
                   *extra, "-w", path, bpf, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, text=True)
    # Wait for "listening on" so no packet of the trial is missed.
    deadline = time.monotonic() + 5
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
    if p.poll() is not None:
        raise TrialError("tcpdump failed: %s" % (buf + (p.stderr.read()
                                                         or "")).strip())
    return p


def stop_tcpdump(p):
    end_process(p, signal.SIGINT)


def _read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise TrialError("%s: no usable JSON summary (%s)" % (what, e))


def _ms(v):
    return None if v is None else v / 1000.0


def summarise_fct(fg):
    out = {}
    for bucket, st in (fg.get("fct_us") or {}).items():
        out[bucket] = {
            "completed": st.get("completed"),
            "unfinished": st.get("unfinished"),
            "mean_ms": _ms(st.get("mean")),
            "p50_ms": _ms(st.get("p50")),
            "p99_ms": _ms(st.get("p99")),
        }
    return out


FCT_BUCKETS = (("small", 0, 100000), ("medium", 100000, 10000000),
               ("large", 10000000, None), ("all", 0, None))


def _nearest_rank(sorted_vals, q):
    import math
    return sorted_vals[max(0, math.ceil(q / 100.0 * len(sorted_vals)) - 1)]


def fct_window(flows_path, t_from, t_to):
    """FCT per size bucket over the flows that STARTED in [t_from, t_to)
    (wall clock), from panda-fg-client's per-flow file.  The window has the
    same length for every scheme, so schemes whose memcached run is longer
    do not get more (or longer) flows counted.  Flows that did not complete
    are counted as unfinished, never averaged in."""
    done = {b[0]: [] for b in FCT_BUCKETS}
    unfinished = {b[0]: 0 for b in FCT_BUCKETS}
    with open(flows_path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fl = line.split()
            size, start = int(fl[1]), float(fl[2])
            if not t_from <= start < t_to:
                continue
            for name, lo, hi in FCT_BUCKETS:
                if size > lo and (hi is None or size <= hi):
                    if fl[6] == "1":
                        done[name].append(float(fl[4]) / 1000.0)
                    else:
                        unfinished[name] += 1
    out = {}
    for name, lo, hi in FCT_BUCKETS:
        v = sorted(done[name])
        out[name] = {
            "completed": len(v), "unfinished": unfinished[name],
            "mean_ms": sum(v) / len(v) if v else None,
            "p50_ms": _nearest_rank(v, 50) if v else None,
            "p99_ms": _nearest_rank(v, 99) if v else None}
    return out


def dscp_levels(path, dscp_map):
    """Memcached data packets received at PM1, per level (by DSCP), of the
    measurement connection: panda-mc-client first stores its keys on a
    connection of its own, then opens the measured one, so that is the
    connection seen last.  Returns (levels, other DSCPs)."""
    inv = {d: i for i, d in enumerate(dscp_map)}
    first = {}
    per_conn = collections.defaultdict(list)
    for p in pcap.tcp_packets(path):
        if p["sport"] != MEMCACHED_PORT or p["payload"] == 0:
            continue
        first.setdefault(p["dport"], p["ts"])
        per_conn[p["dport"]].append(p["dscp"])
    levels = collections.Counter()
    other = collections.Counter()
    if first:
        last = max(first, key=lambda port: first[port])
        for dscp in per_conn[last]:
            if dscp in inv:
                levels[inv[dscp]] += 1
            else:
                other[dscp] += 1
    return ({str(k): v for k, v in sorted(levels.items())},
            {str(k): v for k, v in sorted(other.items())})


def class_delta(before, after):
    out = {}
    for cls, a in sorted(after.items()):
        b = before.get(cls, {"bytes": 0, "packets": 0, "dropped": 0})
        out[cls] = {k: a[k] - b.get(k, 0)
                    for k in ("bytes", "packets", "dropped") if k in a}
    return out


def observed_cc(host):
    """Congestion control algorithms of PM2's established connections."""
    text = host.run("ss", "-Htin", "state", "established", check=False)
    algos = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"\s+(reno|cubic|bbr|dctcp|vegas|htcp|bic|westwood)\b",
                     line)
        if m:
            algos[m.group(1)] += 1
    return dict(algos)


def run_trial(tb, cfg, scheme, concurrency, requests, seed, workdir,
              policy_id=None, dscp_map=None, collect=False, log=None):
    """Runs one trial; returns its result dict (status "ok" or an error).
    cfg: warmup_s, keys, mc_timeout_s, fct_window_s, fct_grace_s."""
    log = log or (lambda m: None)
    os.makedirs(workdir, exist_ok=True)
    f = lambda name: os.path.join(workdir, name)  # noqa: E731
    res = {"scheme": scheme, "cc": tb.cc, "concurrency": concurrency,
           "requests": requests, "seed": seed, "status": "ok",
           "dir": workdir}
    procs = []
    fg = None
    try:
        tb.check_servers()
        before = tb.tc_classes()
        caps = [tcpdump(tb.pm1, f("mc-rx.pcap"),
                        "tcp src port %d" % MEMCACHED_PORT, snaplen=80)]
        if collect:
            # Thesis stage 1: packet sizes on the sending side (PM2), FLT
            # and FHT recorded separately.
            caps.append(tcpdump(tb.pm2, f("flt.pcap"),
                                "src host %s and tcp src port %d"
                                % (PM2_IP, MEMCACHED_PORT)))
            caps.append(tcpdump(tb.pm2, f("fht.pcap"),
                                "src host %s and tcp src port %d"
                                % (PM2_IP, FG_PORT),
                                count=cfg.get("fht_sample_pkts", 300000)))
        procs += caps
        t_load = time.time()
        if concurrency > 0:
            fg = tb.pm1.popen(
                tb.bin("load_generator/panda-fg-client"),
                "--server", PM2_IP, "--port", FG_PORT,
                "--cdf", WEB_SEARCH_CDF, "--concurrency", concurrency,
                "--duration", 3600, "--drain-timeout", 1,
                "--max-failures", 0, "--seed", seed,
                "--output", f("flows.txt"), "--json", f("fg.json"),
                "--no-progress", "--quiet",
                stdout=subprocess.DEVNULL, stderr=open(f("fg.err"), "w"))
            procs.append(fg)
            time.sleep(cfg["warmup_s"])
            if fg.poll() is not None:
                raise TrialError("panda-fg-client exited during warm-up "
                                 "(status %d): %s" % (
                                     fg.returncode, _tail(f("fg.err"))))
        mc = tb.pm1.popen(
            tb.bin("load_generator/panda-mc-client"),
            "--server", PM2_IP, "--port", MEMCACHED_PORT,
            "--cdf", MEMCACHED_CDF, "--requests", requests,
            "--keys", cfg["keys"], "--seed", seed, "--json", f("mc.json"),
            "--no-progress", "--quiet",
            stdout=subprocess.DEVNULL, stderr=open(f("mc.err"), "w"))
        procs.append(mc)
        deadline = time.monotonic() + cfg["mc_timeout_s"]
        show = None
        cc_seen = None
        t_mc = time.monotonic()
        next_note = t_mc + 15
        while mc.poll() is None:
            if time.monotonic() >= next_note:
                next_note += 15
                lvl = (show or {}).get("connection", {}).get("level")
                log("      ... memcached running for %.0f s%s" % (
                    time.monotonic() - t_mc,
                    "" if lvl is None else ", its connection at level %d"
                    % lvl))
            if time.monotonic() > deadline:
                raise TrialError("panda-mc-client did not finish within "
                                 "%d s" % cfg["mc_timeout_s"])
            if fg is not None and fg.poll() is not None:
                raise TrialError("panda-fg-client exited before the "
                                 "memcached client finished (status %d): %s"
                                 % (fg.returncode, _tail(f("fg.err"))))
            if cc_seen is None:
                cc_seen = observed_cc(tb.pm2)
            if scheme in ("pias", "panda"):
                snap = _mc_snapshot(tb, policy_id)
                if snap is not None:
                    show = snap
            time.sleep(0.5)
        t_mc_end = time.time()
        if fg is not None:
            # Keep the load up for the FCT window (same for every scheme).
            t_fct_end = t_load + cfg["warmup_s"] + cfg["fct_window_s"]
            while time.time() < t_fct_end + cfg["fct_grace_s"]:
                if fg.poll() is not None:
                    raise TrialError("panda-fg-client exited early (status "
                                     "%d): %s" % (fg.returncode,
                                                  _tail(f("fg.err"))))
                time.sleep(0.2)
            fg.send_signal(signal.SIGINT)
            try:
                fg.wait(timeout=30)
            except subprocess.TimeoutExpired:
                raise TrialError("panda-fg-client ignored SIGINT")
        after = tb.tc_classes()
        if scheme in ("pias", "panda"):
            res["panda_show"] = _final_show(tb, policy_id, show)
        time.sleep(0.3)
        for c in caps:
            stop_tcpdump(c)

        mcj = _read_json(f("mc.json"), "panda-mc-client")
        if mc.returncode not in (0, 2):
            raise TrialError("panda-mc-client failed (status %d): %s"
                             % (mc.returncode, _tail(f("mc.err"))))
        lat = (mcj.get("latency_us") or {}).get("all") or {}
        res["memcached"] = {
            "requests_ok": mcj.get("requests_ok"),
            "requests_failed": mcj.get("requests_failed"),
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
        if mcj.get("requests_failed"):
            res["status"] = "failed: %d memcached requests failed" \
                % mcj["requests_failed"]
        if fg is not None:
            fgj = _read_json(f("fg.json"), "panda-fg-client")
            res["fct_whole_run"] = summarise_fct(fgj)
            start = fgj.get("start_realtime") or t_load
            w0 = start + cfg["warmup_s"]
            # Without a window (trials outside experiment (c)): the flows
            # started between the warm-up and the memcached client's end.
            w1 = (w0 + cfg["fct_window_s"] if cfg["fct_window_s"] > 0
                  else t_mc_end)
            res["fct"] = fct_window(f("flows.txt"), w0, w1)
            res["fct_window"] = {"start": w0, "seconds": w1 - w0,
                                 "grace_s": cfg["fct_grace_s"]}
            res["load"] = {
                "window": [fgj.get("start_realtime"),
                           fgj.get("end_realtime")],
                "goodput_mbps": fgj.get("goodput_mbps"),
                "flows_completed": fgj.get("flows_completed"),
                "flows_unfinished": fgj.get("flows_unfinished"),
                "unfinished_reasons": fgj.get("unfinished_reasons"),
                "mean_in_flight": fgj.get("mean_in_flight"),
            }
            lw, mw = res["load"]["window"], res["memcached"]["window"]
            ok = (None not in lw + mw and mw[0] >= lw[0] + 0.5 *
                  cfg["warmup_s"] and mw[1] <= lw[1])
            res["overlap"] = {
                "ok": bool(ok), "warmup_s": cfg["warmup_s"],
                "load_window": lw, "memcached_window": mw,
                "load_before_s": None if None in lw + mw else mw[0] - lw[0],
                "load_after_s": None if None in lw + mw else lw[1] - mw[1]}
            if not ok and res["status"] == "ok":
                res["status"] = "failed: memcached window not inside the " \
                    "load window"
        res["tc_classes"] = class_delta(before, after)
        res["congestion_control_observed"] = cc_seen
        if dscp_map:
            lv, other = dscp_levels(f("mc-rx.pcap"), dscp_map)
            res["memcached_levels"] = lv
            if other:
                res["memcached_other_dscp"] = other
        res["elapsed_s"] = time.time() - t_load
        res["memcached_end_offset_s"] = t_mc_end - t_load
    except (TrialError, RuntimeError, OSError, pcap.PcapError) as e:
        res["status"] = "failed: %s" % e
    finally:
        for p in reversed(procs):
            end_process(p, signal.SIGINT)
    return res


def _mc_snapshot(tb, policy_id):
    """The memcached connection's entry in panda/show, or None."""
    show = parse_panda_show(tb.panda_show(policy_id))
    for pid, pol in show.items():
        for c in pol["connections"]:
            if c["sport"] == MEMCACHED_PORT and c["src"] == PM2_IP:
                return {"policy": pid, "connection": c,
                        "packets_per_level": pol["packets_per_level"],
                        "t": time.time()}
    return None


def _final_show(tb, policy_id, last_mc):
    show = parse_panda_show(tb.panda_show(policy_id))
    out = {"memcached_connection": last_mc}
    for pid, pol in show.items():
        out["policy_%d" % pid] = {
            "action": pol["action"],
            "packets_per_level": pol["packets_per_level"],
            "connections": len(pol["connections"])}
    return out


def _tail(path, n=400):
    try:
        with open(path) as f:
            return f.read()[-n:].strip()
    except OSError:
        return ""
