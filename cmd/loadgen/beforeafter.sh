#!/bin/sh
# Delivery at 200 games, two or more builds alternated (docs/push.md): a fresh server and store per run.
# Usage: beforeafter.sh RUNS STORE_DIR label:server-binary:loadgen-binary:loadgen-flags ...
# STORE_DIR /var/tmp puts the store on disk, /dev/shm in memory. Each run prints the loadgen row, the
# server's bytes written to disk (/proc/PID/io) and CPU time (/proc/PID/stat) per move.
n=$1; store=$2; shift 2
for r in $(seq 1 $n); do i=0; for spec in "$@"; do i=$((i+1))
  label=${spec%%:*}; rest=${spec#*:}; srv=${rest%%:*}; rest=${rest#*:}; lg=${rest%%:*}; flags=${rest#*:}
  D=$(mktemp -d -p $store); port=$((38700 + r*10 + i))
  $srv -addr 127.0.0.1:$port -data $D/chess.db -log-level warn > $D/server.log 2>&1 &
  pid=$!; sleep 2
  out=$($lg -url http://127.0.0.1:$port -mode stream -games 200 -duration 30s -think 1s $flags 2>&1 | grep "^stream")
  wb=$(awk '/^write_bytes/{print $2}' /proc/$pid/io); ticks=$(awk '{print $14+$15}' /proc/$pid/stat)
  moves=$(echo "$out" | awk '{print $2}')
  printf "%-10s run %d load %-5s %s | disk KB/move %s cpu ms/move %s\n" $label $r "$(cut -d' ' -f1 /proc/loadavg)" "$out" \
    "$(echo "$wb $moves" | awk '{printf "%.1f", $1/$2/1024}')" "$(echo "$ticks $moves" | awk '{printf "%.3f", $1*10/$2}')"
  kill $pid; wait $pid 2>/dev/null; rm -rf $D
done; done
