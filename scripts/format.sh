#!/usr/bin/env bash
# Formats every C and C++ file with clang-format, or with --check only reports files that differ.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.c' '*.h' '*.hpp.in')
if [[ ${#files[@]} -eq 0 ]]; then exit 0; fi
if [[ "${1:-}" == "--check" ]]; then
  clang-format --dry-run -Werror "${files[@]}"
  echo "format: ${#files[@]} files clean"
else
  clang-format -i "${files[@]}"
fi
