#!/usr/bin/env bash
# Installs what is needed, checks the formatting, builds everything once (programs, tests, fuzz
# smoke drivers, and the benchmarks, compiled but not run) under AddressSanitizer +
# UndefinedBehaviorSanitizer with warnings as errors, and runs every test of that build; then, as a
# step of its own, the Python package (its dependencies, its build, its pytest tests: the C++
# suite needs none of them). Prints each phase's time at the end. .ci/run calls exactly this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

phases=()
phase_start=$SECONDS
phase_name=""
# Starts a phase (and ends the one before): its time goes into the summary.
phase() {
  end_phase
  phase_name=$1
  phase_start=$SECONDS
  echo "== $phase_name"
}
end_phase() {
  [[ -n $phase_name ]] && phases+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "$phase_name")")
  phase_name=""
}
summary() {
  local rc=$?
  end_phase
  echo "== phase times ($([[ $rc -eq 0 ]] && echo passed || echo "FAILED, exit $rc"))"
  printf '%s\n' "${phases[@]}"
  printf '%5d s  in all\n' "$SECONDS"
}
trap summary EXIT

phase "install dependencies"
scripts/install-deps.sh

phase "format check"
scripts/format.sh --check

phase "build (ASan + UBSan, warnings are errors)"
scripts/build.sh build/ci Sanitize -DLOCO_WERROR=ON -DLOCO_PYTHON=OFF  # the C++ suite needs no Python

phase "tests (ASan + UBSan)"
# ctest starts the tests it knows to be long first, from its cost file; a fresh build has none, so
# a 2-minute test could start last and run alone at the end. scripts/test-costs.txt holds the
# tests over 5 s of a CI run, in seconds (rewrite it from build/ci/Testing/Temporary/CTestCostData.txt:
# awk '$3 > 5' keeps those lines).
mkdir -p build/ci/Testing/Temporary
[[ -f build/ci/Testing/Temporary/CTestCostData.txt ]] ||
  cp scripts/test-costs.txt build/ci/Testing/Temporary/CTestCostData.txt
# A test that keeps a core busy holds one of nproc "cores" slots (tests/CMakeLists.txt); up to 4
# real-process tests, which mostly wait on sockets and timers, run beside them.
cores=$(nproc)
slots=$(seq 0 $((cores - 1)) | sed 's/.*/{"id":"&","slots":1}/' | paste -sd,)
printf '{"version":{"major":1,"minor":0},"local":[{"cores":[%s]}]}\n' "$slots" \
  >build/ci/cores.json
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/ci --output-on-failure --parallel $((cores + 4)) --timeout 1200 \
  --resource-spec-file "$PWD/build/ci/cores.json" --label-exclude python

phase "Python package: dependencies, build, tests (pytest)"
scripts/install-deps.sh --with-python --with-torch  # torch: the tests of CPU tensors bound as they are
scripts/build.sh build/ci Sanitize -DLOCO_WERROR=ON -DLOCO_PYTHON=ON -- loco_python
ctest --test-dir build/ci --output-on-failure --parallel "$(nproc)" --timeout 600 \
  --label-regex python
