"""Where panda-sim's CPU time goes: one point under 'perf record'
(sampling, no call graphs: Debian's ns-3 has no frame pointers), the
samples' own time per function grouped into the parts of the simulation
(ns-3's TCP, IPv4, queue discs, packets, event scheduler, allocator, ...;
lib/panda and panda-sim's code together).  sim/run.py profile prints it;
sim/README.md ("Speed") quotes it.

Needs perf (Debian's linux-perf) and permission to sample the process.
"""

import os
import re
import shutil
import subprocess

from . import points as pts

# (part, regular expression over "[.] symbol"), first match wins: our code
# first, so that PandaSchedQueueDisc counts as ours, not as traffic
# control.
CATEGORIES = (
    ("lib/panda and panda-sim's own code",
     r"panda_|pandasim::|PandaSched|HostMarker|EcmpRouting|HandleQueue|"
     r"Oracle|MessageBook|ConnTable|MarkPolicy|SizeCollector|HostApp|"
     r"Workload|probe_find"),
    ("logging checks (NS_LOG compiled into Debian's ns-3)", r"LogComponent::"),
    ("event scheduler (std::map) and dispatch",
     r"MapScheduler|DefaultSimulatorImpl|EventImpl|MakeEvent|Simulator::|"
     r"EventId|Timer"),
    ("TCP (sockets, buffers, DCTCP, headers)", r"Tcp"),
    ("IPv4 (L3, interfaces, headers, demux)", r"Ipv4|Ip::|EndPoint"),
    ("traffic control (queue discs, ns-3 queues)",
     r"QueueDisc|TrafficControl|Queue<|NetDeviceQueue|QueueBase|QueueItem|"
     r"QueueSize"),
    ("point-to-point device and channel", r"PointToPoint|Channel"),
    ("packets, buffers, tags, headers",
     r"Packet|Buffer|Tag|Header|Trailer|Chunk"),
    ("callbacks and traces", r"Callback|_Function_handler|TracedValue"),
    ("object system (Ptr, TypeId, GetObject, dynamic_cast)",
     r"Object|TypeId|IidManager|dynamic_cast|dyncast|Ptr<|SimpleRefCount|"
     r"Node::|NetDevice"),
    ("allocator and memcpy (malloc/free, tcmalloc, operator new)",
     r"malloc|free|memmove|memcpy|memset|_int_|unlink_chunk|operator new|"
     r"operator delete|tcache|tc_|tcmalloc|strcmp|strlen"),
    ("std containers", r"_Rb_tree|std::"),
    ("kernel", r"\[k\]"),
)

_LINE = re.compile(r"\s*([\d.]+)%\s+(\S+)\s+(.*)")


class ProfileError(Exception):
    pass


def categorize(report):
    """'perf report --sort dso,sym' text -> ([(part, percent)] largest
    first, [(percent, dso, symbol)] of the top functions)."""
    parts, funcs = {}, []
    for line in report.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2), m.group(3)
        funcs.append((pct, dso, sym))
        for name, rx in CATEGORIES:
            if re.search(rx, sym) or (name.startswith("allocator")
                                      and "tcmalloc" in dso):
                parts[name] = parts.get(name, 0.0) + pct
                break
        else:
            parts["other"] = parts.get("other", 0.0) + pct
    return (sorted(parts.items(), key=lambda kv: -kv[1]),
            sorted(funcs, reverse=True))


def run(ctx, point, policy, freq=499):
    """Runs 'point' under perf record in ctx's point directory (not a
    result: no point.json); returns (parts, functions, report path)."""
    perf = shutil.which("perf")
    if not perf:
        raise ProfileError("perf not found (install linux-perf)")
    d = os.path.join(ctx.out_dir, "profile", point.name())
    os.makedirs(d, exist_ok=True)
    action = None
    if point.scheme in pts.POLICY_KIND:
        if not policy:
            raise ProfileError("--scheme=%s needs --policy" % point.scheme)
        action = policy[pts.POLICY_KIND[point.scheme]]["action"]
    data = os.path.join(d, "perf.data")
    cmd = [perf, "record", "-q", "-F", str(freq), "-o", data, "--",
           ctx.binary()] + point.args(ctx.top, action,
                                      point.flow_list_file(d)) \
        + ["--out=" + d]
    with open(os.path.join(d, "log.txt"), "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT,
                            env=pts.malloc_env(ctx.malloc)).returncode
    if rc != 0:
        raise ProfileError("perf record failed (exit %d): see %s" % (
            rc, os.path.join(d, "log.txt")))
    rep = subprocess.run([perf, "report", "-i", data, "--stdio",
                          "--no-children", "--sort", "dso,sym", "-g", "none",
                          "--percent-limit", "0"],
                         capture_output=True, text=True)
    if rep.returncode != 0:
        raise ProfileError("perf report failed: %s" % rep.stderr[-500:])
    path = os.path.join(d, "report.txt")
    with open(path, "w") as f:
        f.write(rep.stdout)
    parts, funcs = categorize(rep.stdout)
    return parts, funcs, path
