#!/usr/bin/env bash
# bench/run.sh wan-streaming-vs-diloco: 4 real loco-peer processes and a loco-tracker on loopback
# train the tiny GPT of configs/swarm-tiny.toml (108k parameters) with DiLoCo (H inner steps,
# int8 pseudo-gradients) and with Streaming DiLoCo at the same H (P fragments, τ steps of
# overlap, 4-bit fp4 E3M0 fragments), every peer's upload shaped to each of the given
# bandwidths with 50 ms one way. Per run: final validation loss, bytes sent per peer, bytes per
# sync (a peer's bytes over the rounds it committed: the peak a link carries at once), wall time,
# compute utilisation (share of wall time in inner steps; docs/SWARM.md) and the distinct final
# state hashes (1: every peer equal).
# Last line: wan-streaming-vs-diloco: streaming_util_<bw>=… diloco_util_<bw>=… (each bandwidth)
#   streaming_peak_vs_diloco=… streaming_loss_vs_diloco=… (at the first bandwidth; x_vs_y = x/y)
# Usage: bench/run.sh wan-streaming-vs-diloco [STEPS [H [P [TAU [BANDWIDTHS]]]]]
#   (defaults 300, 30, 3, 5, "10Mbit 100Mbit")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-300}
h=${2:-30}
fragments=${3:-3}
tau=${4:-5}
bandwidths=${5:-"10Mbit 100Mbit"}
peers=4
latency=50ms
out=${OUT:-$root/build/release/bench-streaming}

"$root/scripts/build.sh" "$root/build/release" Release -- loco-tracker loco-peer >&2
bin=$root/build/release/bin
rm -rf "$out"
mkdir -p "$out"
source "$root/bench/lib/swarm_runs.sh"
swarm_keys

# config NAME STRATEGY_LINES: the run config with that [strategy].
config() {
  sed -e "s/^steps = .*/steps = $steps/" -e "s/^log-every = .*/log-every = 10/" \
    -e "s/^markov-train-tokens = .*/markov-train-tokens = 4000000/" -e '/^\[strategy\]/,$d' \
    "$root/configs/swarm-tiny.toml" >"$out/$1.toml"
  printf '[strategy]\n%b' "$2" >>"$out/$1.toml"
}


printf "%-44s %9s %12s %14s %8s %7s %7s\n" run val_loss sent/peer bytes/sync wall_s util states
summary=""
for bw in $bandwidths; do
  diloco=diloco-$bw streaming=streaming-$bw
  config "$diloco" "kind = \"diloco\"\ndiloco-h = $h\nouter-lr = 0.7\nouter-momentum = 0.9\ncodec = \"int8:block=256\"\n"
  config "$streaming" "kind = \"streaming\"\ndiloco-h = $h\nfragments = $fragments\ntau = $tau\nalpha = 0.5\nouter-lr = 0.7\nouter-momentum = 0.9\nfragment-codec = \"fp4:block=64\"\n"
  for name in "$diloco" "$streaming"; do
    swarm_run "$name" "$out/$name.toml" "$bw" "$latency"
    read -r loss sent wall util states < <(swarm_figures "$name")
    rounds=$(cat "$out/$name.rounds")
    per_peer=$((sent / peers))
    per_sync=$((per_peer / (rounds > 0 ? rounds : 1)))
    label="$name H=$h"
    [[ $name == streaming-* ]] && label="$label P=$fragments tau=$tau fp4" || label="$label int8"
    printf "%-44s %9s %12s %14s %8s %7s %7s\n" "$label" "$loss" "$per_peer" "$per_sync" "$wall" \
      "$util" "$states"
    echo "$name $util $loss $per_sync" >>"$out/figures"
  done
done
echo "model: GPT 2L d64 vocab 64 context 64 (108k parameters), $peers peers, batch 16 each, $steps steps,"
echo "  links: upload as named, $latency one way; bytes/sync = a peer's bytes / rounds committed"
first=${bandwidths%% *}
awk -v first="$first" '
  { util[$1] = $2; loss[$1] = $3; sync[$1] = $4 }
  END {
    line = "wan-streaming-vs-diloco:"
    for (name in util) if (name ~ /^streaming-/) {
      bw = substr(name, 11); line = line sprintf(" streaming_util_%s=%.3f diloco_util_%s=%.3f", bw, util[name], bw, util["diloco-" bw]) }
    line = line sprintf(" streaming_peak_vs_diloco=%.3f streaming_loss_vs_diloco=%.4f",
                        sync["streaming-" first] / sync["diloco-" first],
                        loss["streaming-" first] / loss["diloco-" first])
    print line }' "$out/figures"
