#!/usr/bin/env bash
# sanitize.sh: the toolkit's unit tests and every solution's checks, built with AddressSanitizer
# and UndefinedBehaviorSanitizer (CMake preset `asan`, in build-asan/), run against Debian's
# uninstrumented LibTorch. `./workbook test --sanitize`; .ci/run runs it.
#
# The preset builds with -O1 -g1 (ASan's advice; line tables are all a report needs): half the
# compile time of -O2 -g with LibTorch's headers.
#
# No suppressions are needed: against Debian's LibTorch 1.13 every program runs clean with
# LeakSanitizer and ASan's container-overflow checks on (LibTorch's one-time allocations stay
# reachable from its globals, so LeakSanitizer does not count them as leaks). If a LibTorch
# build ever needs one, add it to an LSAN_OPTIONS=suppressions file here and say why.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-asan
cd "$root"
[ -f "$build/CMakeCache.txt" ] || cmake --preset asan >/dev/null
mapfile -t lessons < <(awk -F'\t' '!/^#/ && NF >= 6 { print $1 }' lessons/manifest.tsv)
targets=(toolkit_tests toolkit_torch_tests)
for n in "${lessons[@]}"; do targets+=("verify_$n"); done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >"$build/sanitize-build.log" 2>&1 ||
  { tail -n 40 "$build/sanitize-build.log"; echo "sanitize: build failed" >&2; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export GLOG_minloglevel=2 OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
failed=()
for target in "${targets[@]}"; do
  binary=$(find "$build/tests" -maxdepth 1 -name "$target" -type f | head -n 1)
  start=$SECONDS
  # Checks of timing ratios (doctest suite "timing") are left out: the instrumentation slows the
  # code under test and LibTorch (uninstrumented) unevenly, so the ratios measure the sanitizer.
  if "$binary" --test-suite-exclude=timing >"$build/$target.sanitize.log" 2>&1; then
    echo "sanitize: $target passed ($((SECONDS - start)) s)"
  else
    echo "sanitize: $target FAILED ($((SECONDS - start)) s):"
    grep -E "ERROR: |runtime error|SUMMARY|FAILED|ERROR" "$build/$target.sanitize.log" | head -n 20
    failed+=("$target")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "sanitize: failed: ${failed[*]} (logs: build-asan/<target>.sanitize.log)"; exit 1; }
echo "sanitize: ${#targets[@]} test programs clean under ASan + UBSan"
