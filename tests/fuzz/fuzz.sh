#!/usr/bin/env bash
# fuzz.sh BUILD_DIR SECONDS: builds tests/fuzz/trace_import_fuzzer.cpp with clang's libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer over the toolkit's LibTorch-free sources, and
# fuzzes the chrome-trace importer and key-averages builder for SECONDS, starting from the seeds in
# tests/data, read recursively (traces/: ours, Python's, Kineto's, one gzip-compressed, so the
# decompressor is fuzzed too; a Kineto CUDA sample; the
# hostile inputs in fuzz-regressions/): one home for every test input. A crash leaves its input in
# BUILD_DIR/fuzz/crash-*: add it to tests/data/fuzz-regressions/ (toolkit_tests replays them).
# Exit 77 (skipped) where clang or its libFuzzer runtime is missing. `./workbook fuzz [SECONDS]`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1 seconds=$2
# The importer has no LibTorch in it: CI's second leg (scripts/ci/libtorch2.sh) would fuzz the same
# code again for 100 s, so it runs once, on the first leg.
if [ -n "${WORKBOOK_SECOND_LEG:-}" ]; then
  echo "SKIPPED: the fuzzer runs on the first leg only (the importer does not use LibTorch)"
  exit 77
fi
out="$build/fuzz"
cxx=""
for candidate in clang++ clang++-19 clang++-16 clang++-14; do
  command -v "$candidate" >/dev/null && { cxx=$candidate; break; }
done
if [ -z "$cxx" ]; then
  echo "SKIPPED: no clang++ here (scripts/setup-deps.sh installs clang and libclang-rt-dev)"
  exit 77
fi
mkdir -p "$out/objects" "$out/corpus"
probe="$out/objects/probe"
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
  "$cxx" -x c++ -fsanitize=fuzzer - -o "$probe" 2>/dev/null; then
  echo "SKIPPED: $cxx has no libFuzzer runtime (install libclang-rt-dev)"
  exit 77
fi
# shellcheck disable=SC2054  # the commas belong to -fsanitize=
flags=(-std=c++17 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -I"$root/common/profiler/include")
sources=(atomic_file chrome_trace_export chrome_trace_import trace_parts decimal event_table flame_graph format gpu_analysis gzip kernel_names key_averages memory_timeline normalize profile schedule svg)
# Compile only what changed, two at a time.
newest_header=$(ls -t "$root"/common/profiler/include/workbook/profiler/* "$root"/common/profiler/src/*.h | head -n 1)
for s in "${sources[@]}"; do
  src="$root/common/profiler/src/$s.cpp" obj="$out/objects/$s.o"
  [ "$obj" -nt "$src" ] && [ "$obj" -nt "$newest_header" ] && continue
  echo "$src $obj"
done | xargs -r -n 2 -P 2 sh -c "$cxx ${flags[*]} -c \"\$0\" -o \"\$1\""
"$cxx" "${flags[@]}" -fsanitize=fuzzer "$root/tests/fuzz/trace_import_fuzzer.cpp" "$out"/objects/*.o -lfmt -lz \
  -o "$out/trace_import_fuzzer"
# Replay the regressions first, then fuzz from the seeds plus what earlier runs found.
regressions=("$root"/tests/data/fuzz-regressions/*)
[ -e "${regressions[0]}" ] && "$out/trace_import_fuzzer" "${regressions[@]}" >/dev/null 2>&1
"$out/trace_import_fuzzer" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
  -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" "$root/tests/data" 2>"$out/fuzz.log" || {
  tail -n 40 "$out/fuzz.log"
  echo "fuzz: a crash; its input is in $out/crash-* — add it to tests/data/fuzz-regressions/"
  exit 1
}
grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz.log"
echo "fuzz: $seconds s without a crash, corpus $(ls "$out/corpus" | wc -l) inputs"
