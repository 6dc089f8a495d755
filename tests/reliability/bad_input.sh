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

# The flags every lesson shares (one parser, lesson_cli.h): every bad value on lesson 01, and on
# each other lesson the parser's paths that prove it is wired in (a range, the device, an unknown
# flag, the output folder). Each start loads LibTorch (~0.7 s): all 15 on all 12 lessons took two
# minutes of the suite repeating the parser's own checks. Two lessons at a time.
shared_flags() {
  local l
  l=$(lesson "$1")
  expect "--size" "$l" --size 0
  expect "--device cuda" "$l" --device cuda
  expect "--no-such-flag" "$l" --no-such-flag
  expect "--out" "$l" --out /proc/version/x
  if [ "$1" != 01 ]; then
    echo "$checked $failures" >"$results/$1"
    return
  fi
  expect "--size" "$l" --size -3
  expect "--size" "$l" --size abc
  expect "--size" "$l" --size 99999999
  expect "--dtype" "$l" --dtype int7
  expect "--device" "$l" --device tpu
  expect "--steps" "$l" --steps 0
  expect "--warmup" "$l" --warmup -1
  expect "--threads" "$l" --threads 0
  expect "--threads" "$l" --threads 1024
  expect "--steps" "$l" --steps 101
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
expect "--head-dim" "$(lesson 11)" --head-dim 0
expect "--heads" "$(lesson 11)" --heads abc
expect "--batch" "$(lesson 11)" --batch 65
expect "float32" "$(lesson 11)" --dtype float64
expect "more than half of this machine's memory" "$(lesson 11)" --size 4096 --heads 64 --batch 64
expect "--hidden" "$(lesson 05)" --hidden -2
expect "--iterations" "$(lesson 06)" --iterations 0
expect "--ranks" "$(lesson 12)" --ranks 0
expect "does not split evenly over 2 ranks" "$(lesson 12)" --size 15
expect "--fail-rank 2 is not a rank of 2" "$(lesson 12)" --fail-rank 2
expect "--fail-rank" "$(lesson 12)" --fail-rank abc
expect "--fail-step" "$(lesson 12)" --fail-rank 1 --fail-step x
expect "--timeout" "$(lesson 12)" --timeout 0
expect "--bucket-kb" "$(lesson 12)" --bucket-kb x
expect "float32" "$(lesson 12)" --dtype float64
expect "--threads: " "$(lesson 12)" --threads 2
expect "more than half of this machine's memory" "$(lesson 12)" --dim 8192 --hidden 32768 --ranks 64
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

# The trace reader and its flags (every flag is checked before anything is read or written).
tool="$build/tools/workbook_trace"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%s' '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]}' >"$work/ok.json"
printf '%s' '{"traceEvents": []}' >"$work/empty.json"
printf '%s' '{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}]}' >"$work/metadata_only.json"
printf '[{"ph": "X", "name": "\xed\xa0\x80", "ts": 0, "dur": 1}]' >"$work/surrogate.json"
printf '[{"ph": "X", "name": "\xf4\x90\x80\x80", "ts": 0, "dur": 1}]' >"$work/above_10ffff.json"
printf '[{"ph": "X", "name": "\xe0\x80\xaf", "ts": 0, "dur": 1}]' >"$work/overlong.json"
expect "--limit" "$tool" "$work/ok.json" --limit 5abc
expect "--limit" "$tool" "$work/ok.json" --limit 1e3
expect "--limit" "$tool" "$work/ok.json" --limit -3
gzip -c "$work/ok.json" | head -c 20 >"$work/cut.json.gz"
expect "cut short" "$tool" "$work/cut.json.gz"
{ gzip -c "$work/ok.json"; printf 'junk'; } >"$work/junk_after.json.gz"
expect "not another gzip member" "$tool" "$work/junk_after.json.gz"
gzip -c "$work/ok.json" >"$work/ok.json.gz"
cp "$work/ok.json.gz" "$work/ok_copy.json.gz"
expect "--out" "$tool" "$work/ok.json.gz" --out "$work/ok.json.gz"
cmp -s "$work/ok.json.gz" "$work/ok_copy.json.gz" || { echo "FAIL: --out onto the input changed it"; failures=$((failures + 1)); }
expect "no GPU kernels" "$tool" "$work/ok.json" --kernels --out "$work/never.json.gz"
[ ! -e "$work/never.json.gz" ] || { echo "FAIL: --out was written for a trace rejected by --kernels"; failures=$((failures + 1)); }
expect "--ranks takes only" "$tool" --ranks "$work/ok.json" "$work/ok.json" --out "$work/never.json"
expect "--out needs a value" "$tool" "$work/ok.json" --out ""
printf '%s' '{"traceEvents": [], "traceEvents": [{"ph": "X", "name": "a", "ts": 0, "dur": 1}]}' >"$work/two_arrays.json"
expect 'two "traceEvents"' "$tool" "$work/two_arrays.json"
printf '\xef\xbb\xbf\xef\xbb\xbf{}' >"$work/two_byte_order_marks.json"
expect "not valid JSON" "$tool" "$work/two_byte_order_marks.json"
expect "unknown sort key 'bogus'" "$tool" "$work/ok.json" --sort bogus --svg "$work/never.svg"
[ ! -e "$work/never.svg" ] || { echo "FAIL: --sort bogus wrote the SVG before rejecting the flag"; failures=$((failures + 1)); }
expect "unknown sort key 'bogus'" "$tool" "$work/ok.json" --sort bogus --gpu
expect "unknown sort key 'bogus'" "$tool" "$work/empty.json" --sort bogus
expect "no complete events" "$tool" "$work/empty.json"
expect "no GPU kernels" "$tool" "$work/ok.json" --kernels
expect "three views" "$tool" "$work/ok.json" --kernels --gpu
expect "three views" "$tool" "$work/ok.json" --advise --gpu
expect "--ranks takes only" "$tool" --ranks "$work/ok.json" "$work/ok.json" --advise
expect "no complete events" "$tool" "$work/metadata_only.json"
expect "empty file" "$tool" /dev/stdin
expect "not valid JSON" "$tool" /dev/zero
expect "UTF-8" "$tool" "$work/surrogate.json"
expect "UTF-8" "$tool" "$work/above_10ffff.json"
expect "UTF-8" "$tool" "$work/overlong.json"
echo kept >"$work/other.txt"
ln -s "$work/other.txt" "$work/link.svg"
expect "a symlink" "$tool" "$work/ok.json" --gpu --svg "$work/link.svg"
[ -L "$work/link.svg" ] || { echo "FAIL: --svg replaced a symlink with a file"; failures=$((failures + 1)); }
mkfifo "$work/pipe.svg"
expect "a pipe" "$tool" "$work/ok.json" --svg "$work/pipe.svg"
expect "no device activity" "$(lesson 02)" --from-trace "$work/empty.json"
expect "--sizes and --from-trace" "$(lesson 02)" --from-trace "$work/ok.json" --sizes 16,32,64
expect "--traces and --from-trace" "$(lesson 02)" --from-trace "$work/ok.json" --traces
expect "not valid JSON" "$(lesson 02)" --from-trace "$root/README.md"
# Shared flags a lesson does not honour are rejected, not ignored or written into file names.
expect "--size: this lesson does not use it" "$(lesson 02)" --size 128
expect "--warmup: this lesson does not use it" "$(lesson 06)" --warmup 3
expect "float32" "$(lesson 08)" --dtype float64
expect "float32" "$(lesson 10)" --dtype float64
expect "more than half of this machine's memory" "$(lesson 09)" --dim 16384 --hidden 65536
expect "more than half of this machine's memory" "$(lesson 10)" --size 8192 --dim 4096 --heads 64
expect "more than half of this machine's memory" "$(lesson 05)" --dim 65536 --hidden 262144
expect "more than half of this machine's memory" "$(lesson 06)" --dim 16384 --hidden 65536
expect "more than half of this machine's memory" "$(lesson 08)" --dim 16384 --hidden 65536
expect "--size" "$(lesson 01)" --size 0x10
expect "--size" "$(lesson 01)" --size 020
expect "--size" "$(lesson 01)" --size " 16"
expect "--threads" "$(lesson 01)" --threads +2
expect "--dim" "$(lesson 09)" --dim " 8"
expect "--sizes" "$(lesson 02)" --sizes " 16,32"
expect "--out needs a value" "$(lesson 01)" --out ""
expect "longer than 255 bytes" "$(lesson 01)" --out "$work/$(printf 'd%.0s' {1..300})"
long_out=$work
for _ in $(seq 40); do long_out=$long_out/$(printf 'd%.0s' {1..100}); done
expect "the path is too long" "$(lesson 01)" --out "$long_out"
expect "--dtype needs a value" "$(lesson 01)" --dtype ""
expect "--sizes needs a value" "$(lesson 02)" --sizes ""
expect "--from-trace needs a value" "$(lesson 02)" --from-trace ""
expect "--steps" "$(lesson 01)" --steps 5abc
expect "--steps" "$(lesson 01)" --steps 1e3
# A dtype the device cannot multiply in (float16 on 1.13's CPU) is one line, never a backtrace;
# where LibTorch can (2.x), the lesson runs.
checked=$((checked + 1))
err=$("$(lesson 01)" --dtype float16 --steps 1 --warmup 0 --out "$work/out" 2>&1 >/dev/null </dev/null)
status=$?
if ! { [ "$status" -eq 0 ] || { [ "$status" -eq 2 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] &&
  printf '%s' "$err" | grep -qF -- "--dtype float16"; }; }; then
  echo "FAIL: 'lesson01 --dtype float16' gave exit $status: $err"
  failures=$((failures + 1))
fi
# A lesson's output that is a symlink is refused, and the link is left as it was.
mkdir -p "$work/out/01_matmul_add"
ln -s "$work/ok.json" "$work/out/01_matmul_add/64_float32_cpu.svg"
# (LibTorch 1.13's profiler logs a warning of its own to stderr first: the last line is the lesson's.)
checked=$((checked + 1))
err=$("$(lesson 01)" --steps 1 --out "$work/out" 2>&1 >/dev/null </dev/null)
status=$?
if [ "$status" -ne 2 ] || ! printf '%s\n' "$err" | tail -n 1 | grep -qF "64_float32_cpu.svg is a symlink"; then
  echo "FAIL: 'lesson01 --out' over a symlink gave exit $status: $err"
  failures=$((failures + 1))
fi
[ -L "$work/out/01_matmul_add/64_float32_cpu.svg" ] || { echo "FAIL: a lesson replaced a symlink"; failures=$((failures + 1)); }
[ ! -e "$work/out/01_matmul_add/64_float32_cpu.json" ] || { echo "FAIL: a lesson wrote part of its set"; failures=$((failures + 1)); }
cp "$work/ok.json" "$work/same.json"
expect "is the input trace itself" "$tool" "$work/same.json" --gpu --svg "$work/same.json"
expect "no event named 'nomatch'" "$tool" "$work/ok.json" --under nomatch
expect "at least two ranks" "$tool" --ranks "$work/ok.json"
expect "takes only --json and --svg" "$tool" --ranks "$work/ok.json" "$work/same.json" --gpu
expect "no ProfilerStep#N" "$tool" --ranks "$work/ok.json" "$work/same.json"
mkdir -p "$work/no_traces"
expect "a folder without .json or .json.gz traces" "$tool" --ranks "$work/no_traces" "$work/ok.json"
expect "unexpected argument" "$tool" "$work/ok.json" "$work/same.json"
expect "--svg needs a value" "$tool" "$work/ok.json" --svg ""
expect "--under needs a value" "$tool" "$work/ok.json" --under ""
# Output that cannot be written is a failure, not success.
checked=$((checked + 1))
if "$(lesson 02)" --from-trace "$root/tests/data/traces/rocm_minitoy_train.json" --out "$work/out" >/dev/full 2>/dev/null; then
  echo "FAIL: lesson02 --from-trace > /dev/full exited 0"
  failures=$((failures + 1))
fi
checked=$((checked + 1))
if "$(lesson 01)" --help >/dev/full 2>/dev/null; then echo "FAIL: lesson01 --help > /dev/full exited 0"; failures=$((failures + 1)); fi
checked=$((checked + 1))
if "$tool" "$work/ok.json" >/dev/full 2>/dev/null; then echo "FAIL: trace > /dev/full exited 0"; failures=$((failures + 1)); fi
checked=$((checked + 1))
if "$tool" "$work/ok.json" --gpu >/dev/full 2>/dev/null; then echo "FAIL: trace --gpu > /dev/full exited 0"; failures=$((failures + 1)); fi
# Control characters in names reach neither the terminal nor the SVG raw.
checked=$((checked + 1))
printf '%s' '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k\u001b[31mred", "pid": 0, "tid": 7, "ts": 0, "dur": 5}]}' >"$work/escape.json"
out=$("$tool" "$work/escape.json"; "$tool" "$work/escape.json" --gpu --svg "$work/escape.svg")
if printf '%s' "$out" | grep -q $'\x1b' || ! printf '%s' "$out" | grep -qF 'k\x1b[31mred' ||
  grep -q $'\x1b' "$work/escape.svg" || ! python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$work/escape.svg"; then
  echo "FAIL: a control character in a name reached the terminal or the SVG raw"
  failures=$((failures + 1))
fi
# A refused flag leaves nothing behind, not even the output folder.
checked=$((checked + 1))
"$(lesson 10)" --out "$work/refused" --heads 0 >/dev/null 2>&1
if [ -e "$work/refused" ]; then
  echo "FAIL: a lesson refused a flag but created its --out folder"
  failures=$((failures + 1))
fi
# Checking that --out is writable touches no file of the learner's (it once wrote and removed .write-check).
checked=$((checked + 1))
mkdir -p "$work/out/01_matmul_add"
echo mine >"$work/out/01_matmul_add/.write-check"
"$(lesson 01)" --size 8 --steps 1 --out "$work/out" >/dev/null 2>&1
if [ "$(cat "$work/out/01_matmul_add/.write-check" 2>/dev/null)" != mine ]; then
  echo "FAIL: a lesson replaced or removed a file named .write-check in its --out folder"
  failures=$((failures + 1))
fi

echo "bad_input: $((checked - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
