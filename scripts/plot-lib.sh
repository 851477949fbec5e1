# Sourced by scripts/plot-*.sh: what a plot checks before it draws.

# plot_needs NAME BENCH FILE...: stops the plot NAME (exit 1) with what is missing: gnuplot, or a
# FILE that `bench/run.sh BENCH` writes (BENCH may carry its options).
plot_needs() {
  local name=$1 bench=$2 file
  shift 2
  command -v gnuplot >/dev/null || {
    echo "$name: gnuplot is missing: scripts/install-deps.sh --with-plots" >&2
    exit 1
  }
  for file in "$@"; do
    [[ -s $file ]] || {
      echo "$name: no $file: run bench/run.sh $bench first" >&2
      exit 1
    }
  done
}
