#!/bin/sh
# The flow generator's own ceiling on loopback: flows/s for 10 KB flows and
# Gbit/s for 10 MB flows, plus memcached GETs/s on one connection, so we know
# the generator is never the bottleneck at testbed rates (1 Gbit/s web-search
# at 0.8 load is about 60 flows/s).
#
# Usage: bench/lg-bench.sh [SECONDS]      (default 5 per figure)
# Binaries from $PANDA_BUILD_DIR, else _build-loadgen or _build.  Client and
# server share this machine's CPUs, so the figures are lower bounds.
set -e

secs=${1:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PANDA_BUILD_DIR:-}
if [ -z "$build" ]; then
    for d in "$top/_build-loadgen" "$top/_build"; do
        if [ -x "$d/load_generator/panda-fg-client" ]; then
            build=$d
            break
        fi
    done
fi
lg=$build/load_generator
if [ ! -x "$lg/panda-fg-client" ]; then
    echo "lg-bench.sh: no panda-fg-client under '$build' (build first or set" \
         "PANDA_BUILD_DIR)" >&2
    exit 1
fi

tmp=$(mktemp -d)
server_pid=
mc_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    [ -n "$mc_pid" ] && kill "$mc_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

"$lg/panda-fg-server" --bind 127.0.0.1 --port 0 --port-file "$tmp/port" \
    --quiet &
server_pid=$!
i=0
while [ ! -s "$tmp/port" ]; do
    i=$((i + 1))
    [ $i -gt 100 ] && { echo "lg-bench.sh: server did not start" >&2; exit 1; }
    sleep 0.05
done
port=$(cat "$tmp/port")

# fg NAME CLIENT-ARGS...: runs the client for $secs seconds and prints
# flows/s, goodput, the client's own CPU time per flow (user + system: the
# part that does not depend on what else runs on the machine) and FCT p50.
n=0
fg() {
    name=$1
    shift
    n=$((n + 1))
    "$lg/panda-fg-client" --port "$port" --duration "$secs" \
        --json "$tmp/$n.json" --quiet "$@"
    /usr/bin/python3 - "$tmp/$n.json" "$name" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
cpu = j["cpu_user_s"] + j["cpu_sys_s"]
print("%-46s %7.0f flows/s %6.2f Gbit/s  client CPU %5.1f us/flow "
      "(%3.0f%% of a core)  FCT p50 %.0f us"
      % (sys.argv[2], j["flows_per_s"], j["goodput_mbps"] / 1000,
         cpu / max(j["flows_completed"], 1) * 1e6,
         100 * cpu / j["elapsed_s"], j["fct_us"]["all"]["p50"]))
EOF
}

echo "panda-fg-client on loopback, $secs s per line, $(nproc) CPUs"
fg "10KB flows, new connection each, 32 in flight" --size 10K --connections 32
fg "10KB flows, pooled connections, 32 in flight" --size 10K --connections 32 --pool
fg "10MB flows, new connection each, 4 in flight" --size 10M --connections 4
fg "10MB flows, 1 in flight" --size 10M --connections 1
fg "web-search, open loop at 2 Gbit/s" --cdf "$top/load_generator/cdf/web-search.cdf" --load 2000

if command -v memcached >/dev/null; then
    mport=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    memcached -l 127.0.0.1 -p "$mport" -U 0 -u nobody &
    mc_pid=$!
    sleep 0.5
    "$lg/panda-mc-client" --port "$mport" \
        --cdf "$top/load_generator/cdf/memcached-values.cdf" \
        --requests 20000 --json "$tmp/mc.json" --quiet
    /usr/bin/python3 - "$tmp/mc.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
l = j["latency_us"]["get"]
print("%-46s %7.0f GETs/s    p50 %.1f us, p99 %.1f us, p99.9 %.1f us"
      % ("memcached GETs, 1 connection", j["requests_per_s"],
         l["p50"], l["p99"], l["p99.9"]))
EOF
fi
