#!/bin/sh
# The Poisson web-search points of poisson-memcached.txt: 20 seeds, pias and
# panda, memcached on (RPC_PAIRS=1, default) or off (RPC_PAIRS=0).
# Usage: RPC_PAIRS=1 BUILD=_build OUT=/tmp/pois sh run.sh   (from the top of the tree)
B=${BUILD:-_build}/sim/panda-sim
C=load_generator/cdf
OUT=${OUT:-/tmp/pois}
mkdir -p "$OUT"
T=21415/51341/138131/903520/1876707/4170134/7945926
for seed in $(seq 1 20); do
    for sch in pias panda; do
        if [ $sch = pias ]; then
            POL="id=2,kind=pias,thresholds=$T,dscp=1/2/3/4/5/6/7/8,queues=0/1/2/3/4/5/6/7"
        else
            POL="id=1,threshold=1448,thresholds=$T,dscp=1/2/3/4/5/6/7/8,queues=0/1/2/3/4/5/6/7"
        fi
        $B --scheme=$sch --cc=dctcp --topology=dumbbell --seed=$seed --max-time=33 \
           --warmup=3 --edge-rate=50Mbps --buffer-pkts=50 --ecn-pkts=20 \
           --rpc-pairs=${RPC_PAIRS:-1} --cdf=$C/web-search.cdf --load=0.8 \
           --flows=1000000 --rpc-cdf=$C/memcached-values.cdf --rpc-rate=500 \
           --policy=$POL --out=$OUT/$sch-s$seed > $OUT/$sch-s$seed.log 2>&1 &
    done
    wait
done
