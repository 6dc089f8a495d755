#!/usr/bin/env bash
# gpu-check.sh [OUT_DIR]: the workbook's GPU checks in one run, for a machine with a CUDA GPU and
# a torch installed but no package registry.
#
#   1. on a machine with Debian's packages:  scripts/pack-gpu-deps.sh   (-> .cache/gpu-deps)
#   2. copy the checkout, .cache/gpu-deps included, to the GPU machine, then:
#      scripts/gpu-check.sh OUT_DIR
#
# It builds against the torch found there (python3 -c 'import torch;print(torch.utils.cmake_prefix_path)',
# or WORKBOOK_TORCH_PREFIX=/path/containing/Torch), runs lessons 01, 02 (64 and 4096), 05 and 07
# and the `gpu` test suite, and writes their outputs, traces and summary.md into OUT_DIR
# (default: gpu-check/). Without a GPU it still builds and runs what it can, and the summary
# says so. Exit status: 0 when every step ran, 1 when one failed (the summary lists it).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/gpu-check}" && cd "${1:-$root/gpu-check}" && pwd)
deps=${WORKBOOK_GPU_DEPS:-$root/.cache/gpu-deps}
build=${WORKBOOK_GPU_BUILD_DIR:-$root/build-gpu}
jobs=$(nproc 2>/dev/null || echo 2)
started=$(date +%s)
failed=()
log() { printf '[gpu-check %4ss] %s\n' "$(($(date +%s) - started))" "$*" | tee -a "$out/gpu-check.log"; }
die() { log "error: $*"; exit 1; }
: >"$out/gpu-check.log"

# step NAME SECONDS COMMAND...: runs a step with a time limit, its output into OUT/NAME.txt.
step() {
  local name=$1 limit=$2
  shift 2
  log "$name: $*"
  local status=0
  timeout "$limit" "$@" >"$out/$name.txt" 2>&1 || status=$?
  [ "$status" -eq 0 ] && return 0
  log "$name FAILED (exit $status), see $name.txt"
  failed+=("$name")
  return 1
}

# --- what is here -------------------------------------------------------------------------
[ -d "$deps/lib/cmake" ] || die "no packed dependencies in $deps: run scripts/pack-gpu-deps.sh on a machine with Debian's packages"
command -v cmake >/dev/null || die "cmake is not installed here"
prefix=${WORKBOOK_TORCH_PREFIX:-$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null)}
[ -n "$prefix" ] && [ -f "$prefix/Torch/TorchConfig.cmake" ] ||
  die "no LibTorch CMake package (Torch/TorchConfig.cmake) under '$prefix': install torch for python3 or set WORKBOOK_TORCH_PREFIX"
gpu=no
if command -v nvidia-smi >/dev/null && nvidia-smi -L >"$out/nvidia-smi.txt" 2>&1; then gpu=yes; fi
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
cuda=OFF
architectures=()
if [ -n "$nvcc" ]; then
  cuda=ON
  [ "$gpu" = yes ] && architectures=(-DCMAKE_CUDA_ARCHITECTURES=native)
fi
log "torch: $prefix · GPU: $gpu · nvcc: ${nvcc:-none} · $jobs cores"

# --- build --------------------------------------------------------------------------------
targets=(workbook_doctor workbook_trace lesson01 lesson02 lesson05 lesson07)
[ "$cuda" = ON ] && targets+=(gpu_verify_07)
step configure 300 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWORKBOOK_CUDA=$cuda \
  ${nvcc:+-DCMAKE_CUDA_COMPILER=$nvcc} "${architectures[@]}" "-DCMAKE_PREFIX_PATH=$deps;$prefix" || die "configure failed"
step build 600 cmake --build "$build" -j "$jobs" --target "${targets[@]}" || die "build failed"

# --- runs ---------------------------------------------------------------------------------
traces="$out/traces"
export GLOG_minloglevel=2
step doctor 60 "$build/tools/workbook_doctor"
step lesson01 120 "$build/lessons/lesson01" --out "$traces"
step lesson02 180 "$build/lessons/lesson02" --sizes 64,4096 --out "$traces"
step lesson05 120 "$build/lessons/lesson05" --size 64 --out "$traces"
if [ "$gpu" = yes ]; then
  step lesson07 180 "$build/lessons/lesson07" --out "$traces"
else
  "$build/lessons/lesson07" --out "$traces" >"$out/lesson07.txt" 2>&1
  log "lesson07: no GPU here, so it only said: $(tail -n 1 "$out/lesson07.txt")"
fi
if [ "$cuda" = ON ]; then
  step gpu_suite 180 ctest --test-dir "$build" -L gpu --output-on-failure
fi

# --- summary ------------------------------------------------------------------------------
{
  echo "# GPU check — $(date -u +%Y-%m-%d) — $(($(date +%s) - started)) s"
  echo
  echo '```'
  cat "$out/doctor.txt" 2>/dev/null
  echo '```'
  echo
  echo "## Lesson 02: busy fraction (kernels' busy time / step) at 64 and 4096"
  echo '```'
  cat "$traces/02_scale/sweep.csv" 2>/dev/null || echo "(no sweep.csv)"
  echo '```'
  echo "The articles: about 1% busy at 64 (overhead-bound), busy at 4096 (compute-bound)."
  echo
  echo "## Lesson 05: kernels per GeGLU forward (the articles: 5)"
  echo '```'
  sed -n '/^kernels per forward/,/^$/p' "$out/lesson05.txt" 2>/dev/null | head -n 12
  grep -m1 "ops in one forward" "$out/lesson05.txt" 2>/dev/null
  echo '```'
  echo
  echo "## Lesson 01: the table"
  echo '```'
  cat "$traces"/01_matmul_add/*.txt 2>/dev/null | head -n 25
  echo '```'
  echo
  echo "## Lesson 07: matmul + bias three ways (CUDA events)"
  echo '```'
  cat "$traces"/07_bias_epilogue/*_timings.csv 2>/dev/null || tail -n 3 "$out/lesson07.txt" 2>/dev/null
  grep -E "separate bias kernel moves|bias epilogue =" "$out/lesson07.txt" 2>/dev/null
  echo '```'
  echo
  echo "## gpu test suite"
  echo '```'
  grep -E "tests passed|Skipped|SKIPPED|Failed" "$out/gpu_suite.txt" 2>/dev/null || echo "(not run: no nvcc)"
  echo '```'
  echo
  if [ ${#failed[@]} -eq 0 ]; then echo "Every step ran."; else echo "Failed steps: ${failed[*]} (see their .txt files)."; fi
} >"$out/summary.md.tmp" && mv "$out/summary.md.tmp" "$out/summary.md"
log "summary: $out/summary.md"
[ ${#failed[@]} -eq 0 ]
