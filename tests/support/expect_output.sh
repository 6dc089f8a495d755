#!/usr/bin/env bash
# expect_output.sh WANT... -- COMMAND...
# Passes when COMMAND exits with status 0 and its output holds every WANT (a fixed string).
set -u
wanted=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do wanted+=("$1"); shift; done
[ $# -gt 1 ] || { echo "usage: expect_output.sh WANT... -- COMMAND..." >&2; exit 2; }
shift
output=$(WORKBOOK_STRICT_CLAIMS=1 "$@" 2>&1)
status=$?
[ "$status" -eq 0 ] || { printf '%s\n' "$output" | tail -n 25; echo "expect_output: exit status $status" >&2; exit 1; }
for want in "${wanted[@]}"; do
  if ! printf '%s\n' "$output" | grep -Fq -- "$want"; then
    printf '%s\n' "$output" | tail -n 40
    echo "expect_output: the output lacks '$want'" >&2
    exit 1
  fi
done
echo "expect_output: all ${#wanted[@]} lines present"
