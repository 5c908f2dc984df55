"""ADPS's server-side experiments (seed 002) on the priority event
loop (load_generator/lg-evloop.h): panda-adp-server and panda-adp-client
over loopback, one server configuration ("mode") per run.

Experiment "queueing" (ADPS Fig. 1 and 5, scenario 2): every request takes
10 ms of processing; 5% are latency-sensitive (type LATS, classified by a
keyword rule, kind=match), 95% bulk (BULK); the client sends bursts
(ADPS's MCC sends each second's requests at line rate).  Modes: fifo (an
ordinary event loop), priority (LATS first), ideal (BULK dropped as it
arrives: what LATS would see if bulk traffic did not exist).

Experiment "blocking" (ADPS Fig. 2 and 6, scenario 6): 99.5% of requests
take 1 us (SHRT), 0.5% take 1 ms (LONG); Poisson arrivals.  Modes: fifo,
priority (non-preemptive priority queues: LNS), priority+core (LONG on a
dedicated worker thread: ADPS's event framework sending low-priority
events to a core of their own), optimum (LONG dropped as it arrives:
under preemptive priority a SHRT request never waits for a LONG one, so
its response times are exactly those of a server without LONG requests).

Decisions.  In "queueing" the latency-sensitive requests also take 10 ms:
ADPS's echo server processes every request for 10 ms and only the type
differs.  "queueing" spends its processing time sleeping (--work sleep) so
that a full run does not take a core from the other jobs of a shared
machine; "blocking" spins (microsecond requests cannot sleep).  What is
measured is the event loop's order, which the processing mode does not
change: both hold the handling thread.

Results: one JSON file (metadata, every run's client and server JSON, the
p99 of the sensitive type per mode and its ratio to the ideal or optimum)
and one plot per experiment (response-time CDF of the sensitive type per
mode, and its p99).  bench/adps-experiments.py is the command;
tests/loadgen/test_adps.py runs scaled-down versions and checks the order
of the modes, not machine-dependent times.
"""

import datetime
import json
import os
import platform
import subprocess
import tempfile
import time

from pandaovs import cli
from pandaovs.paths import TOP, BuildTree
from . import figures

QUEUEING = {
    "name": "queueing",
    "title": "5% latency-sensitive + 95% bulk, 10 ms each (ADPS Fig. 5)",
    "sensitive": "LATS",
    "policy": "id=1,kind=match,match=LATS:0,levels=2",
    "work": "sleep",
    "client": ["--mix", "LATS:5:10000,BULK:95:10000", "--burst", "40",
               "--interval", "500ms", "--requests", "4000",
               "--connections", "128"],
    "modes": {
        "fifo": ["--order", "fifo"],
        "priority": ["--order", "priority"],
        "ideal": ["--order", "fifo", "--drop-level", "1"],
    },
    "reference": "ideal",
}

BLOCKING = {
    "name": "blocking",
    "title": "99.5% 1 us + 0.5% 1 ms (ADPS Fig. 6)",
    "sensitive": "SHRT",
    "policy": "id=2,kind=match,match=SHRT:0,levels=2",
    "work": "spin",
    "client": ["--mix", "SHRT:995:1,LONG:5:1000", "--rate", "4000",
               "--requests", "200000", "--warmup", "2000",
               "--connections", "64"],
    "modes": {
        "fifo": ["--order", "fifo"],
        "priority": ["--order", "priority"],
        "priority+core": ["--order", "priority", "--offload-level", "1"],
        "optimum": ["--order", "fifo", "--drop-level", "1"],
    },
    "reference": "optimum",
}

EXPERIMENTS = {e["name"]: e for e in (QUEUEING, BLOCKING)}


def queueing_burst(burst):
    """QUEUEING's client arguments with bursts of 'burst' requests and
    the interval scaled with them, so that the offered load stays the
    same (40 requests of 10 ms every 500 ms: 0.8 of one worker).  The
    fifo/ideal ratio is about a burst's work over the ideal's tail, so it
    grows with the burst: this is how the paper's unstated burst size
    moves its 72x."""
    if burst < 1:
        raise ValueError("burst: at least 1 request (got %d)" % burst)
    args = list(QUEUEING["client"])
    args[args.index("--burst") + 1] = str(burst)
    i = args.index("--interval") + 1
    seconds = cli.parse_duration(args[i]) * burst / 40
    args[i] = "%gms" % (seconds * 1000)
    return args


class AdpsError(RuntimeError):
    pass


def sched_prefix(nice=0, rt=0):
    """The command prefix that runs a program at nice value 'nice' or, with
    'rt' (1..99), under SCHED_FIFO at that priority (root).  Both exist for
    the shared machine: a niced-up process still waits for a core behind
    the others' time slices (the run at load 9-11 could not tell the modes
    apart), while a real-time one takes a core the moment it wakes, as on
    a dedicated server, and leaves the others its idle time.  The
    priority+core mode's worker thread inherits the policy."""
    if rt:
        return ["chrt", "--fifo", str(rt)]
    return ["nice", "-n", str(nice)] if nice else []


def run_mode(exp, mode, build=None, client_args=None, seed=1, timeout=3600,
             nice=0, rt=0):
    """One run: a server in 'mode' of experiment 'exp', the client against
    it, both under sched_prefix(nice, rt).  Returns {"client": ...,
    "server": ...} (their JSON) and "samples", the answered sensitive
    requests' response times in us (for the plots; not written to the
    results file)."""
    prefix = sched_prefix(nice, rt)
    bt = BuildTree(build)
    server_bin = bt.loadgen("panda-adp-server")
    client_bin = bt.loadgen("panda-adp-client")
    with tempfile.TemporaryDirectory(prefix="adps-") as d:
        port_file = os.path.join(d, "port")
        server_json = os.path.join(d, "server.json")
        samples = os.path.join(d, "samples")
        srv = subprocess.Popen(
            prefix + [server_bin, "-q", "--port-file", port_file, "--policy",
             exp["policy"], "--work", exp["work"], "--json", server_json]
            + exp["modes"][mode])
        try:
            deadline = time.monotonic() + 30
            while not (os.path.exists(port_file)
                       and open(port_file).read().endswith("\n")):
                if srv.poll() is not None:
                    raise AdpsError("panda-adp-server exited (status %s)"
                                    % srv.returncode)
                if time.monotonic() > deadline:
                    raise AdpsError("panda-adp-server did not start")
                time.sleep(0.02)
            port = open(port_file).read().strip()
            res = subprocess.run(
                prefix + [client_bin, "--port", port, "--seed", str(seed),
                 "--samples", samples] + (client_args or exp["client"]),
                capture_output=True, text=True, timeout=timeout)
            if res.returncode:
                raise AdpsError("panda-adp-client: %s" % res.stderr.strip())
            client = json.loads(res.stdout)
        finally:
            srv.terminate()
            srv.wait(timeout=30)
        if srv.returncode:
            raise AdpsError("panda-adp-server exited with status %d"
                            % srv.returncode)
        with open(server_json) as f:
            server = json.load(f)
        with open(samples) as f:
            lat = [float(v) for t, v in (line.split() for line in f)
                   if t == exp["sensitive"] and float(v) >= 0]
    return {"client": client, "server": server, "samples": lat}


def sensitive_p99(run, exp):
    return run["client"]["types"][exp["sensitive"]]["latency_us"]["p99"]


def run_experiment(exp, build=None, reps=1, client_args=None, log=None,
                   nice=0, rt=0):
    """Every mode of 'exp', 'reps' times, modes interleaved within each
    repetition.  Returns the experiment's result dict."""
    runs = {m: [] for m in exp["modes"]}
    for rep in range(reps):
        for mode in exp["modes"]:
            if log:
                log("%s: %s, repetition %d/%d" % (exp["name"], mode,
                                                  rep + 1, reps))
            runs[mode].append(run_mode(exp, mode, build, client_args,
                                       seed=rep + 1, nice=nice, rt=rt))
    summary = {}
    for mode, rs in runs.items():
        p99s = sorted(sensitive_p99(r, exp) for r in rs)
        summary[mode] = {"p99_us_per_rep": p99s,
                         "p99_us_median": p99s[len(p99s) // 2]}
    ref = summary[exp["reference"]]["p99_us_median"]
    for mode in summary:
        summary[mode]["ratio_to_%s" % exp["reference"]] = \
            summary[mode]["p99_us_median"] / ref if ref else None
    # The client arguments the runs had, not only the experiment's default.
    return {"experiment": dict(exp, client=list(client_args or exp["client"])),
            "runs": runs, "summary": summary}


def metadata(argv, build=None):
    def git(*args):
        try:
            return subprocess.run(["git"] + list(args), capture_output=True,
                                  text=True, timeout=10,
                                  cwd=TOP).stdout.strip()
        except OSError:
            return None
    return {
        "argv": list(argv),
        "started_utc": datetime.datetime.now(
            datetime.timezone.utc).isoformat(),
        "host": platform.node(),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "git_commit": git("rev-parse", "HEAD"),
        "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "build_dir": BuildTree(build).root,
        "network": "loopback (client and server on one host); TCP_NODELAY",
    }


def plot(result, path):
    """Response-time CDF of the sensitive type per mode, and its p99."""
    plt = figures.pyplot()

    exp = result["experiment"]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4),
                                 gridspec_kw={"width_ratios": [2, 1]})
    for mode, rs in result["runs"].items():
        lat = sorted(x for r in rs for x in r["samples"])
        if lat:
            ax.plot(lat, [(i + 1) / len(lat) for i in range(len(lat))],
                    label=mode)
    ax.set_xscale("log")
    ax.set_xlabel("%s response time (us)" % exp["sensitive"])
    ax.set_ylabel("CDF")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    modes = list(result["summary"])
    bx.bar(modes, [result["summary"][m]["p99_us_median"] for m in modes])
    bx.set_yscale("log")
    bx.set_ylabel("p99 (us)")
    bx.tick_params(axis="x", rotation=30)
    fig.suptitle(exp["title"])
    fig.tight_layout()
    figures.save(fig, path)
