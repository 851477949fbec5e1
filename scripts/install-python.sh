#!/usr/bin/env bash
# Installs the Python package `loco` (docs/PYTORCH.md) for Debian's /usr/bin/python3 in one
# command: its dependencies from Debian's archive (with --with-torch, PyTorch too), a Release build
# of the package, and the package itself in that python3's site directory for local installs
# (/usr/local/lib/python3.X/dist-packages; sudo when not root), or in DIR with --target DIR.
# It also builds the programs a local run needs beside the package (loco-tracker, loco-prepare,
# loco-peer, in BUILD_DIR/bin) and says where they are.
# Usage: scripts/install-python.sh [--with-torch] [--target DIR] [--build-dir DIR]
programs=(loco-tracker loco-prepare loco-peer)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3  # the one python3-torch and python3-numpy install into
target=""
build_dir=$root/build/python
deps=(--with-python)
while [[ $# -gt 0 ]]; do
  case $1 in
    --with-torch) deps+=(--with-torch) ;;
    --target) target=${2:?--target needs a folder}; shift ;;
    --build-dir) build_dir=${2:?--build-dir needs a folder}; shift ;;
    *) echo "install-python: unknown option $1 (--with-torch, --target DIR, --build-dir DIR)" >&2; exit 2 ;;
  esac
  shift
done

"$root/scripts/install-deps.sh" "${deps[@]}"
build_type=Release
[[ -f $build_dir/CMakeCache.txt ]] && build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
"$root/scripts/build.sh" "$build_dir" "$build_type" -DLOCO_PYTHON=ON -- loco_python "${programs[@]}"
if [[ -z $target ]]; then
  target=$("$python" -c 'import site; print(site.getsitepackages()[0])')
fi
sudo_cmd=()
if [[ $(id -u) -ne 0 ]] && ! mkdir -p "$target" 2>/dev/null; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" cmake --install "$build_dir" --component python --prefix "$target" >/dev/null
echo "install-python: loco installed in $target/loco for $python"
bin_dir=$(cd "$build_dir/bin" && pwd)
echo "install-python: ${programs[*]} built in $bin_dir (PATH=\"$bin_dir:\$PATH\" to run them by name)"
