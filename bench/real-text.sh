#!/usr/bin/env bash
# bench/run.sh real-text: loco on real English. The corpus is Vim's documentation
# (/usr/share/vim/vim90/doc/*.txt, Debian's vim-runtime: 9.5 MB of English prose about an editor,
# in every Debian archive, free to redistribute, and large enough that 4 peers train on shards of
# their own without reading a window twice). loco-prepare cuts it into two datasets (docs/TRACKER.md,
# "Publishing a dataset"): an 8k-piece SentencePiece BPE model, and one token per byte.
#
# Three runs of the same GPT (2 layers, d 128, context 64) at equal tokens:
#   subword-swarm   4 loco-peer processes and a loco-tracker on loopback, DiLoCo (H inner steps,
#                   int8 pseudo-gradients), batch 16 a peer, each peer on its own shards;
#   subword-single  one loco-train process, batch 64 (the data-parallel equivalent: the same
#                   tokens a step as the 4 peers together, gradients of all of them in every step);
#   bytes-single    the same one process on the byte-level dataset.
# Loss is per token; bits per byte = loss / ln 2 / (bytes a token of the validation text), so the
# two tokenizers compare: the subword model should reach fewer bits per byte for the same tokens.
#
# Writes the runs' logs and their training curves (tokens, bits per byte) to $OUT (default
# build/release/bench-real-text; scripts/plot-real-text.sh plots them).
# Last line: real-text: loss_ratio=… (final validation loss, swarm/single, subword) subword_bpb=…
#   (the swarm's) bytes_bpb=…
#   bytes_per_token=… tokens=…
# Usage: bench/run.sh real-text [STEPS [H]]   (defaults 400 and 25; about 8 minutes on an idle
#   machine of 2 cores)
# Environment (for sweeps; docs/EXPERIMENTS.md section 6 lists what was tried):
#   OUTER_LR, OUTER_MOMENTUM   the swarm's outer Nesterov step (defaults 1.5 and 0: 1.5 times
#                              the peers' mean, the best fixed step at H = 25; 0.7 and 0.9,
#                              loco's default tuned on the Markov corpus, overshoot in 16 rounds
#                              from a random model, and at H = 5 in 80; at H = 2..5 any step but
#                              the mean lost: docs/EXPERIMENTS.md section 6);
#   SWARM_LR, SINGLE_LR        the peak lr of the peers' inner AdamW and of the one process's
#                              (defaults 3e-3: the peers' best of those tried, within 0.13% of
#                              the one process's; the cosine ends at a tenth): docs/EXPERIMENTS.md
#                              section 6;
#   WARMUP                     warmup steps of every run (default 50: better than 20 for the
#                              peers and the one process alike);
#   BATCH                      sequences a peer's step (default 16; the one process's is 4x):
#                              at equal tokens a larger batch and fewer steps narrow the swarm's
#                              gap (docs/EXPERIMENTS.md section 6);
#   SINGLE_FROM=DIR            reuse the two one-process runs of an earlier run's folder DIR instead
#                              of training them again (they do not depend on the swarm's settings);
#                              refused unless DIR's run configs are this run's (same steps, same
#                              datasets by their manifest hashes, same SINGLE_LR), e.g. an OUT of
#                              an earlier run copied aside (cp -a OUT OUT-single).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-400}
h=${2:-25}
peers=4
batch=${BATCH:-16}
context=64
out=${OUT:-$root/build/release/bench-real-text}
outer_lr=${OUTER_LR:-1.5}
outer_momentum=${OUTER_MOMENTUM:-0}
swarm_lr=${SWARM_LR:-3e-3}
single_lr=${SINGLE_LR:-3e-3}
warmup=${WARMUP:-50}
single_from=${SINGLE_FROM:-}
# A progress line every `every` steps (the first multiple of H of 25 or more) and a validation
# every 4 × `every`: a validation costs a peer ~20 steps' compute, so a small H must not bring one
# every step.
every=$(((25 + h - 1) / h * h))
# The validation windows of every run: the first 1,024 of one fixed order of the validation split,
# the same for the peers' batches of 16 and the one process's of 64 (src/train/inner_loop.cpp).
eval_windows=1024
corpus_dir=/usr/share/vim/vim90/doc

if ! compgen -G "$corpus_dir/*.txt" >/dev/null; then
  echo "real-text: the corpus $corpus_dir/*.txt is missing: scripts/install-deps.sh --with-text" >&2
  echo "real-text: loss_ratio=nan subword_bpb=nan bytes_bpb=nan bytes_per_token=nan tokens=nan"
  exit 1
fi

if [[ -n $single_from && $(realpath -m "$single_from") == $(realpath -m "$out") ]]; then
  echo "real-text: SINGLE_FROM is the output folder, which the run empties: give another OUT" >&2
  exit 1
fi

source "$root/bench/lib/swarm_runs.sh"
swarm_setup  # builds loco-tracker and loco-peer, empties $out
"$root/scripts/build.sh" "$root/build/release" Release -- loco-prepare loco-train >&2
# The help files' paragraphs in a fixed random order: loco-prepare cuts shards and the validation
# split from the text in order, so unshuffled each peer would train on a few topics of its own
# (the files run alphabetically) and validate on the last files' (release notes): shards that are
# not alike, which is another experiment than DiLoCo against data-parallel on one distribution.
cat "$corpus_dir"/*.txt | python3 -c '
import random, sys
paragraphs = sys.stdin.read().split("\n\n")
random.Random(1).shuffle(paragraphs)
sys.stdout.write("\n\n".join(paragraphs))' >"$out/corpus.txt"

# prepare NAME ARGS...: a dataset in $out/NAME; prints its manifest's hash.
prepare() {
  local name=$1
  shift
  "$bin/loco-prepare" --input "$out/corpus.txt" --out-dir "$out/$name" --shard-tokens 131072 "$@" \
    >"$out/$name.prepare.out" 2>"$out/$name.prepare.log"
  sed -n 's/.*manifest-hash: \([0-9a-f]\{64\}\).*/\1/p' "$out/$name.prepare.out" | head -n 1
}
echo "tokenizing $(du -h "$out/corpus.txt" | cut -f1) of Vim's documentation..." >&2
subword_hash=$(prepare subword --tokenizer sentencepiece --tokenizer.vocab 8000)
bytes_hash=$(prepare bytes --tokenizer bytes)

# run_config NAME VOCAB DATASET HASH BATCH STRATEGY LR WARMUP: $out/NAME.toml.
run_config() {
  cat >"$out/$1.toml" <<EOF
log-level = "info"
[model]
kind = "gpt"
vocab = $2
context = $context
n-layer = 2
n-head = 4
d-model = 128
[data]
source = "dataset"
manifest = "$out/$3"
manifest-hash = "$4"
[optim]
lr = $7
min-lr = $(awk -v lr="$7" 'BEGIN { print lr / 10 }')
warmup-steps = $8
weight-decay = 0.1
grad-clip = 1.0
[train]
steps = $steps
batch = $5
seed = 1
threads = 1
log-every = $every
eval-every = $((4 * every))
eval-windows = $eval_windows
[strategy]
$(printf '%b' "$6")
EOF
}
run_config subword-swarm 8000 subword "$subword_hash" $batch \
  "kind = \"diloco\"\ndiloco-h = $h\nouter-lr = $outer_lr\nouter-momentum = $outer_momentum\ncodec = \"int8:block=256\"\ntracker-paced = false" "$swarm_lr" "$warmup"
run_config subword-single 8000 subword "$subword_hash" $((batch * peers)) 'kind = "none"' "$single_lr" "$warmup"
run_config bytes-single 256 bytes "$bytes_hash" $((batch * peers)) 'kind = "none"' "$single_lr" "$warmup"

# SINGLE_FROM: the same runs but for the folder their manifests lie in (checked before training).
for name in subword-single bytes-single; do
  [[ -z $single_from ]] && break
  if ! diff <(grep -v '^manifest = ' "$single_from/$name.toml") <(grep -v '^manifest = ' "$out/$name.toml") >&2; then
    echo "real-text: $single_from/$name.toml is not this run's config (above): not reused" >&2
    exit 1
  fi
done
echo "training: 4 peers with DiLoCo (subword), then one process (subword), then one process (bytes)..." >&2
swarm_run subword-swarm "$out/subword-swarm.toml" 1Gbit 1ms
for name in subword-single bytes-single; do
  if [[ -n $single_from ]]; then
    cp "$single_from/$name.out" "$single_from/$name.log" "$out/"
    continue
  fi
  "$bin/loco-train" --config "$out/$name.toml" --train.threads 2 >"$out/$name.out" 2>"$out/$name.log"
done

# The training curve of a log: "tokens loss" per progress line (the mean loss since the last one);
# a swarm's is peer 1's, its tokens counting the 4 peers' together.
tokens_a_step=$((batch * peers * context))
curve() {
  sed -n 's/.*step *\([0-9]*\)\/[0-9]* | loss \([0-9.]*\).*/\1 \2/p' "$1" |
    awk -v t=$tokens_a_step '{ print $1 * t, $2 }'
}
curve "$out/subword-swarm.peer1.log" >"$out/subword-swarm.curve"
curve "$out/subword-single.log" >"$out/subword-single.curve"
curve "$out/bytes-single.log" >"$out/bytes-single.curve"
# The final validation loss: the mean of the peers', or the one process's.
swarm_val=$(swarm_figures subword-swarm | awk '{ print $1 }')
single_val() { sed -n 's/^final train loss .*, validation loss \([0-9.]*\).*/\1/p' "$out/$1.out"; }

# Bytes a token: the corpus's bytes over the subword dataset's tokens (both splits). SentencePiece
# encodes a line at a time, so the newlines count as bytes but cost the subword model nothing: a
# small bias in its favour (the byte-level model predicts one newline a line, ~40 bytes here).
corpus_bytes=$(stat -c %s "$out/corpus.txt")
subword_tokens=$(awk '/^(train|val): [0-9]+ tokens/ { s += $2 } END { print s }' "$out/subword.prepare.out")
bytes_per_token=$(awk -v b="$corpus_bytes" -v t="$subword_tokens" 'BEGIN { printf "%.3f", b / t }')
for name in subword-swarm subword-single; do
  awk -v bpt="$bytes_per_token" '{ print $1, $2 / log(2) / bpt }' "$out/$name.curve" >"$out/$name.bpb"
done
awk '{ print $1, $2 / log(2) }' "$out/bytes-single.curve" >"$out/bytes-single.bpb"

bpb() { awk -v l="$1" -v bpt="$2" 'BEGIN { printf "%.3f", l / log(2) / bpt }'; }
subword_val=$(single_val subword-single)
bytes_val=$(single_val bytes-single)
printf "%-16s %10s %8s\n" run val_loss val_bpb
printf "%-16s %10s %8s\n" subword-swarm "$swarm_val" "$(bpb "$swarm_val" "$bytes_per_token")"
printf "%-16s %10s %8s\n" subword-single "$subword_val" "$(bpb "$subword_val" "$bytes_per_token")"
printf "%-16s %10s %8s\n" bytes-single "$bytes_val" "$(bpb "$bytes_val" 1)"
echo "(equal tokens: $((steps * tokens_a_step)) a run; $bytes_per_token bytes a subword token)"
awk -v s="$swarm_val" -v p="$subword_val" -v b="$bytes_val" -v bpt="$bytes_per_token" \
  -v t=$((steps * tokens_a_step)) 'BEGIN {
  if (s == "" || p == "" || b == "" || bpt == "") {
    print "real-text: loss_ratio=nan subword_bpb=nan bytes_bpb=nan bytes_per_token=nan tokens=nan"
    exit 1
  }
  printf "real-text: loss_ratio=%.4f subword_bpb=%.3f bytes_bpb=%.3f bytes_per_token=%s tokens=%d\n",
    s / p, s / log(2) / bpt, b / log(2), bpt, t }'
