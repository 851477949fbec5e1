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
# Usage: bench/run.sh wan-diloco-vs-ddp [STEPS [H]]   (defaults 600 and 30: ~7 minutes here)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-600}
h=${2:-30}
peers=4
upload=100Mbit
latency=50ms
out=${OUT:-$root/build/release/bench-wan}

"$root/scripts/build.sh" "$root/build/release" Release -- loco-tracker loco-peer >&2
bin=$root/build/release/bin
rm -rf "$out"
mkdir -p "$out"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

"$bin/loco-tracker" keygen --out "$out/tracker.key" >/dev/null
for i in $(seq 1 $peers); do "$bin/loco-peer" keygen --out "$out/peer$i.key" >/dev/null; done

# run NAME KIND CODEC: one swarm; leaves $out/NAME.summary (the peers' summary lines) and
# $out/NAME.curve (peer 1's progress: step, training loss, MB sent by it).
run() {
  local name=$1 kind=$2 codec=$3
  sed -e "s/^steps = .*/steps = $steps/" -e "s/^kind = \"diloco\"/kind = \"$kind\"/" \
    -e "s/^diloco-h = [0-9]*/diloco-h = $h/" -e "s/^codec = .*/codec = \"$codec\"/" \
    -e "s/^log-every = .*/log-every = 10/" -e "s/^markov-train-tokens = .*/markov-train-tokens = 4000000/" \
    "$root/configs/swarm-tiny.toml" >"$out/$name.toml"
  "$bin/loco-tracker" --tracker.key "$out/tracker.key" --tracker.listen 127.0.0.1:0 \
    --tracker.http 127.0.0.1:0 --tracker.state-file "$out/$name.tracker-state" --run.id "$name" \
    --run.config "$out/$name.toml" --run.min-peers $peers --run.shard-count $peers --admission.policy open \
    >"$out/$name.tracker.out" 2>"$out/$name.tracker.log" &
  local tracker=$!
  pids+=("$tracker")
  local line=""
  for _ in $(seq 1 100); do
    line=$(head -n 1 "$out/$name.tracker.out")
    [[ -n $line ]] && break
    sleep 0.1
  done
  local address=${line#listening on }
  address=${address%% as *}
  local key=${line##* as }
  local started=$(date +%s.%N) peer_pids=()
  for i in $(seq 1 $peers); do
    "$bin/loco-peer" --peer.key "$out/peer$i.key" --run.id "$name" --run.config "$out/$name.toml" \
      --tracker.address "$address" --tracker.public-key "$key" --peer.upload $upload \
      --link.upload $upload --link.latency $latency \
      >"$out/$name.peer$i.out" 2>"$out/$name.peer$i.log" &
    peer_pids+=($!)
    pids+=($!)
  done
  for p in "${peer_pids[@]}"; do wait "$p"; done
  local ended=$(date +%s.%N)
  kill "$tracker" && wait "$tracker" || true
  grep -h '^peer .*: seconds=' "$out/$name".peer*.out >"$out/$name.summary"
  echo "$started $ended" >"$out/$name.wall"
  sed -n 's/.*step *\([0-9]*\)\/[0-9]* | loss \([0-9.]*\) .*| sent \([0-9.]*\) MB.*/\1 \2 \3/p' \
    "$out/$name.peer1.log" >"$out/$name.curve"
}

# figures NAME: "val_loss sent_bytes wall_s util states" over the run's peers.
figures() {
  awk -v wall="$(awk '{print $2 - $1}' "$out/$1.wall")" '
    { for (i = 3; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
      loss += v["val_loss"]; sent += v["sent_bytes"]; util += v["compute_s"] / v["seconds"]
      states[v["state"]] = 1; ++n }
    END { s = 0; for (k in states) ++s
          printf "%.4f %d %.1f %.3f %d\n", loss / n, sent, wall, util / n, s }' "$out/$1.summary"
}

run diloco diloco int8:block=256
run ddp ddp fp32
read -r d_loss d_sent d_wall d_util d_states < <(figures diloco)
read -r p_loss p_sent p_wall p_util p_states < <(figures ddp)
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
