#!/usr/bin/env bash
# Plots the training curves of `bench/run.sh real-text` (bits per byte against training tokens:
# the 4-peer DiLoCo swarm and one process on the 8k subword dataset, one process on bytes) into
# docs/images/real-text-bpb.png.
# Needs gnuplot (scripts/install-deps.sh --with-plots).
# Usage: scripts/plot-real-text.sh [BENCH_OUT_DIR [PNG]]   (default build/release/bench-real-text)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/release/bench-real-text}
png=${2:-$root/docs/images/real-text-bpb.png}
source "$root/scripts/plot-lib.sh"
plot_needs plot-real-text real-text "$dir"/{subword-swarm,subword-single,bytes-single}.bpb
h=$(sed -n 's/^diloco-h = \([0-9]*\).*/\1/p' "$dir/subword-swarm.toml")
outer_lr=$(sed -n 's/^outer-lr = \([0-9.]*\).*/\1/p' "$dir/subword-swarm.toml")
outer_momentum=$(sed -n 's/^outer-momentum = \([0-9.]*\).*/\1/p' "$dir/subword-swarm.toml")
gnuplot <<PLOT
set terminal pngcairo size 900,560 font "DejaVu Sans,11"
set output "$png"
set title "GPT (2 layers, d 128) on Vim's documentation: training bits per byte"
set xlabel "training tokens (all peers together)"
set ylabel "training bits per byte (mean since the last point)"
set key top right
set grid
set yrange [1:*]
plot "$dir/subword-swarm.bpb" using 1:2 with linespoints pt 7 ps 0.6 \
       title "4 peers, DiLoCo H=$h, outer lr $outer_lr momentum $outer_momentum, int8 (8k subword)", \
     "$dir/subword-single.bpb" using 1:2 with linespoints pt 5 ps 0.6 \
       title "one process, batch x4 (8k subword)", \
     "$dir/bytes-single.bpb" using 1:2 with linespoints pt 9 ps 0.6 \
       title "one process, batch x4 (bytes)"
PLOT
echo "plot-real-text: wrote $png"
