#!/usr/bin/env bash
# Plots `bench/run.sh strategies`: compute utilisation against link bandwidth, one line per
# strategy (docs/images/strategies-util-vs-bandwidth.png; only from a run of two links or more, so
# that a run of one link, e.g. LINKS=100Mbit, leaves that plot as it was), and peer 1's training
# loss against the bytes it has sent at LINK (default 100Mbit), one curve per strategy
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
links=$(awk '{print $2}' "$dir/figures" | sort -u | wc -l)

# One file per strategy: "Mbit/s utilisation", in link order.
# gnuplot's fifth default colour is a pale yellow: these stay apart on white, in strategy order.
colors=("#9400d3" "#009e73" "#56b4e9" "#e69f00" "#d55e00" "#0072b2" "#000000" "#cc79a7")
util_plot="" loss_plot="" k=0
for s in $strategies; do
  lc="lc rgb \"${colors[k++ % ${#colors[@]}]}\""
  awk -v s="$s" '$1 == s { bw = $2; sub(/Mbit$/, "", bw); print bw, $7 }' "$dir/figures" \
    >"$dir/$s.util"
  util_plot+="\"$dir/$s.util\" using 1:2 with linespoints pt 7 ps 0.8 $lc title \"$s\", "
  if [[ -s $dir/$s-$link.curve ]]; then
    loss_plot+="\"$dir/$s-$link.curve\" using (\$3 > 0 ? \$3 : 1/0):2 with linespoints pt 7 ps 0.5 $lc title \"$s\", "
  fi
done

util_lines=""
if ((links > 1)); then
  util_lines="set output \"$images/strategies-util-vs-bandwidth.png\"
set title \"4 peers, 50 ms one way: share of wall time in inner steps\"
set xlabel \"upload per peer, Mbit/s (log scale)\"
set ylabel \"compute utilisation\"
set yrange [0:1]
set key bottom right
plot ${util_plot%, }"
fi

gnuplot <<PLOT
set terminal pngcairo size 900,560 font "DejaVu Sans,11"
set logscale x
set grid
$util_lines
set output "$images/strategies-loss-vs-bytes.png"
set title "4 peers, $link and 50 ms links: training loss against bytes sent (peer 1)"
set xlabel "MB sent by peer 1 (log scale)"
set ylabel "training loss (mean over the last 10 steps)"
set autoscale y
set key top right
plot ${loss_plot%, }
PLOT
if ((links > 1)); then
  echo "plot-strategies: wrote $images/strategies-util-vs-bandwidth.png and strategies-loss-vs-bytes.png"
else
  echo "plot-strategies: wrote $images/strategies-loss-vs-bytes.png (one link: no utilisation plot)"
fi
