#!/bin/sh
# One experiment of README.md: web search on the 50 Mbit/s dumbbell point of
# ../workloads-seeds20-2026-11-27/ (DCTCP, K = 20 packets over a 50-packet
# port, memcached GETs at 500/s Poisson, 33 s), seeds 1-20, for the given
# schemes, with the variant's panda-sim options added.  Two runs at a time.
# Usage (from the top of the tree):
#   sh docs/results/sim/largeflow-mechanism-2026-11-27/run.sh VARIANT ARRIVALS [SCHEMES]
#   VARIANT: base norpc pin0 pin6 pin7 pushout-off ecn-ahead guard50 guard200
#            constant-values
#   ARRIVALS: closed (14 flows in a closed loop, the seeds20 point) or
#             poisson (load 0.8)
#   SCHEMES: default "pias panda"
# Env: BUILD (default _build), OUT (default /tmp/largeflow), SEEDS
# (default "1 ... 20"), TRACE_MS (add --time-trace-ms=TRACE_MS: the
# runs' flows-time.csv, from which extract.py counts the flows that never
# reduced their window for ECN; the records are the same as untraced).
# Each run's files go to $OUT/$ARRIVALS/$VARIANT/$SCHEME-s$SEED/
# (flows.csv, rpc.csv, run.json); extract.py summarises them into
# runs.csv.
set -e
V=${1:?variant}
A=${2:?arrivals}
SCHEMES=${3:-pias panda}
B=${BUILD:-_build}/sim/panda-sim
C=load_generator/cdf
HERE=docs/results/sim/largeflow-mechanism-2026-11-27
OUT=${OUT:-/tmp/largeflow}
SEEDS=${SEEDS:-$(seq 1 20)}
T=21415/51341/138131/903520/1876707/4170134/7945926
case $A in
closed) ARR="--concurrency=14" ;;
poisson) ARR="--load=0.8" ;;
*) echo "run.sh: arrivals '$A': closed or poisson" >&2; exit 2 ;;
esac
case $V in
base) X="" ;;
norpc) X="--rpc-pairs=0" ;;
pin0) X="--rpc-level=0" ;;
pin6) X="--rpc-level=6" ;;
pin7) X="--rpc-level=7" ;;
pushout-off) X="--sched-extra=push-out=false" ;;
ecn-ahead) X="--sched-extra=ecn-ahead=true" ;;
guard50) X="--sched-extra=guard=50" ;;
guard200) X="--sched-extra=guard=200" ;;
constant-values) X="--rpc-cdf=$HERE/values-constant.cdf" ;;
trace) X="--time-trace-ms=10 --level-trace" ;;
*) echo "run.sh: unknown variant '$V'" >&2; exit 2 ;;
esac
if [ -n "$TRACE_MS" ]; then
    X="$X --time-trace-ms=$TRACE_MS"
fi
mkdir -p "$OUT/$A/$V"
for seed in $SEEDS; do
    for sch in $SCHEMES; do
        if [ "$sch" = pias ]; then
            POL="id=2,kind=pias,thresholds=$T,dscp=1/2/3/4/5/6/7/8,queues=0/1/2/3/4/5/6/7"
        else
            POL="id=1,threshold=1448,thresholds=$T,dscp=1/2/3/4/5/6/7/8,queues=0/1/2/3/4/5/6/7"
        fi
        d=$OUT/$A/$V/$sch-s$seed
        # The default values first: a variant's --rpc-cdf comes later and wins.
        echo "$B --scheme=$sch --cc=dctcp --topology=dumbbell --seed=$seed --max-time=33" \
             "--warmup=3 --edge-rate=50Mbps --buffer-pkts=50 --ecn-pkts=20 --rpc-pairs=1" \
             "--cdf=$C/web-search.cdf --flows=1000000 $ARR --rpc-cdf=$C/memcached-values.cdf" \
             "--rpc-rate=500 --policy=$POL $X --out=$d > $d.log 2>&1"
    done
done | xargs -P 2 -I CMD sh -c CMD
uptime
