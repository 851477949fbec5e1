#!/usr/bin/env bash
# bench/run.sh torch-peers: 4 PyTorch peers (docs/examples/pytorch/train_gpt.py, through the
# Python package) against 4 loco-peer, two runs of the same run config (the tiny GPT of
# configs/swarm-tiny.toml on token files from loco-prepare, DiLoCo H = 20, int8 Δ) and the same
# links (each peer's upload shaped to 100 Mbit/s, 50 ms one way), a loco-tracker on loopback each.
# Both runs' final θ are judged by the same evaluator (the example's, bench/torch_eval.py for the
# loco-peer run's checkpoint) on the same validation windows. Per kind: the final validation loss,
# the bytes the peers sent, and loco's time per round: in the PyTorch peers by phase (gather,
# Δ, encode + all-reduce + commit, hash, outer step, write back: loco_round_times), in loco-peer
# its network wait (its round overlaps the next inner phase: the wait is its whole cost to the
# trainer). Last line:
#   torch-peers: loss_ratio=… sync_overhead_s=… bytes_ratio=…
# loss_ratio, bytes_ratio: PyTorch run ÷ loco-peer run; sync_overhead_s: the PyTorch peers' mean
# seconds in loco's part of a round.
# The PyTorch peers overlap their rounds with their next inner steps (train_gpt.py --overlap:
# round_start, round_land), as loco-peer does; BLOCKING=1 gives them blocking rounds (round()).
# STREAMING=1 makes the run config Streaming DiLoCo (P = 2, τ = 5, α = 0.5, fp4 fragments) for both
# kinds: the PyTorch peers then run the example's fragment rounds, and the figures are per fragment
# round.
# MODEL=own: the PyTorch peers train the trainer's own model instead, a 2-layer LSTM language model
# (docs/examples/pytorch/train_lstm.py, 140k parameters, context 16) whose genesis file names the
# run's model ([model] kind = "external"; same data, H, codec, outer learning rate and links;
# outer momentum $OUTER_MOMENTUM, default 0.5, where the GPT's run has 0.9: with H = 20 and 10-15
# rounds, 0.9 overshoots this model, docs/PYTORCH.md "MODEL=own"), and the
# baseline is that model trained by one process with DDP-equivalent steps at equal tokens:
# "DDP-equivalent" means that each optimizer step of the one process is the step DDP over the 4
# peers would take with no communication limit: one AdamW step on the gradient of the mean loss
# over 4 x 16 = 64 windows (DDP averages the 4 workers' gradients of their 16-window means: the
# same gradient), same genesis, learning rate and clipping, as many optimizer steps as each peer
# takes (STEPS), so as many tokens as the 4 peers together (windows drawn from the whole file, the
# peers' from their shards). Both are judged by the example's evaluator on the same validation
# windows. loco-peer still runs the GPT (it trains loco's own models only): its network wait per
# round is the reference for loco's overhead, and both overheads are given per million
# parameters of the model they average. Last line:
#   torch-peers: model=own loss_ratio=… overhead_s_per_mparam=… loco_peer_s_per_mparam=… 
# loss_ratio: the PyTorch peers' mean final validation loss ÷ the one process's (goal ≤ 1.03);
# overhead_s_per_mparam: the PyTorch peers' mean seconds in loco's part of a round (as
# sync_overhead_s) per million parameters of the LSTM; loco_peer_s_per_mparam: loco-peer's network
# wait per round per million parameters of the GPT. A part that cannot run prints nan and exits 1.
# Usage: bench/run.sh torch-peers [STEPS]   (default 300 per peer)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-300}
peers=4
link=100Mbit
latency=50ms
h=20
python=/usr/bin/python3  # Debian's interpreter, the one that sees python3-torch
out=${OUT:-$root/build/release/bench-torch-peers}
model=${MODEL:-gpt}
nan_line="torch-peers: loss_ratio=nan sync_overhead_s=nan bytes_ratio=nan"
if [[ $model == own ]]; then
  nan_line="torch-peers: model=own loss_ratio=nan overhead_s_per_mparam=nan loco_peer_s_per_mparam=nan"
  if [[ -n ${STREAMING:-} ]]; then
    echo "torch-peers: MODEL=own runs DiLoCo rounds only, not STREAMING" >&2
    echo "$nan_line (STREAMING)"
    exit 1
  fi
  # Any step that fails leaves the figures unknown: nan, and exit 1.
  set -E
  trap 'echo "$nan_line (a step failed: see $out)"; exit 1' ERR
elif [[ $model != gpt ]]; then
  echo "torch-peers: MODEL is gpt (the default) or own, not '$model'" >&2
  echo "$nan_line (MODEL=$model)"
  exit 2
fi

if ! "$python" -c "import torch, numpy" >/dev/null 2>&1; then
  echo "torch-peers: PyTorch is not installed for $python (scripts/install-deps.sh --with-torch)" >&2
  echo "$nan_line (torch missing)"
  exit 1
fi

source "$root/bench/lib/swarm_runs.sh"
"$root/scripts/build.sh" "$root/build/release" Release -DLOCO_PYTHON=ON -- loco-prepare loco_python >&2
swarm_setup
"$bin/loco-prepare" --log-level warn --source markov --markov.vocab 64 \
  --markov.train-tokens 4000000 --markov.val-tokens 50000 \
  --train-out "$out/train.bin" --val-out "$out/val.bin"

# The run config: configs/swarm-tiny.toml reading the token files, $steps steps.
sed -e "s/^steps = .*/steps = $steps/" -e "s/^diloco-h = [0-9]*/diloco-h = $h/" \
  -e '/^\[data\]/,/^$/c\[data]\nsource = "files"\ntrain-file = "'"$out"'/train.bin"\nval-file = "'"$out"'/val.bin"\n' \
  "$root/configs/swarm-tiny.toml" >"$out/run.toml"
rounds=$((steps / h))  # landed by the end of the run: DiLoCo's, or Streaming's fragment rounds
if [[ -n ${STREAMING:-} ]]; then
  sed -i 's/^kind = "diloco"/kind = "streaming"/' "$out/run.toml"
  printf 'fragments = 2\ntau = 5\nalpha = 0.5\nfragment-codec = "fp4:block=64"\n' >>"$out/run.toml"
  rounds=$((steps / h * 2 - 1))  # the last fragment is in flight at the end
fi
n_head=$(sed -n 's/^n-head = \([0-9]*\).*/\1/p' "$out/run.toml")
echo "model: GPT 2L d64 vocab 64 context 64 (108k parameters), $peers peers, batch 16 each, $steps steps (H $h)"
echo "  PyTorch peers' rounds: $([[ -n ${STREAMING:-} ]] && echo "Streaming (P 2, tau 5)" || { [[ -n ${BLOCKING:-} ]] && echo blocking || echo overlapped; })"
[[ $model == own ]] && echo "  MODEL=own: the PyTorch peers train a 2-layer LSTM (docs/examples/pytorch/train_lstm.py), outer momentum ${OUTER_MOMENTUM:-0.5}; baseline: one process, batch $((peers * 16)), $steps steps"
echo "  links: $link upload, $latency one way; machine load: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. loco-peer: peer 4 leaves its checkpoint, whose θ the example's evaluator judges.
swarm_run loco "$out/run.toml" "$link" "$latency" "--peer.checkpoint $out/loco.ckpt"
loco_val=$(PYTHONPATH="$root/build/release/python" OMP_NUM_THREADS=1 "$python" "$root/bench/torch_eval.py" "$out/loco.ckpt" "$out/val.bin" "$n_head")
loco_bytes=$(awk '{ for (i = 3; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
  s += v["sent_bytes"] } END { print s }' "$out/loco.summary")
loco_wait=$(awk -v r="$rounds" '{ for (i = 3; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
  s += v["network_wait_s"] } END { printf "%.4f", s / NR / r }' "$out/loco.summary")
loco_own_val=$(swarm_figures loco | awk '{ print $1 }')

# 2. PyTorch peers: the same run config, tracker and links (MODEL=own: the LSTM's run config, the
# GPT's but for its [model], the genesis file's lines).
overlap=(--overlap)
[[ -n ${BLOCKING:-} ]] && overlap=()
peer_script=$root/docs/examples/pytorch/train_gpt.py
torch_run=$out/run.toml
if [[ $model == own ]]; then
  peer_script=$root/docs/examples/pytorch/train_lstm.py
  torch_run=$out/own.toml
  (cd "$out" && PYTHONPATH="$root/build/release/python" "$python" "$peer_script" \
    --write-genesis genesis.safetensors) >"$out/genesis.lines"
  { sed -e '/^\[model\]/,/^$/d' -e '/^\[data\]/,/^$/d' \
      -e "s/^outer-momentum = .*/outer-momentum = ${OUTER_MOMENTUM:-0.5}/" "$out/run.toml"
    cat "$out/genesis.lines"; } >"$torch_run"
fi
swarm_tracker torch "$torch_run"
torch_pids=()
for i in $(seq 1 "$peers"); do
  cat >"$out/torch$i.toml" <<EOF
log-level = "warn"
[peer]
key = "$out/peer$i.key"
listen = "127.0.0.1:0"
upload = "$link"
[run]
id = "torch"
config = "$torch_run"
[tracker]
address = "$tracker_address"
public-key = "$tracker_key"
[link]
upload = "$link"
latency = "$latency"
EOF
  PYTHONPATH="$root/build/release/python" OMP_NUM_THREADS=1 "$python" \
    "$peer_script" --config "$out/torch$i.toml" --train "$out/train.bin" \
    --val "$out/val.bin" --rounds "$((steps / h))" --seed "$i" "${overlap[@]}" \
    >"$out/torch.peer$i.out" 2>"$out/torch.peer$i.log" &
  torch_pids+=($!)
  swarm_pids+=($!)
done
for p in "${torch_pids[@]}"; do wait "$p"; done
kill "$tracker_pid" && wait "$tracker_pid" || true

# The PyTorch peers' figures: mean validation loss, bytes sent, states, and loco's time per round.
"$python" - "$out" "$peers" >"$out/torch.figures" <<'EOF'
import json, sys
out, peers = sys.argv[1], int(sys.argv[2])
phases = ["gather_s", "delta_s", "exchange_s", "hash_s", "outer_s", "write_back_s"]
val, sent, states, times, calls = [], 0, set(), {p: [] for p in phases}, []
for i in range(1, peers + 1):
    lines = [json.loads(l) for l in open(f"{out}/torch.peer{i}.out")]
    rounds, last = lines[:-1], lines[-1]
    val.append(last["val_loss"])
    sent += last["bytes_sent"]
    states.add(rounds[-1]["state"])
    for r in rounds:
        calls.append(r["round_s"])
        for p in phases:
            times[p].append(r["times"][p])
mean = lambda xs: sum(xs) / len(xs)
print(f"{mean(val):.6f} {sent} {len(states)} {mean(calls):.4f} " +
      " ".join(f"{mean(times[p]):.4f}" for p in phases))
EOF
read -r torch_val torch_bytes torch_states torch_call gather delta exchange hash outer write <"$out/torch.figures"
torch_loco=$(awk -v a="$gather" -v b="$delta" -v c="$exchange" -v d="$hash" -v e="$outer" -v f="$write" \
  'BEGIN { printf "%.4f", a + b + c + d + e + f }')
[[ $model == own ]] && { source "$root/bench/lib/torch_own.sh"; torch_own_figures; exit; }

printf "%-9s %9s %12s %7s %10s\n" kind val_loss sent_bytes states round_s
printf "%-9s %9s %12s %7s %10s   (loco-peer's own evaluator: %s)\n" loco-peer "$loco_val" \
  "$loco_bytes" "$(swarm_figures loco | awk '{ print $5 }')" "$loco_wait" "$loco_own_val"
printf "%-9s %9s %12s %7s %10s   (the round call: %s s)\n" pytorch "$torch_val" "$torch_bytes" \
  "$torch_states" "$torch_loco" "$torch_call"
echo "pytorch peers' round by phase (s): gather $gather, delta $delta, encode+all-reduce+commit $exchange, hash $hash, outer step $outer, write back $write"
echo "(round_s: loco-peer's network wait per round; the PyTorch peers' loco time per round, the sum of its phases)"
echo "torch-peers: loss_ratio=$(awk -v a="$torch_val" -v b="$loco_val" 'BEGIN { printf "%.4f", a / b }') sync_overhead_s=$torch_loco bytes_ratio=$(awk -v a="$torch_bytes" -v b="$loco_bytes" 'BEGIN { printf "%.4f", a / b }')"
