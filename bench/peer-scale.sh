#!/usr/bin/env bash
# bench/run.sh peer-scale: what a round costs beyond its maths at a real model size. A loco-tracker
# and 2 loco-peers on loopback (no shaping) train a GPT (default 12 layers, d 768, 12 heads, vocab
# 256, context 128: 85M parameters) with DiLoCo, H = 2, int8, for 4 rounds, each process under
# /usr/bin/time for its peak RSS. Last line:
#   peer-scale: params=… rss_bytes_per_param=… join_s=… round_compute_s=… round_overhead_s=… wire_s=…
# per peer and round, the mean of the 2 peers: rss = peak RSS / parameters; join = from the
# peer's first log line to "joined"; compute = its inner steps; wire = the bytes it sent in a
# round at the loopback rate of the secure channel measured in the same run (bench-transport);
# overhead = the round's wall time less compute and wire. The line before it says where the
# compute thread waited, per round (the peers' debug log, train/diloco.cpp): for Δ, for the
# mean, for the preview of θ', and to land the round (the first round's exchange fills its
# buffers for the first time; the last round's landing waits for its hash and commit, with no
# phase to overlap), and the overhead of the rounds between the first and the last.
# Usage: [N_LAYER=12 D_MODEL=768 N_HEAD=12 BATCH=4] bench/run.sh peer-scale
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" "$root/build/release" Release -- loco-peer loco-tracker bench-transport >&2
bin=$root/build/release/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rounds=4
h=2

cat >"$work/run.toml" <<EOF
[model]
kind = "gpt"
vocab = 256
context = 128
n-layer = ${N_LAYER:-12}
n-head = ${N_HEAD:-12}
d-model = ${D_MODEL:-768}
[data]
source = "markov"
markov-train-tokens = 200000
markov-val-tokens = 20000
[train]
steps = $((rounds * h))
batch = ${BATCH:-4}
eval-windows = ${BATCH:-4}
threads = 1
[optim]
warmup-steps = 0
[strategy]
kind = "diloco"
diloco-h = $h
codec = "int8:block=256"
tracker-paced = false
EOF
# The loopback rate of the secure channel, measured now (1 GiB, best of 3).
rate_gbit=$("$bin/bench-transport" 2>/dev/null | tail -1 | tr ' ' '\n' | sed -n 's/^encrypted_gbit_s=//p')
[[ -n $rate_gbit ]] || { echo "peer-scale: bench-transport gave no encrypted_gbit_s" >&2; exit 1; }

# A tracker and two peers as loco-swarm would run them, each peer under /usr/bin/time.
tracker_key=$("$bin/loco-tracker" keygen --out "$work/tracker.key")
cat >"$work/tracker.toml" <<EOF
[tracker]
listen = "127.0.0.1:0"
key = "tracker.key"
state-file = ""
http = ""
max-members-per-address = 0
[run]
id = "peer-scale"
config = "run.toml"
min-peers = 2
shard-count = 2
join-timeout = "5s"
[admission]
policy = "open"
EOF
"$bin/loco-tracker" --config "$work/tracker.toml" >"$work/tracker.out" 2>"$work/tracker.log" &
tracker=$!
for _ in $(seq 300); do grep -q "listening on" "$work/tracker.out" 2>/dev/null && break; sleep 0.1; done
address=$(sed -n 's/^listening on \([^ ]*\) as .*/\1/p' "$work/tracker.out")
[[ -n $address ]] || { echo "peer-scale: the tracker did not start" >&2; cat "$work/tracker.log" >&2; exit 1; }
for p in 1 2; do
  "$bin/loco-peer" keygen --out "$work/peer-$p.key" >/dev/null
  cat >"$work/peer-$p.toml" <<EOF
[peer]
key = "peer-$p.key"
listen = "127.0.0.1:0"
[run]
id = "peer-scale"
config = "run.toml"
[tracker]
address = "$address"
public-key = "$tracker_key"
EOF
done
pids=()
for p in 1 2; do
  /usr/bin/time -f "max_rss_kb=%M" -o "$work/time-$p" "$bin/loco-peer" --log-level debug \
    --config "$work/peer-$p.toml" >"$work/peer-$p.out" 2>"$work/peer-$p.log" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
kill "$tracker" 2>/dev/null || true
wait "$tracker" 2>/dev/null || true

# Where the compute thread waited, from both peers' debug lines (train/diloco.cpp).
cat "$work"/peer-*.log | awk -v rounds="$rounds" '
  /debug round [0-9]+: / {
    for (i = 1; i <= NF; i++) if ($i == "round") r = $(i + 1) + 0
    split($0, a, " in "); delta[r] += a[2] + 0; mean[r] += a[3] + 0; preview[r] += a[4] + 0
    n[r]++ }
  /debug round [0-9]+ landed in / {
    for (i = 1; i <= NF; i++) if ($i == "round") r = $(i + 1) + 0
    split($0, a, " in "); land[r] += a[2] + 0 }
  END {
    for (r = 1; r <= rounds; r++) {
      if (n[r] == 0) { print "peer-scale: no debug line for round " r > "/dev/stderr"; exit 1 }
      d = delta[r] / n[r]; m = mean[r] / n[r]; p = preview[r] / n[r]; l = land[r] / n[r]
      printf "round %d: delta_s=%.3f mean_wait_s=%.3f preview_s=%.3f land_s=%.3f\n", r, d, m, p, l
      D += d; M += m; P += p; L += l
      if (r > 1 && r < rounds) { steady += d + m + p + l; between++ } }
    printf "peer-scale waits per round: delta_s=%.3f mean_wait_s=%.3f preview_s=%.3f " \
           "land_s=%.3f steady_waits_s=%.3f\n", D / rounds, M / rounds, P / rounds, L / rounds,
           between ? steady / between : 0 }'

# Per peer: parameters, peak RSS, join time, and the summary line's figures.
for p in 1 2; do
  log=$work/peer-$p.log
  summary=$(grep -h "seconds=" "$work/peer-$p.out" "$log" | tail -1)
  field() { tr ' ' '\n' <<<"$summary" | sed -n "s/^$1=//p"; }
  started=$(head -1 "$log" | awk '{print $2}')
  joined=$(grep -m1 "joined run" "$log" | awk '{print $2}')
  params=$(grep -m1 "joined run" "$log" | sed -n 's/.* \([0-9]*\) parameters.*/\1/p')
  echo "$params $(sed -n 's/^max_rss_kb=//p' "$work/time-$p") $started $joined $(field seconds)" \
    "$(field compute_s) $(field eval_s) $(field sent_bytes)"
done | tee /dev/stderr | awk -v rounds="$rounds" -v rate="$rate_gbit" '
  function secs(t,  a) { split(t, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
  # params rss_kb started joined seconds compute_s eval_s sent_bytes
  { params = $1; rss += $2 * 1024 / $1; join += secs($4) - secs($3)
    round_wire = $8 / rounds * 8 / (rate * 1e9)
    compute += $6 / rounds; wire += round_wire
    overhead += ($5 - $6 - $7) / rounds - round_wire; n++ }
  END { printf "peer-scale: params=%d rss_bytes_per_param=%.1f join_s=%.1f round_compute_s=%.2f " \
               "round_overhead_s=%.2f wire_s=%.3f\n", params, rss / n, join / n, compute / n,
               overhead / n, wire / n }'
