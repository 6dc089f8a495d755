#!/usr/bin/env bash
# setup-deps.sh [--check]
# Installs with apt whatever the workbook needs and is missing (idempotent), and makes OpenBLAS
# the active BLAS: Debian's default reference BLAS is ~20x slower for LibTorch's CPU matmul.
# --check only lists the missing packages (exit 1 when something is missing).
# Uses only bash, coreutils, dpkg and apt: it runs before anything else is installed.
# python3-setuptools: where LibTorch is 2.6 (Debian 13), AOTInductor compiles lesson 06's models
# with python3-torch and needs it to build the generated code. lld: links a program against
# LibTorch in ~0.1 s where GNU ld takes ~1.6 s (the edit -> check cycle). libgloo-dev: the
# headers of Gloo, which LibTorch's c10d process group includes (lesson 12; the library comes with
# libtorch). ninja-build: the generator (a no-op build of one target takes 0.2 s against Make's
# 1.4 s, and every runner command starts with one).
set -euo pipefail

PACKAGES=(
  g++ cmake make ninja-build git
  libtorch-dev python3-torch python3-setuptools libgloo-dev
  libopenblas0-pthread libopenblas-dev
  libfmt-dev doctest-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
  doxygen graphviz doxygen-awesome-css
  clang libclang-rt-dev clang-format lld
  chromium
)
# CI's second leg (WORKBOOK_SECOND_LEG) leaves out what only the docs site and the browser checks
# use: they render the same pages, from the same headers, on the first leg.
if [ -n "${WORKBOOK_SECOND_LEG:-}" ]; then
  kept=()
  for p in "${PACKAGES[@]}"; do
    case $p in doxygen | graphviz | doxygen-awesome-css | chromium) ;; *) kept+=("$p") ;; esac
  done
  PACKAGES=("${kept[@]}")
fi
BLAS_ALTERNATIVE=libblas.so.3-$(uname -m)-linux-gnu

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do
    [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *"install ok installed"* ]] || echo "$p"
  done
}

openblas_path() {
  update-alternatives --list "$BLAS_ALTERNATIVE" 2>/dev/null | grep -m1 openblas || true
}

# (Output captured, never piped into grep -q: under pipefail, grep leaving early kills the writer
# with SIGPIPE now and then, and the answer was "not OpenBLAS".)
blas_is_openblas() {
  [[ $(update-alternatives --query "$BLAS_ALTERNATIVE" 2>/dev/null) =~ (^|$'\n')Value:\ [^$'\n']*openblas ]]
}

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "setup-deps: this is not a Debian/Ubuntu system. Install a C++17 compiler, CMake >= 3.25," >&2
  echo "  fmt, doctest, nlohmann-json, CLI11 and OpenBLAS, and point LIBTORCH at an unpacked" >&2
  echo "  LibTorch download (export LIBTORCH=/path/to/libtorch); see README.md." >&2
  exit 2
fi

mapfile -t missing < <(missing_packages)
if [ "${1:-}" = "--check" ]; then
  [ ${#missing[@]} -eq 0 ] && blas_is_openblas && exit 0
  [ ${#missing[@]} -gt 0 ] && echo "missing: ${missing[*]}"
  blas_is_openblas || echo "BLAS: the reference BLAS is active, not OpenBLAS"
  exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "setup-deps: needs root (run: sudo $0)" >&2
  exit 2
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # The package lists may be stale or absent on a fresh machine; refresh them first.
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! blas_is_openblas; then
  target=$(openblas_path)
  if [ -n "$target" ]; then
    echo "setup-deps: making OpenBLAS the active BLAS ($target)"
    update-alternatives --set "$BLAS_ALTERNATIVE" "$target"
  else
    echo "setup-deps: warning: no OpenBLAS alternative for $BLAS_ALTERNATIVE" >&2
  fi
fi
echo "setup-deps: all dependencies present"
