#!/usr/bin/env bash
# Installs what is needed, builds, and runs the whole test suite: a Release build with warnings
# as errors, then the same tests under AddressSanitizer + UndefinedBehaviorSanitizer, then the
# formatting check. .ci/run calls exactly this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/install-deps.sh
jobs=$(nproc)

echo "== format check"
scripts/format.sh --check

echo "== Release build (warnings are errors)"
scripts/build.sh build/ci-release Release -DLOCO_WERROR=ON
echo "== Release tests"
ctest --test-dir build/ci-release --output-on-failure --parallel "$jobs" --timeout 900

echo "== Sanitize build (ASan + UBSan)"
scripts/build.sh build/ci-sanitize Sanitize -DLOCO_WERROR=ON -DLOCO_BUILD_BENCH=OFF
echo "== Sanitize tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/ci-sanitize --output-on-failure --parallel "$jobs" --timeout 1800 \
  --label-exclude no-sanitize
