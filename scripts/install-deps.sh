#!/usr/bin/env bash
# Installs loco's build and test dependencies from Debian's archive.
# Idempotent: runs `apt-get update` once, and only when something is missing.
# Usage: scripts/install-deps.sh [--with-python] [--with-torch] [--with-plots] [--with-text]
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libsodium-dev libzstd-dev libeigen3-dev
  libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang clang-format libclang-rt-14-dev ccache
  python3 python3-numpy iproute2
  libminiupnpc-dev                # UPnP-IGD port mapping (net/upnp_mapping.hpp)
  libnatpmp-dev                   # NAT-PMP/PCP port mapping (net/natpmp_mapping.hpp)
  libsentencepiece-dev            # subword tokenizers of real-text datasets (data/tokenizer.hpp)
  libssl-dev                      # https:// dataset mirrors (fetch/http_get.hpp): most serve HTTPS only
  nftables miniupnpd-nftables     # home routers in network namespaces (tests/programs/home_router_test.cpp)
  chromium chromium-driver fonts-dejavu-core  # the status page's browser test (headless)
  etcd-server etcd-client         # tracker replicas' consensus store (etcd/); tests start their own on loopback
)
for flag in "$@"; do
  case $flag in
    # OpenBLAS: without it torch falls back to the reference BLAS (~2 GFLOP/s, 20x slower)
    --with-torch) packages+=(python3-torch libopenblas0-pthread) ;;
    --with-plots) packages+=(gnuplot-nox) ;;  # scripts/plot-wan.sh; tests never need it
    --with-text) packages+=(vim-runtime) ;;   # bench/real-text.sh's English corpus (Vim's docs)
    # The Python package (src/python/, -DLOCO_PYTHON=ON) and its tests
    --with-python) packages+=(pybind11-dev python3-pybind11 python3-pytest) ;;
    *) echo "install-deps: unknown option $flag (--with-python, --with-torch, --with-plots, --with-text)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
