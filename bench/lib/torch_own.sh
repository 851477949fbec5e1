# Sourced by bench/torch-peers.sh for MODEL=own, once both runs are done: the one-process
# baseline of the LSTM (DDP-equivalent steps at equal tokens: the header of torch-peers.sh), the
# overheads per million parameters, and the last line.
# Needs: $root, $out, $python, $peers, $steps, $n_head, $loco_wait, and the PyTorch peers' figures
# ($torch_val, $torch_bytes, $torch_states, $torch_loco, $torch_call and the phases).
torch_own_figures() {
  local example=$root/docs/examples/pytorch
  local own_params gpt_params alone_val
  own_params=$("$python" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["parameters"])' \
    "$out/torch.peer1.out")
  gpt_params=$(PYTHONPATH="$example:$root/build/release/python" "$python" -c 'import sys; from train_gpt import GPT
print(sum(p.numel() for p in GPT(64, 64, 2, int(sys.argv[1]), 64).parameters()))' "$n_head")
  # One process, 4 x the peer batch, as many AdamW steps as each peer: the DDP-equivalent run.
  PYTHONPATH="$root/build/release/python" OMP_NUM_THREADS=1 "$python" "$example/train_lstm.py" \
    --alone --train "$out/train.bin" --val "$out/val.bin" --steps "$steps" \
    --batch $((peers * 16)) --seed 1 >"$out/alone.out" 2>"$out/alone.log"
  alone_val=$("$python" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["val_loss"])' \
    "$out/alone.out")
  local per_m='BEGIN { printf "%.4f", s / n * 1e6 }'
  local own_per_m loco_per_m
  own_per_m=$(awk -v s="$torch_loco" -v n="$own_params" "$per_m")
  loco_per_m=$(awk -v s="$loco_wait" -v n="$gpt_params" "$per_m")
  printf "%-15s %9s %10s %7s %10s %12s\n" kind val_loss parameters states round_s s_per_mparam
  printf "%-15s %9s %10s %7s %10s %12s\n" "one process" "$(printf %.6f "$alone_val")" \
    "$own_params" - - -
  printf "%-15s %9s %10s %7s %10s %12s   (the round call: %s s; sent %s bytes)\n" "pytorch (LSTM)" \
    "$torch_val" "$own_params" "$torch_states" "$torch_loco" "$own_per_m" "$torch_call" "$torch_bytes"
  printf "%-15s %9s %10s %7s %10s %12s\n" "loco-peer (GPT)" "$loco_val" "$gpt_params" - \
    "$loco_wait" "$loco_per_m"
  echo "pytorch peers' round by phase (s): gather $gather, delta $delta, encode+all-reduce+commit $exchange, hash $hash, outer step $outer, write back $write"
  echo "torch-peers: model=own loss_ratio=$(awk -v a="$torch_val" -v b="$alone_val" 'BEGIN { printf "%.4f", a / b }') overhead_s_per_mparam=$own_per_m loco_peer_s_per_mparam=$loco_per_m"
}
