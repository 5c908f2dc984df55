#!/bin/sh
for who in before after after before; do
  if [ $who = before ]; then b=/work/wt-fastpath-sched/_build-dpdk; else b=/work/wt-fastpath/_build-dpdk; fi
  n=$(ls /tmp/fp-ab/$who-*.json 2>/dev/null | wc -l)
  /usr/bin/python3 /work/wt-fastpath/bench/bench-fastpath.py --build $b --sizes 64 --conns 1000,20000 --mix-conns "" \
     --configs none,action,action-nohist,sched,action+sched,action+sched-shaped --two-pmd 1000:shared --reps 1 --seconds 3 --hugepages 64 \
     --json /tmp/fp-ab/$who-$n.json > /tmp/fp-ab/$who-$n.txt 2>&1
done
echo finished
