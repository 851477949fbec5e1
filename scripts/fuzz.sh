#!/usr/bin/env bash
# Runs libFuzzer target NAME (tests/fuzz/NAME_fuzz.cpp) for SECONDS (default 60), built with
# clang + ASan + UBSan in build/fuzz, starting from the target's seeds. Crashes land in
# build/fuzz/crashes/NAME; replay one with build/fuzz/bin/fuzz-smoke-NAME FILE.
# Usage: scripts/fuzz.sh NAME [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: scripts/fuzz.sh NAME [SECONDS]}
seconds=${2:-60}
if [[ ! -f "$root/tests/fuzz/${name}_fuzz.cpp" ]]; then
  echo "scripts/fuzz.sh: no fuzz target '$name'; known targets:" >&2
  ls "$root"/tests/fuzz/*_fuzz.cpp | xargs -n1 basename | sed 's/_fuzz.cpp$//; s/^/  /' >&2
  exit 2
fi
CC=clang CXX=clang++ "$root/scripts/build.sh" "$root/build/fuzz" Sanitize -DLOCO_FUZZ=ON \
  -DLOCO_BUILD_BENCH=OFF -- "fuzz-$name" "fuzz-smoke-$name"
corpus="$root/build/fuzz/corpus/$name"
crashes="$root/build/fuzz/crashes/$name"
mkdir -p "$corpus" "$crashes"
"$root/build/fuzz/bin/fuzz-smoke-$name" --write-seeds "$corpus"
"$root/build/fuzz/bin/fuzz-$name" "$corpus" -max_total_time="$seconds" -artifact_prefix="$crashes/"
