#!/usr/bin/env bash
# bench/run.sh train-vs-torch: trains the same GPT (4 layers, d_model 128, 4 heads, context 128,
# batch 16, vocabulary 256) with the same AdamW for the same number of steps in loco and in
# PyTorch on the CPU, 2 threads each, and compares tokens/s. PyTorch is measured at its best:
# OPENBLAS_NUM_THREADS=1 keeps OpenBLAS from oversubscribing the cores under torch's own threads.
# Before timing, it checks that loco's loss and gradients match PyTorch's for the same weights.
# Usage: bench/run.sh train-vs-torch [STEPS]   (default 10 steps per timed run, best of 3)
# Last line: "train-vs-torch: loco_tok_s=... torch_tok_s=... ratio=... gflop_s=... peak_fraction=..."
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-10}
python=/usr/bin/python3  # Debian's interpreter, the one that sees python3-torch

if ! "$python" -c "import torch, numpy" >/dev/null 2>&1; then
  echo "train-vs-torch: PyTorch is not installed for $python." >&2
  echo "  install it with: scripts/install-deps.sh --with-torch   (Debian's python3-torch)" >&2
  echo "train-vs-torch: loco_tok_s=nan torch_tok_s=nan ratio=nan (torch missing)"
  exit 1
fi

# (grep without -q reads all of ldconfig's output: -q would exit early and SIGPIPE fails the pipeline)
if ! ldconfig -p | grep libopenblas >/dev/null; then
  echo "train-vs-torch: warning: OpenBLAS is missing, so torch runs on the reference BLAS (~20x" >&2
  echo "  slower); install it with scripts/install-deps.sh --with-torch (libopenblas0-pthread)" >&2
fi

build_dir=${LOCO_BUILD_DIR:-$root/build/release}  # any Release build directory
"$root/scripts/build.sh" "$build_dir" Release -- bench-train_step >&2
bench="$build_dir/bin/bench-train_step"
model=(--layers 4 --d-model 128 --heads 4 --context 128 --batch 16 --vocab 256)

echo "== correctness: loco's loss and gradients against PyTorch's, same weights and batch"
check_dir=$(mktemp -d)
trap 'rm -rf "$check_dir"' EXIT
"$bench" "${model[@]}" --dump "$check_dir"
OPENBLAS_NUM_THREADS=1 "$python" "$root/bench/train_torch.py" --check "$check_dir"

echo "== speed: $steps steps per run, best of 3, 2 threads each (machine load: $(cut -d' ' -f1-3 /proc/loadavg))"
loco_out=$("$bench" "${model[@]}" --threads 2 --steps "$steps")
echo "$loco_out"
torch_out=$(OPENBLAS_NUM_THREADS=1 "$python" "$root/bench/train_torch.py" "${model[@]}" \
  --threads 2 --steps "$steps")
echo "$torch_out"
loco_line=$(tail -1 <<<"$loco_out")
torch_line=$(tail -1 <<<"$torch_out")

field() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p" <<<"$2"; }
loco_tok_s=$(field tok_s "$loco_line")
torch_tok_s=$(field tok_s "$torch_line")
gflop_s=$(field gflop_s "$loco_line")
peak=$(field sgemm_peak_gflop_s "$loco_line")
fraction=$(field peak_fraction "$loco_line")
ratio=$(awk -v a="$loco_tok_s" -v b="$torch_tok_s" 'BEGIN { printf "%.2f", a / b }')
echo "loco achieves $gflop_s GFLOP/s, $fraction of the $peak GFLOP/s Eigen sgemm peak measured in the same run"
echo "train-vs-torch: loco_tok_s=$loco_tok_s torch_tok_s=$torch_tok_s ratio=$ratio gflop_s=$gflop_s sgemm_peak_gflop_s=$peak peak_fraction=$fraction"
