#!/usr/bin/env bash
# bench/run.sh heterogeneous: volunteers of different speeds with DiLoCo's rounds bounded by time
# (docs/STRATEGIES.md "Rounds bounded by time"), as a run config gets them by default: the tracker
# paces the rounds (strategy.tracker-paced, on unless the config says otherwise). 4 real loco-peer
# processes and a loco-tracker on loopback, the tiny GPT of configs/swarm-tiny.toml (batch 16 per
# peer, int8 Δ), each peer's upload shaped to 100 Mbit/s with 50 ms one way:
#   calib   4 equal peers, 3 rounds: a peer's step time t (its compute seconds over its steps), from
#           which a round's nominal H = ROUND_SECONDS / t (the learning-rate schedule's length)
#   hetero  the same 4 peers, the last one three times slower (--debug.step-slowdown 3: each of
#           its steps takes 3 times its compute, whatever the machine's load), SECONDS of rounds
#           of nominal H, the [strategy] saying nothing of time and the tracker's min-peers
#           left at 1: the defaults (HETERO_MIN_PEERS=4 as the other runs)
#   equal   4 equal peers in rounds of fixed H (tracker-paced = false), H the hetero run's fast
#           peers' steps a round, as many steps each as give the hetero run's total tokens
# The hetero run weighs each Δ by its tokens; the equal one takes the plain mean. Per run: the peers' steps, total steps, mean validation
# loss, compute utilisation (a peer's compute seconds over its wall seconds) and distinct final
# states (1: every peer equal). Last line:
#   heterogeneous: fast_util=… loss_vs_equal=… slow_share=… slow_rounds=… token_share=…
#     compute_share=… share_ratio=…
# fast_util: the hetero run's three fast peers' mean utilisation; loss_vs_equal: its validation
# loss ÷ the equal run's; slow_share: the slow peer's mean share of the mean over the rounds it
# was in (its tokens ÷ the group's); slow_rounds: the rounds it was in, of the run's; token_share:
# its share of the run's tokens (its shares summed over the run's rounds, a round it sat out
# counting 0); compute_share: its share of the swarm's compute (each peer's steps a second of
# computing, steps ÷ (compute_s × its slowdown)); share_ratio: token_share ÷ compute_share.
# A figure read from no rows is nan, and the script exits 1.
# Usage: bench/run.sh heterogeneous [SECONDS]   (default 300; the equal run takes about as long
#   again, calib ~20 s). ROUND_SECONDS (default 3) sets the nominal H (ROUND_SECONDS of a step);
#   TIMED=1 bounds each hetero round by ROUND_SECONDS instead (strategy.round-seconds);
#   PACED=1 asks for the tracker's pacing with ROUND_SECONDS the first phase.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-300}
round_seconds=${ROUND_SECONDS:-3}
peers=4
link=100Mbit
latency=50ms
out=${OUT:-$root/build/release/bench-heterogeneous}

# fixed H: the [strategy] section of a run of rounds every H steps; timed H: of rounds bounded by
# time, nominal H steps a round.
strategy() {
  echo "kind = \"diloco\"\ndiloco-h = $1\nouter-lr = 0.7\nouter-momentum = 0.9\ncodec = \"int8:block=256\"\n"
}
fixed() { echo "$(strategy "$1")tracker-paced = false\n"; }
timed() { echo "$(strategy "$1")round-seconds = $round_seconds\n"; }
# hetero H: the defaults, or what TIMED / PACED ask for.
hetero() {
  if [ "${TIMED:-0}" = 1 ]; then
    timed "$1"
  elif [ "${PACED:-0}" = 1 ]; then
    echo "$(timed "$1")tracker-paced = true\n"
  else
    strategy "$1"
  fi
}
slowdown=${SLOWDOWN:-3}
# peer_steps NAME: each peer's steps, one a line, peer 1 first.
peer_steps() {
  for i in $(seq 1 "$peers"); do
    sed -n 's/^peer .*: round [0-9]*, step \([0-9]*\),.*/\1/p' "$out/$1.peer$i.out"
  done
}
# utilisations NAME: each peer's compute seconds over its wall seconds, peer 1 first.
utilisations() {
  for i in $(seq 1 "$peers"); do
    sed -n 's/^peer .*: seconds=\([0-9.]*\) compute_s=\([0-9.]*\) .*/\2 \1/p' "$out/$1.peer$i.out" |
      awk '{ printf "%.3f\n", $1 / $2 }'
  done
}
# report NAME: one row of the table.
report() {
  read -r loss _ wall util states < <(swarm_figures "$1")
  printf "%-7s %-24s %8s %9s %7s %10s %6s\n" "$1" "$(peer_steps "$1" | paste -sd/)" \
    "$(peer_steps "$1" | awk '{ s += $1 } END { print s }')" "$loss" "$wall" \
    "$(utilisations "$1" | paste -sd/)" "$states"
}

source "$root/bench/lib/swarm_runs.sh"
swarm_setup
echo "model: GPT 2L d64 vocab 64 context 64 (108k parameters), $peers peers, batch 16 each,"
echo "  links: $link upload, $latency one way; hetero: rounds of $round_seconds s, each Δ weighted by its tokens"

steps=90
swarm_config calib "$(timed 30)"
swarm_run calib "$out/calib.toml" "$link" "$latency"
step_s=$(for i in $(seq 1 "$peers"); do
  sed -n 's/^peer .*: seconds=[0-9.]* compute_s=\([0-9.]*\) .*/\1/p' "$out/calib.peer$i.out"
done | paste - <(peer_steps calib) | awk '{ t += $1 / $2 } END { print t / NR }')
h=$(awk -v r="$round_seconds" -v t="$step_s" 'BEGIN { h = int(r / t + 0.5); print h < 1 ? 1 : h }')
rounds=$(awk -v s="$seconds" -v r="$round_seconds" 'BEGIN { n = int(s / r); print n < 2 ? 2 : n }')
echo "calibration: a step takes $(awk -v t="$step_s" 'BEGIN { printf "%.1f", 1000 * t }') ms with 4 peers:" \
  "nominal H = $h, $rounds rounds"

printf "%-7s %-24s %8s %9s %7s %10s %6s\n" run steps total val_loss wall_s util states
steps=$((rounds * h))
swarm_config hetero "$(hetero "$h")"
# The tracker's default too: a round of at least one member. With every peer (the other runs'
# min-peers), round 1 waits for the slow peer's first phase, H steps of its own (no phase is known
# before anyone has measured a step): 3 x as long as the others', once a run.
min_peers=${HETERO_MIN_PEERS:-1} swarm_run hetero "$out/hetero.toml" "$link" "$latency" "--debug.step-slowdown $slowdown"
report hetero

# The hetero run's tokens over 4 equal peers, in rounds of its fast peers' steps a round.
hetero_total=$(peer_steps hetero | awk '{ s += $1 } END { print s }')
equal_h=$(peer_steps hetero | awk -v p="$peers" -v n="$rounds" \
  'NR < p { s += $1 } END { h = int(s / (p - 1) / n + 0.5); print h < 1 ? 1 : h }')
steps=$(awk -v t="$hetero_total" -v p="$peers" -v h="$equal_h" \
  'BEGIN { r = int(t / p / h + 0.5); print (r < 1 ? 1 : r) * h }')
swarm_config equal "$(fixed "$equal_h")"
swarm_run equal "$out/equal.toml" "$link" "$latency"
report equal
echo "(steps: each peer's, peer 4 the slow one in hetero; util: compute seconds over wall seconds)"

fast_util=$(utilisations hetero | awk -v p="$peers" 'NR < p { s += $1 } END { printf "%.3f", s / (p - 1) }')
hetero_loss=$(swarm_figures hetero | awk '{ print $1 }')
equal_loss=$(swarm_figures equal | awk '{ print $1 }')
# The slow peer's shares of the rounds it committed, one a line.
slow_shares() { sed -n 's/^round .* committed .* share \([0-9.]*\)$/\1/p' "$out/hetero.peer$peers.out"; }
slow_share=$(slow_shares | awk '{ s += $1 } END { if (NR) printf "%.4f", s / NR; else print "nan" }')
slow_rounds=$(slow_shares | wc -l)
# The run's rounds: the highest any peer committed.
run_rounds=$(sed -n 's/^round \([0-9]*\) committed.*/\1/p' "$out"/hetero.peer*.out | sort -n | tail -1)
token_share=$(slow_shares | awk -v n="${run_rounds:-0}" '{ s += $1 } END { if (NR && n) printf "%.4f", s / n; else print "nan" }')
compute_share=$(for i in $(seq 1 "$peers"); do
  sed -n 's/^peer .*: seconds=[0-9.]* compute_s=\([0-9.]*\) .*/\1/p' "$out/hetero.peer$i.out" |
    awk -v f="$([ "$i" = "$peers" ] && echo "$slowdown" || echo 1)" '{ print $1 * f }'
done | paste - <(peer_steps hetero) |
  awk -v p="$peers" 'NF == 2 && $1 > 0 { rate = $2 / $1; all += rate; if (NR == p) slow = rate; ++n }
    END { if (n == p) printf "%.4f", slow / all; else print "nan" }')
share_ratio=$(awk -v a="$token_share" -v b="$compute_share" 'BEGIN { if (a == "nan" || b == "nan" || b == 0) print "nan"; else printf "%.3f", a / b }')
echo "tokens: hetero $hetero_total steps, equal $(peer_steps equal | awk '{ s += $1 } END { print s }') steps (x 1024 tokens)"
echo "heterogeneous: fast_util=$fast_util loss_vs_equal=$(awk -v a="$hetero_loss" -v b="$equal_loss" 'BEGIN { printf "%.4f", a / b }') slow_share=$slow_share slow_rounds=$slow_rounds/${run_rounds:-0} token_share=$token_share compute_share=$compute_share share_ratio=$share_ratio"
case "$slow_share $token_share $compute_share" in
  *nan*) echo "heterogeneous: read no rows for a figure (nan above): see $out" >&2; exit 1 ;;
esac
