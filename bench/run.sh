#!/usr/bin/env bash
# Runs benchmark NAME: builds what it needs in Release, then runs it. Each benchmark prints, as
# its last line, "NAME: key=value key=value ...".
# Usage: bench/run.sh NAME [args...]
# A benchmark is bench/NAME.cpp (built as build/release/bin/bench-NAME) or bench/NAME.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

known() {
  for f in "$root"/bench/*.cpp "$root"/bench/*.sh; do
    [[ -e $f ]] || continue
    name=$(basename "$f")
    name=${name%.*}
    [[ $name == run ]] || echo "$name"
  done | sort -u
}

name=${1:-}
if [[ -z $name ]]; then
  echo "usage: bench/run.sh NAME [args...]; known benchmarks:" >&2
  known | sed 's/^/  /' >&2
  exit 2
fi
shift
if [[ -f "$root/bench/$name.sh" ]]; then
  exec bash "$root/bench/$name.sh" "$@"
elif [[ -f "$root/bench/$name.cpp" ]]; then
  "$root/scripts/build.sh" "$root/build/release" Release -- "bench-$name" >&2
  exec "$root/build/release/bin/bench-$name" "$@"
fi
echo "bench/run.sh: unknown benchmark '$name'; known benchmarks:" >&2
known | sed 's/^/  /' >&2
exit 2
