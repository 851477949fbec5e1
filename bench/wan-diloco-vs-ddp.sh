#!/usr/bin/env bash
# bench/run.sh wan-diloco-vs-ddp: the same model and total tokens trained by 4 real loco-peer
# processes and a loco-tracker on loopback, every peer's link shaped by loco's emulation to
# 100 Mbit/s upload and 50 ms one way: once with DiLoCo (H inner steps, int8 pseudo-gradients),
# once with the data-parallel baseline (fp32 gradients averaged every step). Model: the tiny GPT
# of configs/swarm-tiny.toml (2 layers, d 64, vocab 64, context 64, 108k parameters), batch 16 per
# peer per step, on 4M tokens of its Markov source cut into one shard per peer (enough that no
# peer reads a window twice in 600 steps: a peer that loops over a small shard overfits it, and
# DiLoCo's H local steps show that far more than DDP's averaged ones).
#
# Prints a table per run (final validation loss, bytes sent by all peers, wall time, compute
# utilisation = share of wall time in inner steps) and writes the runs' logs and loss-against-
# bytes curves to $OUT (default build/release/bench-wan; scripts/plot-wan.sh plots them).
# Last line: wan-diloco-vs-ddp: bytes_ratio=… loss_ratio=… time_ratio=… diloco_util=…
#   (DDP/DiLoCo for bytes and time, DiLoCo/DDP for loss).
# Usage: bench/run.sh wan-diloco-vs-ddp [STEPS [H]]   (defaults 600 and 30: 2 minutes on an idle machine here)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-600}
h=${2:-30}
peers=4
upload=100Mbit
latency=50ms
out=${OUT:-$root/build/release/bench-wan}

source "$root/bench/lib/swarm_runs.sh"
swarm_setup
swarm_config diloco "kind = \"diloco\"\ndiloco-h = $h\nouter-lr = 0.7\nouter-momentum = 0.9\ncodec = \"int8:block=256\"\ntracker-paced = false\n"
swarm_run diloco "$out/diloco.toml" $upload $latency
swarm_config ddp "kind = \"ddp\"\ncodec = \"fp32\"\n"
swarm_run ddp "$out/ddp.toml" $upload $latency
read -r d_loss d_sent d_wall d_util d_states < <(swarm_figures diloco)
read -r p_loss p_sent p_wall p_util p_states < <(swarm_figures ddp)
echo "model: GPT 2L d64 vocab 64 context 64 (108k parameters), $peers peers, batch 16 each,"
echo "  4M training tokens in $peers shards, $steps steps each ($((steps * peers * 16 * 64)) tokens in all), links $upload up, $latency one way"
printf "%-34s %10s %14s %9s %12s %7s\n" run val_loss sent_bytes wall_s compute_util states
printf "%-34s %10s %14s %9s %12s %7s\n" "diloco H=$h codec=int8:block=256" "$d_loss" "$d_sent" \
  "$d_wall" "$d_util" "$d_states"
printf "%-34s %10s %14s %9s %12s %7s\n" "ddp codec=fp32" "$p_loss" "$p_sent" "$p_wall" "$p_util" \
  "$p_states"
echo "(sent_bytes: all peers together, peer-to-peer bytes on the wire, tracker link not counted;
  states: distinct final state hashes, 1 = all peers equal)"
awk -v ds="$d_sent" -v ps="$p_sent" -v dl="$d_loss" -v pl="$p_loss" -v dw="$d_wall" \
  -v pw="$p_wall" -v du="$d_util" -v h="$h" 'BEGIN {
  printf "wan-diloco-vs-ddp: bytes_ratio=%.1f loss_ratio=%.4f time_ratio=%.2f diloco_util=%.3f H=%d codec=int8:block=256\n",
    ps / ds, dl / pl, pw / dw, du, h }'
