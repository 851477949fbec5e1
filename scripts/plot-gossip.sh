#!/usr/bin/env bash
# Plots `bench/run.sh gossip`: peer 1's training loss against steps and against the MB it has
# sent, all-reduce mode and gossip mode with groups of 4 and of 2, into
# docs/images/gossip-loss.png. Needs gnuplot (scripts/install-deps.sh --with-plots).
# Usage: scripts/plot-gossip.sh [BENCH_OUT_DIR]   (default build/release/bench-gossip)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/release/bench-gossip}
png=$root/docs/images/gossip-loss.png
source "$root/scripts/plot-lib.sh"
plot_needs plot-gossip gossip "$dir"/{allreduce,gossip4,gossip2}.curve
gnuplot <<PLOT
set terminal pngcairo size 1100,480 font "DejaVu Sans,11"
set output "$png"
set multiplot layout 1,2 title "8 peers, DiLoCo H=20, 100 Mbit/s and 50 ms links (peer 1)"
set ylabel "training loss (mean over the last 10 steps)"
set grid
set key top right
set xlabel "step"
plot "$dir/allreduce.curve" using 1:2 with lines lw 2 title "all-reduce (one group)", \
     "$dir/gossip4.curve" using 1:2 with lines lw 2 title "gossip, groups of 4", \
     "$dir/gossip2.curve" using 1:2 with lines lw 2 title "gossip, pairs"
set xlabel "MB sent by peer 1"
plot "$dir/allreduce.curve" using 3:2 with lines lw 2 title "all-reduce (one group)", \
     "$dir/gossip4.curve" using 3:2 with lines lw 2 title "gossip, groups of 4", \
     "$dir/gossip2.curve" using 3:2 with lines lw 2 title "gossip, pairs"
unset multiplot
PLOT
echo "plot-gossip: wrote $png"
