#!/usr/bin/env bash
# Configures (once) and builds loco. Usage: scripts/build.sh BUILD_DIR BUILD_TYPE [cmake -D args...] [-- targets...]
# BUILD_TYPE is Release, Debug, Sanitize or ThreadSanitize. Uses Ninja and ccache when they are installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$1
build_type=$2
shift 2
cmake_args=()
targets=()
while [[ $# -gt 0 ]]; do
  if [[ $1 == "--" ]]; then
    shift
    targets=("$@")
    break
  fi
  cmake_args+=("$1")
  shift
done

generator=()
if command -v ninja >/dev/null 2>&1 && [[ ! -f "$build_dir/Makefile" ]]; then
  generator=(-G Ninja)
fi
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$build_type" "${cmake_args[@]}" >/dev/null
jobs=$(nproc)
if [[ ${#targets[@]} -gt 0 ]]; then
  cmake --build "$build_dir" --parallel "$jobs" --target "${targets[@]}"
else
  cmake --build "$build_dir" --parallel "$jobs"
fi
