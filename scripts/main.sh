#!/usr/bin/env bash
# The main job: installs what is needed, builds loco in Release, and runs it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/install-deps.sh
scripts/build.sh build/release Release
echo "== loco is built; the trainer and the local swarm arrive with the next issues"
build/release/bin/loco-peer --version
build/release/bin/loco-tracker --version
