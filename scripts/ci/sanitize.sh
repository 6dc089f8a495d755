#!/usr/bin/env bash
# sanitize.sh: the tests labelled "sanitize" (the toolkit's and the runner's unit tests, every
# solution's checks), built with AddressSanitizer and UndefinedBehaviorSanitizer (CMake preset
# `asan`, in build-asan/) and run by the test preset `asan` against Debian's uninstrumented
# LibTorch. `./workbook test --sanitize`; .ci/run runs it.
#
# The preset builds with -O1 -g1 (ASan's advice; line tables are all a report needs): half the
# compile time of -O2 -g with LibTorch's headers. The test preset leaves out the doctest suite
# "timing" (WORKBOOK_TEST_SUITE_EXCLUDE): the instrumentation slows the code under test and
# LibTorch (uninstrumented) unevenly, so timing ratios would measure the sanitizer.
#
# No suppressions are needed: against Debian's LibTorch 1.13 every program runs clean with
# LeakSanitizer and ASan's container-overflow checks on (LibTorch's one-time allocations stay
# reachable from its globals, so LeakSanitizer does not count them as leaks). If a LibTorch
# build ever needs one, add it to an LSAN_OPTIONS=suppressions file here and say why.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-asan
cd "$root"
# Warnings are not errors here: under -fsanitize GCC's -Wmaybe-uninitialized reports false
# positives inside libstdc++ (<regex>'s std::function at -O1), which the -O2 legs never see.
[ -f "$build/CMakeCache.txt" ] || cmake --preset asan -DWORKBOOK_WERROR=OFF >/dev/null
cmake --build --preset asan -j "$(nproc)" --target sanitize_programs >"$build/sanitize-build.log" 2>&1 ||
  { tail -n 40 "$build/sanitize-build.log"; echo "sanitize: build failed" >&2; exit 1; }
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
ctest --preset asan
