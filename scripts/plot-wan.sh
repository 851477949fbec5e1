#!/usr/bin/env bash
# Plots the curves of `bench/run.sh wan-diloco-vs-ddp` (peer 1's training loss against the bytes it
# has sent, DiLoCo and DDP, log scale) into docs/images/wan-loss-vs-bytes.png.
# Needs gnuplot (scripts/install-deps.sh --with-plots).
# Usage: scripts/plot-wan.sh [BENCH_OUT_DIR [PNG]]   (default build/release/bench-wan)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/release/bench-wan}
png=${2:-$root/docs/images/wan-loss-vs-bytes.png}
source "$root/scripts/plot-lib.sh"
plot_needs plot-wan wan-diloco-vs-ddp "$dir/diloco.curve" "$dir/ddp.curve"
h=$(sed -n 's/^diloco-h = \([0-9]*\).*/\1/p' "$dir/diloco.toml")
# The first progress lines may show 0.0 MB sent (before a round): plot from the first nonzero.
gnuplot <<PLOT
set terminal pngcairo size 900,560 font "DejaVu Sans,11"
set output "$png"
set title "4 peers, 100 Mbit/s and 50 ms links: training loss against bytes sent (peer 1)"
set xlabel "MB sent by peer 1 (log scale)"
set ylabel "training loss (mean over the last 10 steps)"
set logscale x
set key top right
set grid
plot "$dir/diloco.curve" using (\$3 > 0 ? \$3 : 1/0):2 with linespoints pt 7 ps 0.6 \
       title "DiLoCo H=$h, int8", \
     "$dir/ddp.curve" using (\$3 > 0 ? \$3 : 1/0):2 with linespoints pt 5 ps 0.6 \
       title "data-parallel, fp32 every step"
PLOT
echo "plot-wan: wrote $png"
