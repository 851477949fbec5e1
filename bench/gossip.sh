#!/usr/bin/env bash
# bench/run.sh gossip: gossip mode against all-reduce mode between real loco-peer processes and a
# loco-tracker on loopback: PEERS peers (default 8) train the tiny GPT of configs/swarm-tiny.toml
# with DiLoCo (H = 20, int8) for STEPS steps, each peer's upload shaped to 100 Mbit/s with 50 ms
# one way; once with one group of all peers per round (the tracker's rounds), once in gossip mode
# with groups of 4 and once with groups of 2 (NoLoCo's pairs).
# Per run: the peers' mean final validation loss and its spread (max − min over peers: 0 when
# they all hold one model), the distinct final states, bytes sent per peer, the share of a peer's
# rounds applied with partners, wall time and compute utilisation. $OUT/NAME.curve holds peer 1's
# loss against steps and MB sent (scripts/plot-gossip.sh).
# Last line: gossip: peers=… allreduce_loss=… gossip4_loss=… gossip2_loss=… gossip4_spread=…
#   gossip2_spread=… gossip4_bytes_vs_allreduce=… gossip2_bytes_vs_allreduce=…
# Usage: bench/run.sh gossip [STEPS]   (default 300: ~2 minutes on an idle machine here)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-300}
peers=${PEERS:-8}
out=${OUT:-$root/build/release/bench-gossip}

source "$root/bench/lib/swarm_runs.sh"
swarm_setup
diloco="kind = \"diloco\"\ndiloco-h = 20\nouter-lr = 0.7\nouter-momentum = 0.9\ncodec = \"int8:block=256\"\ntracker-paced = false\n"
echo "model: GPT 2L d64 vocab 64 context 64 (108k parameters), $peers peers, batch 16 each, $steps steps, H = 20,"
echo "  links 100Mbit up, 50ms one way"
printf "%-10s %9s %9s %7s %14s %9s %8s %6s\n" run val_loss spread states sent/peer grouped wall_s util
for run in allreduce gossip4 gossip2; do
  case $run in
    allreduce) swarm_config "$run" "$diloco" ;;
    gossip4) swarm_config "$run" "${diloco}gossip-group = 4\n" ;;
    gossip2) swarm_config "$run" "${diloco}gossip-group = 2\n" ;;
  esac
  swarm_run "$run" "$out/$run.toml" 100Mbit 50ms
  read -r loss sent wall util states < <(swarm_figures "$run")
  spread=$(awk '{ for (i = 3; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == "val_loss") v = kv[2] }
                  if (NR == 1 || v < lo) lo = v; if (NR == 1 || v > hi) hi = v }
                END { printf "%.4f", hi - lo }' "$out/$run.summary")
  # Rounds applied with at least one partner, over every peer's round lines.
  grouped=$(cat "$out/$run".peer*.out | awk '$1 == "round" { ++all; if ($5 >= 2) ++with }
                                             END { printf "%.2f", all ? with / all : 0 }')
  printf "%-10s %9s %9s %7s %14s %9s %8s %6s\n" "$run" "$loss" "$spread" "$states" \
    "$((sent / peers))" "$grouped" "$wall" "$util"
  echo "$run $loss $spread $((sent / peers))" >>"$out/figures"
done
echo "(val_loss: mean over peers; spread: max − min of the peers' validation losses; grouped: share"
echo "  of the peers' rounds applied with at least one partner)"
awk -v peers="$peers" '
  { loss[$1] = $2; spread[$1] = $3; sent[$1] = $4 }
  END { printf "gossip: peers=%d allreduce_loss=%.4f gossip4_loss=%.4f gossip2_loss=%.4f", peers, loss["allreduce"], loss["gossip4"], loss["gossip2"]
        printf " gossip4_spread=%.4f gossip2_spread=%.4f", spread["gossip4"], spread["gossip2"]
        printf " gossip4_bytes_vs_allreduce=%.2f gossip2_bytes_vs_allreduce=%.2f\n", sent["gossip4"] / sent["allreduce"], sent["gossip2"] / sent["allreduce"] }' "$out/figures"
