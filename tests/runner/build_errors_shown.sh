#!/usr/bin/env bash
# build_errors_shown.sh ROOT BUILD: a compile error stops the command with exit 1 and shows the
# compiler's first error (the learner's file and line first) for `check`, `watch --once` and
# `run`; the binary built earlier never runs in its place, and `check` does not mark it done.
#
# The real compiler compiles a broken copy of the file (a missing ';', a call to a function that
# does not exist) with the build's own command line from compile_commands.json: a stand-in
# `cmake` first on PATH does that for the one target under test and hands every other call to
# the real cmake. The progress goes to a temporary WORKBOOK_STATE_DIR, never the learner's.
set -u
root=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/state" "$tmp/exercises" "$tmp/lessons"
real_cmake=$(command -v cmake)

cat >"$tmp/bin/cmake" <<EOS
#!/usr/bin/env bash
# Stand-in: "cmake --build DIR -j N --target \$WORKBOOK_TEST_TARGET" compiles the broken copy.
case " \$* " in
  *" --target \$WORKBOOK_TEST_TARGET "*)
    exec python3 - "$build/compile_commands.json" <<'PY'
import json, os, shlex, subprocess, sys
source, broken = os.environ["WORKBOOK_TEST_SOURCE"], os.environ["WORKBOOK_TEST_BROKEN"]
for entry in json.load(open(sys.argv[1])):
    if entry["file"] == source:
        words = shlex.split(entry["command"])
        out = [w for i, w in enumerate(words) if w != "-o" and (i == 0 or words[i - 1] != "-o")]
        out = [broken if w == source else w for w in out] + ["-fsyntax-only"]
        sys.exit(subprocess.call(out, cwd=entry["directory"]))
sys.exit("stand-in cmake: no compile command for " + source)
PY
    ;;
esac
exec "$real_cmake" "\$@"
EOS
chmod +x "$tmp/bin/cmake"

failures=0
# expect_build_error NAME TARGET SOURCE BROKEN_COPY LINE FORBIDDEN -- RUNNER ARGS...
expect_build_error() {
  local name=$1 target=$2 source=$3 broken=$4 line=$5 forbidden=$6
  shift 7
  local out status
  out=$(PATH="$tmp/bin:$PATH" WORKBOOK_TEST_TARGET=$target WORKBOOK_TEST_SOURCE=$source WORKBOOK_TEST_BROKEN=$broken \
    WORKBOOK_STATE_DIR="$tmp/state" timeout 120 "$@" 2>&1 </dev/null)
  status=$?
  if [ "$status" -ne 1 ]; then
    echo "FAIL $name: exit $status, want 1"; failures=$((failures + 1))
  elif ! grep -q "$(basename "$broken"):$line:[0-9]*: error:" <<<"$out"; then
    echo "FAIL $name: the compiler's error at line $line is not shown"; failures=$((failures + 1))
  elif grep -q -- "$forbidden" <<<"$out"; then
    echo "FAIL $name: the older binary ran ('$forbidden' in the output)"; failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
  [ "$status" -eq 1 ] && [ "$failures" -eq 0 ] || printf '%s\n' "$out" | head -n 30
}

# Exercise 05: a missing ';' on a line added at the end of the copy, and a call to a function that
# does not exist.
exercise=$root/exercises/05_mlp.cpp
lines=$(wc -l <"$exercise")
{ cat "$exercise"; echo "int broken_by_the_test = 1"; } >"$tmp/exercises/05_mlp.cpp"
expect_build_error "check: a missing ';'" check_05 "$exercise" "$tmp/exercises/05_mlp.cpp" $((lines + 1)) \
  "not implemented yet" -- "$root/workbook" check 5
expect_build_error "watch --once: a missing ';'" check_05 "$exercise" "$tmp/exercises/05_mlp.cpp" $((lines + 1)) \
  "not implemented yet" -- "$root/workbook" watch 5 --once
{ cat "$exercise"; echo "int broken_by_the_test() { return no_such_function_anywhere(42); }"; } >"$tmp/exercises/05_undefined.cpp"
expect_build_error "check: an undefined function" check_05 "$exercise" "$tmp/exercises/05_undefined.cpp" $((lines + 1)) \
  "not implemented yet" -- "$root/workbook" check 5
checks=5  # four builds and "not marked done"
grep -q '"05"' "$tmp/state/progress.json" 2>/dev/null && { echo "FAIL: exercise 05 was marked done"; failures=$((failures + 1)); }
# Lesson 01: a missing ';' on a line added at the end.
lesson=$root/lessons/01_matmul_add.cpp
lines=$(wc -l <"$lesson")
{ cat "$lesson"; echo "int broken_by_the_test = 1"; } >"$tmp/lessons/01_matmul_add.cpp"
expect_build_error "run: a missing ';'" lesson01 "$lesson" "$tmp/lessons/01_matmul_add.cpp" $((lines + 1)) \
  "matmul_add at n=" -- "$root/workbook" run 1 -- --size 16

echo "build_errors_shown: $((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
