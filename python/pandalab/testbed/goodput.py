"""The iperf3 cross-check of the load generator's goodput (result.json
"goodput_check"), once per run, before the experiments.

On the fifo scheme (plain forwarding, one queue), the run's workload at
the (a) concurrency runs for S seconds from panda-fg-client, exactly as in
a trial (closed loop, a new connection per flow, stopped by SIGINT, its
own goodput_mbps), then, once the queue has drained, iperf3 with as many
long-lived streams for the same S seconds on the same path (pandalab.iperf3:
PM1 opens, PM2 sends).  Both are reported with their ratio and against the
TCP goodput the link can carry (its rate times 1448/1514).  Neither can
be above that ceiling; a generator reporting more counts its bytes or its
time wrong.  Below it, the two differ by what their traffic costs: the
generator's flows pay slow starts and connection set-ups, and in a
drop-tail buffer a short flow that loses its last packets waits for a
retransmission timeout with nothing else to send, where iperf3's long
streams recover by fast retransmit (measured at 50 Mbit/s: generator /
iperf3 = 1.000 for web-search with port ECN, 0.99-1.02 for data-mining
and 0.90 and 1.01 in two web-search runs on drop-tail htb;
testbed/README.md, "Workloads")."""

import time

from .. import iperf3, loadgen
from ..lab import FG_PORT
from .topology import PM2_IP

MSS = 1448                  # TCP payload of a 1500-byte MTU with timestamps
FRAME = 1514


def cross_check(tb, cdf, workload_name, concurrency, seconds, seed, workdir,
                log=None):
    """Runs the check on the started Testbed 'tb'; returns its record
    ("status": "ok", "failed: ..." or "unavailable: ...")."""
    log = log or (lambda m: None)
    rec = {"seconds": seconds, "scheme": "fifo", "streams": concurrency,
           "workload": workload_name,
           "link_goodput_mbps": tb.rate_bps * MSS / FRAME / 1e6,
           "link_goodput_note": "the link rate times %d bytes of TCP payload "
                                "per %d-byte frame" % (MSS, FRAME)}
    why = iperf3.unavailable()
    if why:
        rec["status"] = "unavailable: " + why
        return rec
    tb.set_scheme("fifo")
    tb.wait_drained()
    fg = loadgen.start_fg_client(
        tb.build, PM2_IP, FG_PORT, workdir, host=tb.pm1, tag="fg", cdf=cdf,
        connections=concurrency, duration=3600, drain_timeout=1,
        max_failures=0, seed=seed, no_progress=True, quiet=True)
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if fg.poll() is not None:
                raise loadgen.LoadgenError(
                    "panda-fg-client exited early (status %d): %s"
                    % (fg.returncode, fg.error_tail()))
            time.sleep(0.2)
        fg.interrupt()
        fgj = fg.result()
    finally:
        fg.stop()
    rec["load_generator"] = {
        "goodput_mbps": fgj.get("goodput_mbps"),
        "bytes": fgj.get("bytes_received"),
        "seconds": fgj.get("elapsed_s"),
        "flows_completed": fgj.get("flows_completed"),
        "flows_unfinished": fgj.get("flows_unfinished")}
    tb.wait_drained()
    streams = iperf3.Streams(tb.spawn, tb.pm2, tb.pm1, concurrency, workdir,
                             seconds=seconds, tag="iperf3")
    rec["iperf3"] = streams.wait(timeout=seconds + 60)
    lg, ip = rec["load_generator"]["goodput_mbps"], rec["iperf3"][
        "goodput_mbps"]
    rec["ratio_load_generator_to_iperf3"] = lg / ip if lg and ip else None
    link = rec["link_goodput_mbps"]
    rec["load_generator_of_link"] = lg / link if lg else None
    rec["iperf3_of_link"] = ip / link if ip else None
    rec["status"] = "ok"
    return rec


def line(rec):
    """One line for the run's log."""
    if rec.get("status") != "ok":
        return "goodput cross-check: %s" % rec.get("status")
    return ("goodput cross-check (%d flows/streams, %g s, fifo): load "
            "generator %.1f Mbit/s, iperf3 %.1f Mbit/s, ratio %.3f; link "
            "carries %.1f Mbit/s of TCP payload" % (
                rec["streams"], rec["seconds"],
                rec["load_generator"]["goodput_mbps"] or 0,
                rec["iperf3"]["goodput_mbps"] or 0,
                rec["ratio_load_generator_to_iperf3"] or 0,
                rec["link_goodput_mbps"]))
