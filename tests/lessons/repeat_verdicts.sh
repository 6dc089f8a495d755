#!/usr/bin/env bash
# repeat_verdicts.sh BUILD RUNS: the checks most exposed to a machine's noise give one verdict,
# RUNS times in a row: the reference solutions of exercises 01 (profiling cycles), 05 (stage
# times) and 08 (phase times) pass every time, and their mutants fail every time.
set -u
build=$1 runs=$2
# CI's second leg repeats fewer times: the same checks, with LibTorch 2.6's slower profiler (54 s
# for 5 runs there, 210 s for 20 here when each run was a process of its own); the first leg's 20
# runs carry the claim.
if [ -n "${WORKBOOK_SECOND_LEG:-}" ] && [ "$runs" -gt 5 ]; then
  runs=5
fi
failures=0
# repeat WANT PROGRAM [ARGS...]: WANT is 0 (passes) or 1 (a reported failure) in every run.
repeat() {
  local want=$1 done_runs status
  shift
  local out per=$((runs < 5 ? runs : 5))
  for ((done_runs = 0; done_runs < runs; done_runs += per)); do
    out=$(WORKBOOK_REPEAT=$per "$@" 2>&1)
    status=$?
    if [ "$status" -ne "$want" ]; then
      echo "FAIL: runs $((done_runs + 1))-$((done_runs + per)) of $(basename "$1") gave exit $status, want $want; what it reported:"
      printf '%s\n' "$out" | grep -E -A4 "ERROR|wanted|TEST CASE|in this process" | head -n 20
      failures=$((failures + 1))
      return
    fi
  done
  echo "ok   $(basename "$1"): exit $want in $runs runs"
}
repeat 0 "$build/tests/verify_01"
repeat 0 "$build/tests/verify_05"
repeat 0 "$build/tests/verify_08"
repeat 1 "$build/tests/mutant_01_after_loop" "--test-case=each cycle's trace is on disk*"
repeat 1 "$build/tests/mutant_01_mean_not_median" "--test-case=the other steps' gap is their median*"
repeat 1 "$build/tests/mutant_05_first_forward_only" "--test-case=two unequal forwards*"
repeat 1 "$build/tests/mutant_08_backward_always_dominant" "--test-case=the dominant phase is whichever*"
repeat 1 "$build/tests/mutant_08_dominant_from_first_step" "--test-case=the dominant phase is the mean*"
echo "repeat_verdicts: $((8 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
