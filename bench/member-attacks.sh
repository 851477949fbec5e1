#!/usr/bin/env bash
# bench/run.sh member-attacks: the loss of a run with one member that lies, with real processes
# (the simulator's table is bench/run.sh sim-attacks; docs/SECURITY.md "Members lie"). 4 honest
# loco-peer processes and a loco-tracker on loopback train configs/swarm-tiny.toml's GPT (DiLoCo,
# int8 Δ, the direct exchange with checked owners: the defaults), each peer's upload shaped to
# 100 Mbit/s with 10 ms one way, STEPS steps:
#   clean       the 4 honest peers alone
#   ATTACK      the same 4 and loco-member-attacker --attack ATTACK, a fifth member with its own key,
#               for each ATTACK of: poison (says ready with a norm of 0, sends int8 blocks scaled
#               1e30), wrong-mean (an owner that returns its segment's mean negated, signed),
#               accuse (names an honest member at every round)
# Then, in rounds bounded by time (strategy.round-seconds = 2: each update weighed by the tokens its
# member claims, proto/token_weights.hpp), the token liar:
#   clean-timed the 4 honest peers and a fifth loco-peer 4x slower (--debug.step-slowdown 4),
#               honest about its tokens
#   tokens      the same, but the slow one claims 2^30 times its tokens (--debug.poison tokens):
#               the largest claim the tracker accepts counts for 2x the group's lower median
# Per run: the honest peers' mean validation loss, their distinct final states (1: one state), the
# rounds committed and the wall time. Last line:
#   member-attacks: clean_loss=… worst_ratio=… worst=… states=… token_liar_ratio=…
# token_liar_ratio: the tokens run's loss ÷ the clean-timed one's.
# worst_ratio: the highest attacked run's loss ÷ the clean one's (goal ≤ 1.02); states: the most
# distinct final states among the honest peers of any run (goal 1).
# Usage: bench/run.sh member-attacks [STEPS]   (default 300; about a minute a run on 2 cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-300}
peers=4
link=100Mbit
latency=10ms
out=${OUT:-$root/build/release/bench-member-attacks}
attacks=(poison wrong-mean accuse)
# Every process is on 127.0.0.1: more members than a household's default from one address.
tracker_options="--tracker.max-members-per-address 8"

source "$root/bench/lib/swarm_runs.sh"
swarm_setup
"$root/scripts/build.sh" "$root/build/release" Release -- loco-member-attacker >&2
"$bin/loco-peer" keygen --out "$out/attacker.key" >/dev/null
diloco='kind = "diloco"\ndiloco-h = 20\nouter-lr = 0.7\nouter-momentum = 0.9\ncodec = "int8:block=256"\ntracker-paced = false\n'

timed='kind = "diloco"\ndiloco-h = 20\nround-seconds = 2\nouter-lr = 0.7\nouter-momentum = 0.9\ncodec = "int8:block=256"\n'

# attacked NAME ATTACK [STRATEGY] [FIFTH_PEER_OPTIONS]: the run of NAME with the 4 honest peers and
# an attacker (none: ATTACK ""), and with FIFTH_PEER_OPTIONS a fifth loco-peer with those options
# (its figures are not the honest peers').
attacked() {
  local name=$1 attack=$2 strategy=${3:-$diloco} fifth=${4:-}
  swarm_config "$name" "$strategy"
  # A round needs the 4 honest peers (min-peers), so the run goes on without a member left out;
  # a shard for the attacker too.
  shard_count=$((peers + 1)) swarm_tracker "$name" "$out/$name.toml"
  local started=$(date +%s.%N) peer_pids=()
  if [[ -n $attack ]]; then
    "$bin/loco-member-attacker" --key "$out/attacker.key" --tracker "$tracker_address" \
      --tracker-key "$tracker_key" --run-id "$name" --run-config "$out/$name.toml" \
      --attack "$attack" >"$out/$name.attacker.out" 2>"$out/$name.attacker.log" &
    swarm_pids+=($!)
  fi
  if [[ -n $fifth ]]; then
    local fifth_options
    read -r -a fifth_options <<<"$fifth"
    "$bin/loco-peer" --peer.key "$out/attacker.key" --run.id "$name" --run.config "$out/$name.toml" \
      --tracker.address "$tracker_address" --tracker.public-key "$tracker_key" \
      --peer.upload "$link" --link.upload "$link" --link.latency "$latency" \
      "${fifth_options[@]}" >"$out/$name.fifth.out" 2>"$out/$name.fifth.log" &
    swarm_pids+=($!)
  fi
  for i in $(seq 1 "$peers"); do
    "$bin/loco-peer" --peer.key "$out/peer$i.key" --run.id "$name" --run.config "$out/$name.toml" \
      --tracker.address "$tracker_address" --tracker.public-key "$tracker_key" \
      --peer.upload "$link" --link.upload "$link" --link.latency "$latency" \
      >"$out/$name.peer$i.out" 2>"$out/$name.peer$i.log" &
    peer_pids+=($!)
    swarm_pids+=($!)
  done
  for p in "${peer_pids[@]}"; do wait "$p"; done
  echo "$started $(date +%s.%N)" >"$out/$name.wall"
  swarm_cleanup  # the attacker and the tracker
  swarm_pids=()
  grep -h '^peer .*: seconds=' "$out/$name".peer*.out >"$out/$name.summary"
  read -r loss _ wall _ states < <(swarm_figures "$name")
  local rounds
  rounds=$(grep -c 'committed' "$out/$name.tracker.log" || true)
  printf "%-11s %9s %7s %7s %6s\n" "$name" "$loss" "$rounds" "$wall" "$states"
  echo "$name $loss $states" >>"$out/results"
}

echo "model: GPT 2L d64 (108k parameters), $peers honest peers, DiLoCo H = 20, $steps steps,"
echo "  links: $link upload, $latency one way; the direct exchange, checked owners"
printf "%-11s %9s %7s %7s %6s\n" run val_loss commits wall_s states
attacked clean ""
for a in "${attacks[@]}"; do attacked "$a" "$a"; done
attacked clean-timed "" "$timed" "--debug.step-slowdown 4"
attacked tokens "" "$timed" "--debug.step-slowdown 4 --debug.poison tokens"
awk '$1 == "clean" { clean = $2 } $1 == "clean-timed" { clean_timed = $2 } $1 == "tokens" { tokens = $2 }
     { loss[$1] = $2; if ($3 > states) states = $3 }
     END { worst = "none"; ratio = 1
           for (k in loss) if (k != "clean" && k !~ /timed|tokens/ && loss[k] / clean > ratio) { ratio = loss[k] / clean; worst = k }
           printf "member-attacks: clean_loss=%.4f worst_ratio=%.4f worst=%s states=%d token_liar_ratio=%.4f\n",
                  clean, ratio, worst, states, tokens / clean_timed }' "$out/results"
