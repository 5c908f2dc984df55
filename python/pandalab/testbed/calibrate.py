"""Link-rate calibration: p99 of a top-priority memcached connection,
unloaded and against web-search flows in the lowest queue, at several link
rates.  If the box's CPU were not a factor, the loaded p99 would shrink as
the rate grows (less time per MTU packet ahead in the top queue); where it
grows instead, the userspace datapath and the generators are fighting for
the CPU.  The default rate is the highest one that is still clearly in the
first regime."""

import dataclasses
import os
import time

from ..lab import PortConfig
from .config import TrialConfig
from .profiles import queue_pkts_for
from .topology import Testbed
from .trial import run_trial


def calibrate(build, qos, rates_mbit, concurrency, requests, workdir, seed=1,
              warmup_s=3, log=print, ports=PortConfig()):
    """'qos': the run's schemes.QosConfig; its rate and buffer are
    replaced by each rate's.  'ports': the switch ports (lab.PortConfig)."""
    rows = []
    for rate in rates_mbit:
        q = dataclasses.replace(qos, rate_bps=int(rate * 1e6),
                                queue_pkts=queue_pkts_for(rate * 1e6))
        # CUBIC, ECN-capable where the egress marks: what the calibration
        # was first measured with (no algorithm to register).
        with Testbed(build, q, ports=ports,
                     cc="ecn-cubic" if q.marks else "cubic") as tb:
            tb.set_scheme("prio")
            for conc in (0, concurrency):
                t0 = time.time()
                tb.wait_drained()
                r = run_trial(tb, TrialConfig(warmup_s=warmup_s,
                                              mc_timeout_s=600),
                              "prio", conc, requests, seed,
                              os.path.join(workdir, "r%g-c%d" % (rate, conc)))
                mc = r.get("memcached") or {}
                row = {"rate_mbit": rate, "qos": q.type,
                       "concurrency": conc,
                       "status": r["status"],
                       "p50_ms": mc.get("p50_ms"), "p90_ms": mc.get("p90_ms"),
                       "p99_ms": mc.get("p99_ms"),
                       "goodput_mbps": (r.get("load") or {}).get(
                           "goodput_mbps"),
                       "memcached_levels": r.get("memcached_levels"),
                       "loadavg": os.getloadavg()[0],
                       "seconds": time.time() - t0}
                rows.append(row)
                log("rate %5g Mbit/s  flows %2d  p50 %s p90 %s p99 %s ms  "
                    "goodput %s  load %.1f  (%s)" % (
                        rate, conc, _f(row["p50_ms"]), _f(row["p90_ms"]),
                        _f(row["p99_ms"]), _f(row["goodput_mbps"]),
                        row["loadavg"], r["status"]))
    return rows


def _f(v):
    return "-" if v is None else "%.3f" % v
