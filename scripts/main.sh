#!/usr/bin/env bash
# The main job: installs what is needed, builds loco in Release, and trains the tiny GPT of
# configs/tiny.toml on the synthetic corpus (under a minute on 2 cores), printing its loss next
# to the corpus's entropy floor, the best loss any model can reach.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/install-deps.sh
scripts/build.sh build/release Release
echo "== loco-train --config configs/tiny.toml (progress on stderr, summary below)"
build/release/bin/loco-train --config configs/tiny.toml --train.checkpoint build/release/tiny.safetensors
echo "== done; the checkpoint is build/release/tiny.safetensors (resume with --resume, see docs/TRAINING.md)"
