#!/usr/bin/env bash
# bad_input.sh ROOT BUILD: every invalid value of every lesson flag and runner verb gives a
# one-line error naming what was wrong, and exit status 2. The table is below.
set -u
root=$1 build=$2
failures=0
checked=0

# expect "WHAT MUST APPEAR IN THE ERROR" COMMAND...
expect() {
  local want=$1
  shift
  local err status lines
  err=$("$@" 2>&1 >/dev/null </dev/null)
  status=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  checked=$((checked + 1))
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -qF -- "$want"; then
    echo "FAIL: '$*' gave exit $status and $lines line(s), want 2 and 1 naming '$want': $err"
    failures=$((failures + 1))
  fi
}

lesson() { echo "$build/lessons/lesson$1"; }

# The flags every lesson shares; the lessons are checked two at a time (each start loads LibTorch).
shared_flags() {
  local l
  l=$(lesson "$1")
  expect "--size" "$l" --size 0
  expect "--size" "$l" --size -3
  expect "--size" "$l" --size abc
  expect "--size" "$l" --size 99999999
  expect "--dtype" "$l" --dtype int7
  expect "--device" "$l" --device tpu
  expect "--device cuda" "$l" --device cuda
  expect "--steps" "$l" --steps 0
  expect "--warmup" "$l" --warmup -1
  expect "--threads" "$l" --threads 0
  expect "--out" "$l" --out /proc/version/x
  expect "--no-such-flag" "$l" --no-such-flag
  expect "--size" "$l" --size
  echo "$checked $failures" >"$results/$1"
}
# Every lesson in the manifest, two at a time.
mapfile -t lessons < <(python3 -c 'import json, sys
for l in json.load(open(sys.argv[1]))["lessons"]: print(l["number"])' "$root/lessons/manifest.json")
missing=$(printf '%02d' $((10#${lessons[-1]} + 1)))
results=$(mktemp -d)
for ((i = 0; i < ${#lessons[@]}; i += 2)); do
  for n in "${lessons[@]:i:2}"; do shared_flags "$n" & done
  wait
done
for f in "$results"/*; do
  read -r c f_count <"$f"
  checked=$((checked + c))
  failures=$((failures + f_count))
done
rm -rf "$results"
# Each lesson's own flags.
expect "--sizes" "$(lesson 02)" --sizes 16,abc
expect "--sizes" "$(lesson 02)" --sizes 0
expect "--max-size" "$(lesson 02)" --max-size 8
expect "--large" "$(lesson 03)" --large 0
expect "--iterations" "$(lesson 07)" --iterations 0
expect "--iterations" "$(lesson 07)" --iterations many
expect "--dtype" "$(lesson 07)" --dtype bfloat16
expect "--features" "$(lesson 04)" --features x
expect "--variant" "$(lesson 05)" --variant wide
expect "--dim" "$(lesson 05)" --dim 0
expect "--optimizer" "$(lesson 08)" --optimizer adam
expect "--hidden" "$(lesson 08)" --hidden 0
expect "--hidden" "$(lesson 09)" --hidden abc
expect "float32" "$(lesson 09)" --dtype bfloat16
expect "does not divide" "$(lesson 10)" --dim 32 --heads 3
expect "--heads" "$(lesson 10)" --heads 0
expect "--hidden" "$(lesson 05)" --hidden -2
expect "--iterations" "$(lesson 06)" --iterations 0
expect "float32" "$(lesson 06)" --dtype float64
# The runner's verbs.
wb="$root/workbook"
expect "unknown command 'frob'" "$wb" frob
expect "no lesson 99" "$wb" run 99
expect "no lesson 99" "$wb" run 99 --libtorch2
expect "not a lesson number" "$wb" check x --libtorch2
expect "not a lesson number" "$wb" hint x
expect "unknown option '--bogus' for hint" "$wb" hint 3 --bogus
expect "not a lesson number" "$wb" solution x
expect "not a lesson number" "$wb" check -1
expect "no lesson 0" "$wb" reset 0
expect "unknown option '--bogus'" "$wb" test --bogus
expect "unknown option '--bogus'" "$wb" bench --bogus
expect "usage" "$wb" trace
expect "/nonexistent/trace.json" "$wb" trace /nonexistent/trace.json
expect "takes no arguments" "$wb" docs now
expect "SECONDS" "$wb" fuzz abc
expect "SECONDS" "$wb" fuzz 0
expect "no lesson $((10#$missing))" "$wb" watch "$missing"

echo "bad_input: $((checked - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
