#!/usr/bin/env bash
# Plots `bench/run.sh sim-gossip` at 16 and 64 peers: the peers' mean validation loss against
# rounds and against MB sent per peer, and their spread against rounds, all-reduce mode and gossip
# mode with groups of 4 and of 2, into docs/images/sim-gossip.png. Needs gnuplot
# (scripts/install-deps.sh --with-plots).
# Usage: scripts/plot-sim-gossip.sh [BENCH_OUT_DIR]   (default build/release/bench-sim-gossip,
#   holding p16/ and p64/ from bench/run.sh sim-gossip --peers 16 and --peers 64)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/release/bench-sim-gossip}
png=$root/docs/images/sim-gossip.png
source "$root/scripts/plot-lib.sh"
for peers in 16 64; do
  plot_needs plot-sim-gossip "sim-gossip --peers $peers" "$dir/p$peers"/{allreduce,gossip4,gossip2}.curve
done
# Columns: virtual_s mean_round loss spread bytes_per_peer.
lines() {  # lines X_EXPRESSION Y_COLUMN [gossip]   (gossip: no all-reduce lines)
  local sep=""
  for peers in 64 16; do
    local dash=1
    [[ $peers == 16 ]] && dash=2
    if [[ ${3:-} != gossip ]]; then
      printf '%s"%s/p%s/allreduce.curve" using %s:%s with lines lw 2 lc 1 dt %s title "all-reduce, %s peers"' \
        "$sep" "$dir" "$peers" "$1" "$2" "$dash" "$peers"
      sep=", "
    fi
    printf '%s"%s/p%s/gossip4.curve" using %s:%s with lines lw 2 lc 2 dt %s title "gossip g=4, %s peers"' \
      "$sep" "$dir" "$peers" "$1" "$2" "$dash" "$peers"
    sep=", "
    printf '%s"%s/p%s/gossip2.curve" using %s:%s with lines lw 2 lc 3 dt %s title "gossip g=2, %s peers"' \
      "$sep" "$dir" "$peers" "$1" "$2" "$dash" "$peers"
  done
}
gnuplot <<PLOT
set terminal pngcairo size 1500,480 font "DejaVu Sans,10"
set output "$png"
set multiplot layout 1,3 title "simulated peers training configs/sim-model.toml's GPT, DiLoCo H=20 int8, 100 Mbit/s and 50 ms links"
set grid
set key top right
set ylabel "mean validation loss"
set yrange [1.40:1.6]
set xlabel "round (mean over peers)"
plot $(lines 2 3)
set xlabel "MB sent per peer"
plot $(lines '($5/1e6)' 3)
set yrange [*:*]
set logscale y
set ylabel "spread (RMS distance from the mean, per value; all-reduce: 0)"
set xlabel "round (mean over peers)"
set key bottom right
plot $(lines 2 4 gossip)
unset multiplot
PLOT
echo "plot-sim-gossip: wrote $png"
