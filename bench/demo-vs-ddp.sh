#!/usr/bin/env bash
# bench/run.sh demo-vs-ddp: DeMo against the data-parallel baseline, 4 workers in one process
# (bench-workers: one thread each, each on its own shard of configs/tiny.toml's Markov corpus,
# 300 steps at batch 16), no network: the bytes are what each worker's messages would put on the
# wire with loco's collectives (DDP: ring all-reduce of fp32 gradients, 2(M−1)/M of the vector;
# DeMo: direct all-gather of its message to the M − 1 others). Extra arguments go to both runs
# (e.g. --train.steps 100), DeMo options to the DeMo run only through DEMO_ARGS.
# Last line: demo-vs-ddp: demo_bytes_vs_ddp=… demo_message_vs_ddp=… demo_loss_vs_ddp=…
#   (wire bytes, bytes handed over per worker, final validation loss; each DeMo ÷ DDP).
# Usage: [DEMO_ARGS="--strategy.demo-topk 16"] bench/run.sh demo-vs-ddp [--section.key VALUE ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" "$root/build/release" Release -- bench-workers >&2
bin=$root/build/release/bin
# shellcheck disable=SC2086
ddp=$("$bin/bench-workers" --config "$root/configs/tiny.toml" --workers 4 \
  --strategy.kind ddp --log-level warn "$@" | tee /dev/stderr | tail -1)
# shellcheck disable=SC2086
demo=$("$bin/bench-workers" --config "$root/configs/tiny.toml" --workers 4 \
  --strategy.kind demo --log-level warn ${DEMO_ARGS:-} "$@" | tee /dev/stderr | tail -1)
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
awk -v db="$(field "$demo" wire_bytes)" -v pb="$(field "$ddp" wire_bytes)" \
  -v dm="$(field "$demo" handed_over_bytes)" -v pm="$(field "$ddp" handed_over_bytes)" \
  -v dl="$(field "$demo" val_loss)" -v pl="$(field "$ddp" val_loss)" \
  'BEGIN { printf "demo-vs-ddp: demo_bytes_vs_ddp=%.4f demo_message_vs_ddp=%.4f demo_loss_vs_ddp=%.4f\n", db / pb, dm / pm, dl / pl }'
