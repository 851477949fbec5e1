#!/usr/bin/env bash
# Plots `bench/run.sh strategies`: compute utilisation against link bandwidth, one line per
# strategy (docs/images/strategies-util-vs-bandwidth.png), and peer 1's training loss against the
# bytes it has sent at LINK (default 100Mbit), one curve per strategy
# (docs/images/strategies-loss-vs-bytes.png). Needs gnuplot (scripts/install-deps.sh --with-plots).
# Usage: scripts/plot-strategies.sh [BENCH_OUT_DIR [LINK]]   (default build/release/bench-strategies)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/release/bench-strategies}
link=${2:-100Mbit}
images=$root/docs/images
source "$root/scripts/plot-lib.sh"
plot_needs plot-strategies strategies "$dir/figures"
strategies=$(awk '{print $1}' "$dir/figures" | awk '!seen[$0]++' | tr '\n' ' ')

# One file per strategy: "Mbit/s utilisation", in link order.
util_plot="" loss_plot=""
for s in $strategies; do
  awk -v s="$s" '$1 == s { bw = $2; sub(/Mbit$/, "", bw); print bw, $7 }' "$dir/figures" \
    >"$dir/$s.util"
  util_plot+="\"$dir/$s.util\" using 1:2 with linespoints pt 7 ps 0.8 title \"$s\", "
  if [[ -s $dir/$s-$link.curve ]]; then
    loss_plot+="\"$dir/$s-$link.curve\" using (\$3 > 0 ? \$3 : 1/0):2 with linespoints pt 7 ps 0.5 title \"$s\", "
  fi
done

gnuplot <<PLOT
set terminal pngcairo size 900,560 font "DejaVu Sans,11"
set output "$images/strategies-util-vs-bandwidth.png"
set title "4 peers, 50 ms one way: share of wall time in inner steps"
set xlabel "upload per peer, Mbit/s (log scale)"
set ylabel "compute utilisation"
set logscale x
set yrange [0:1]
set key bottom right
set grid
plot ${util_plot%, }
set output "$images/strategies-loss-vs-bytes.png"
set title "4 peers, $link and 50 ms links: training loss against bytes sent (peer 1)"
set xlabel "MB sent by peer 1 (log scale)"
set ylabel "training loss (mean over the last 10 steps)"
set autoscale y
set key top right
plot ${loss_plot%, }
PLOT
echo "plot-strategies: wrote $images/strategies-util-vs-bandwidth.png and strategies-loss-vs-bytes.png"
