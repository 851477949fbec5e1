#!/usr/bin/env bash
# bench/run.sh strategies: every strategy loco-peer runs, between 4 real loco-peer processes and a
# loco-tracker on loopback, on the same model and token budget (the tiny GPT of
# configs/swarm-tiny.toml, 108k parameters, batch 16 per peer, STEPS steps, one 1M-token shard per
# peer), each peer's upload shaped to each of LINKS with 50 ms one way:
#   ddp        fp32 gradients averaged every step
#   diloco     H = 30, int8 pseudo-gradients, outer Nesterov 0.7 / 0.9
#   streaming  the same H, P = 3 fragments, τ = 8 steps of overlap (< H/P), fp4 (E3M0) fragments
#   eager      streaming with P = 1 and overlapped eager updates (the swarm's eager takes P = 1)
#   demo       DeMo, chunk 32, k 4, signs: a round every step, blocking
#   demo-late  the same with the delayed apply: each step's round runs while the next step computes
#   sparseloco SparseLoCo, the same H, chunks of 160 keeping 16 (10%) in 2 bits, each tensor's
#              message through zstd -19, outer lr 1, β 0.8, clip 1 (the sweeps that chose them:
#              docs/STRATEGIES.md, "SparseLoCo")
# Per run: final validation loss, bytes sent by all peers, bytes per sync (a peer's bytes over the
# rounds it committed: what its link carries in one burst, the peak the goals compare), wall time,
# compute utilisation (mean share of a peer's wall time in inner steps) and the distinct final
# state hashes (1: every peer equal). Rows go to $OUT/figures (scripts/plot-strategies.sh).
# Last line, from the runs at 100 Mbit/s (each x_vs_y is x ÷ y; "n/a" for a run not made):
#   strategies: streaming_util_10mbit=… streaming_util_100mbit=… streaming_peak_vs_diloco=…
#   streaming_loss_vs_diloco=… eager_loss_vs_streaming=… demo_bytes_vs_ddp=… demo_loss_vs_ddp=…
#   demo_util_50ms=… (demo-late's utilisation) demo_late_loss_vs_demo=… (its loss ÷ blocking DeMo's)
#   sparseloco_bytes_vs_ddp=… sparseloco_bytes_vs_diloco=… sparseloco_loss_vs_diloco=…
#   sparseloco_loss_vs_ddp=…
# STEP_MS=M makes every peer's inner step M ms longer (--debug.step-delay), counted as compute: the
# step time of a larger model, at which DeMo's round (~3 one-way latencies) fits in a step.
# Usage: bench/run.sh strategies [STEPS]   (default 300: ~10 minutes on an idle machine here,
#   most of it DDP at 10 Mbit/s and DeMo's round per step). A subset:
#   STRATEGIES="diloco streaming" LINKS="100Mbit" bench/run.sh strategies 60
#   STRATEGIES="demo demo-late" LINKS="100Mbit" bench/run.sh strategies      # DeMo's two only
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-300}
strategies=${STRATEGIES:-ddp diloco streaming eager demo demo-late sparseloco}
links=${LINKS:-10Mbit 100Mbit 1000Mbit}
h=${H:-30}
# SparseLoCo's settings, each overridable for a sweep (docs/STRATEGIES.md, "SparseLoCo"), e.g.
#   H=60 SL_CHUNK=64 SL_TOPK=16 STRATEGIES=sparseloco LINKS=100Mbit bench/run.sh strategies
sl_chunk=${SL_CHUNK:-160} sl_topk=${SL_TOPK:-16} sl_bits=${SL_BITS:-2}
sl_lr=${SL_LR:-1.0} sl_beta=${SL_BETA:-0.8} sl_clip=${SL_CLIP:-1.0} sl_zstd=${SL_ZSTD:-19}
peers=4
latency=50ms
out=${OUT:-$root/build/release/bench-strategies}
step_ms=${STEP_MS:-0}
[[ $step_ms == 0 ]] || export PEER_OPTIONS="--debug.step-delay $step_ms"

# strategy NAME: the [strategy] section of that run.
strategy() {
  local outer="outer-lr = 0.7\nouter-momentum = 0.9\n"
  case $1 in
    ddp) echo 'kind = "ddp"\ncodec = "fp32"\n' ;;
    diloco) echo "kind = \"diloco\"\ndiloco-h = $h\n${outer}codec = \"int8:block=256\"\ntracker-paced = false\n" ;;
    streaming) echo "kind = \"streaming\"\ndiloco-h = $h\nfragments = 3\ntau = 8\nalpha = 0.5\n${outer}fragment-codec = \"fp4:block=64\"\n" ;;
    eager) echo "kind = \"streaming\"\ndiloco-h = $h\nfragments = 1\ntau = 0\neager = \"overlapped\"\nalpha = 0.5\n${outer}fragment-codec = \"fp4:block=64\"\n" ;;
    demo) echo 'kind = "demo"\ndemo-chunk = 32\ndemo-topk = 4\ndemo-values = "sign"\n' ;;
    demo-late) echo "$(strategy demo)demo-late = true\n" ;;
    sparseloco) echo "kind = \"sparseloco\"\ndiloco-h = $h\nsparseloco-chunk = $sl_chunk\nsparseloco-topk = $sl_topk\nsparseloco-bits = $sl_bits\nsparseloco-outer-lr = $sl_lr\nsparseloco-beta = $sl_beta\nsparseloco-clip = $sl_clip\nsparseloco-zstd = $sl_zstd\n" ;;
    *) echo "bench/run.sh strategies: unknown strategy '$1' (ddp diloco streaming eager demo demo-late sparseloco)" >&2; exit 2 ;;
  esac
}
for s in $strategies; do strategy "$s" >/dev/null; done

source "$root/bench/lib/swarm_runs.sh"
swarm_setup
echo "model: GPT 2L d64 vocab 64 context 64 (108k parameters), $peers peers, batch 16 each, $steps steps,"
[[ $step_ms == 0 ]] || echo "  each inner step $step_ms ms longer (--debug.step-delay), counted as compute"
echo "  links: upload as named, $latency one way; H = $h; bytes/sync = a peer's bytes / rounds committed"
printf "%-10s %-9s %9s %14s %12s %8s %6s %6s\n" strategy link val_loss sent_bytes bytes/sync wall_s util states
: >"$out/figures"
for link in $links; do
  for s in $strategies; do
    name=$s-$link
    swarm_config "$name" "$(strategy "$s")"
    swarm_run "$name" "$out/$name.toml" "$link" "$latency"
    read -r loss sent wall util states < <(swarm_figures "$name" "$(awk -v s="$steps" -v ms="$step_ms" 'BEGIN { print s * ms / 1000 }')")
    rounds=$(cat "$out/$name.rounds")
    per_sync=$((sent / peers / (rounds > 0 ? rounds : 1)))
    printf "%-10s %-9s %9s %14s %12s %8s %6s %6s\n" "$s" "$link" "$loss" "$sent" "$per_sync" \
      "$wall" "$util" "$states"
    echo "$s $link $loss $sent $per_sync $wall $util $states" >>"$out/figures"
  done
done
echo "(sent_bytes: all peers together, peer-to-peer bytes on the wire, tracker link not counted)"
awk '
  { key = $1 "@" $2; loss[key] = $3; sent[key] = $4; sync[key] = $5; util[key] = $7 }
  function ratio(table, x, y) { return (x in table && y in table && table[y] > 0) ? sprintf("%.4f", table[x] / table[y]) : "n/a" }
  function get(table, x) { return (x in table) ? sprintf("%.3f", table[x]) : "n/a" }
  END {
    printf "strategies: streaming_util_10mbit=%s streaming_util_100mbit=%s", get(util, "streaming@10Mbit"), get(util, "streaming@100Mbit")
    printf " streaming_peak_vs_diloco=%s", ratio(sync, "streaming@100Mbit", "diloco@100Mbit")
    printf " streaming_loss_vs_diloco=%s", ratio(loss, "streaming@100Mbit", "diloco@100Mbit")
    printf " eager_loss_vs_streaming=%s", ratio(loss, "eager@100Mbit", "streaming@100Mbit")
    printf " demo_bytes_vs_ddp=%s", ratio(sent, "demo@100Mbit", "ddp@100Mbit")
    printf " demo_loss_vs_ddp=%s", ratio(loss, "demo@100Mbit", "ddp@100Mbit")
    printf " demo_util_50ms=%s", get(util, "demo-late@100Mbit")
    printf " demo_late_loss_vs_demo=%s", ratio(loss, "demo-late@100Mbit", "demo@100Mbit")
    printf " sparseloco_bytes_vs_ddp=%s", ratio(sent, "sparseloco@100Mbit", "ddp@100Mbit")
    printf " sparseloco_bytes_vs_diloco=%s", ratio(sent, "sparseloco@100Mbit", "diloco@100Mbit")
    printf " sparseloco_loss_vs_diloco=%s", ratio(loss, "sparseloco@100Mbit", "diloco@100Mbit")
    printf " sparseloco_loss_vs_ddp=%s\n", ratio(loss, "sparseloco@100Mbit", "ddp@100Mbit")
  }' "$out/figures"
