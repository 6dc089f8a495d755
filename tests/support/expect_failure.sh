#!/usr/bin/env bash
# expect_failure.sh PATTERN... -- COMMAND...
# Passes when COMMAND exits with status 1 (a reported test failure, not a crash or an abort)
# and its output matches every PATTERN (grep -E). The aborts that count as a report, both named by
# doctest as the test case that crashed: UBSan's signed-overflow check in an exercise
# (tests/support/overflow_stops_the_check.cpp), and a segmentation fault the checks provoke on
# purpose (exercise 12: a hook left behind calls into its destroyed object).
set -u
patterns=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do patterns+=("$1"); shift; done
[ $# -gt 1 ] || { echo "usage: expect_failure.sh PATTERN... -- COMMAND..." >&2; exit 2; }
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output" | tail -n 25
overflow_reported() { [ "$status" -eq 134 ] && printf '%s\n' "$output" | grep -q 'runtime error: signed integer overflow'; }
crash_reported() { [ "$status" -eq 139 ] && printf '%s\n' "$output" | grep -q 'test case CRASHED: SIGSEGV'; }
if [ "$status" -ne 1 ] && ! overflow_reported && ! crash_reported; then
  echo "expect_failure: expected exit status 1 (a reported failure), got $status" >&2
  exit 1
fi
for pattern in "${patterns[@]}"; do
  if ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
    echo "expect_failure: output does not match /$pattern/" >&2
    exit 1
  fi
done
echo "expect_failure: failed as expected"
