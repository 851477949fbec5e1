#!/usr/bin/env bash
# The main job: installs what is needed, builds loco in Release, and runs a whole swarm on this
# machine (configs/swarm.toml): a loco-tracker and 4 loco-peers on loopback, each on an emulated
# 20 Mbit/s, 25 ms link, training a tiny GPT together with DiLoCo (about a minute on 2 cores). It
# prints a progress line per round and, at the end, each peer's validation loss next to the
# corpus's entropy floor (the best loss any model can reach), the bytes each peer sent, and
# whether all peers hold the same model. docs/SWARM.md explains the output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/install-deps.sh
# Only what the main job runs: loco-swarm starts loco-tracker and loco-peer. (The tests and the
# benchmarks are scripts/test.sh's and bench/run.sh's.)
start=$SECONDS
scripts/build.sh build/release Release -- loco-swarm loco-peer loco-tracker
echo "== built in $((SECONDS - start)) s"
echo "== loco-swarm --config configs/swarm.toml"
build/release/bin/loco-swarm --config configs/swarm.toml
echo "== done; every process's config and log are in build/swarm/"
