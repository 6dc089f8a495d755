#!/usr/bin/env bash
# state_is_data.sh ROOT: the runner's state is data. Shell syntax in the progress file is a
# one-line warning and a fresh state (nothing runs); a state folder that is a file, or a progress
# file that is a folder, is one line and exit 2. A temporary WORKBOOK_STATE_DIR, never the learner's.
set -u
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mkdir -p "$tmp/state"
printf 'ROOT[$(touch %s/pwned)]' "$tmp" >"$tmp/state/progress.json"
err=$(cd "$tmp" && WORKBOOK_STATE_DIR="$tmp/state" "$root/workbook" hint 1 2>&1 >/dev/null)
status=$?
[ "$status" -eq 0 ] || fail "hint with a corrupt progress file exited $status"
[ "$(grep -c . <<<"$err")" -eq 1 ] && grep -q "warning: .*fresh state" <<<"$err" || fail "want one warning line, got: $err"
[ ! -e "$tmp/pwned" ] || fail "the progress file's text was executed"
grep -q '"01": 1' "$tmp/state/progress.json" || fail "the fresh state was not saved with the hint shown"

# expect_usage_error WHAT COMMAND...: exit 2 and one line naming WHAT.
expect_usage_error() {
  local want=$1 err status
  shift
  err=$("$@" 2>&1 >/dev/null)
  status=$?
  [ "$status" -eq 2 ] && [ "$(grep -c . <<<"$err")" -eq 1 ] && grep -qF -- "$want" <<<"$err" ||
    fail "'$*' gave exit $status: $err"
}
printf 'x' >"$tmp/state-file"
expect_usage_error "is not a directory" env WORKBOOK_STATE_DIR="$tmp/state-file" "$root/workbook" list
mkdir -p "$tmp/state-dir/progress.json"
expect_usage_error "is not a regular file" env WORKBOOK_STATE_DIR="$tmp/state-dir" "$root/workbook" hint 1
# A lock that cannot be taken is an error, not a silent run without it; a planted symlink is not followed.
mkdir -p "$tmp/lock-dir/progress.lock"
expect_usage_error "cannot lock" env WORKBOOK_STATE_DIR="$tmp/lock-dir" "$root/workbook" hint 1
mkdir -p "$tmp/lock-link"
ln -s "$tmp/planted" "$tmp/lock-link/progress.lock"
expect_usage_error "cannot lock" env WORKBOOK_STATE_DIR="$tmp/lock-link" "$root/workbook" hint 1
[ ! -e "$tmp/planted" ] || fail "the lock followed a symlink and created its target"

# reset keeps the learner's version before writing the stub back (in a scratch git copy of the
# exercise, never the learner's own files).
scratch="$tmp/scratch"
mkdir -p "$scratch/lessons" "$scratch/exercises"
cp "$root/lessons/manifest.json" "$scratch/lessons/"
cp "$root"/exercises/01_* "$scratch/exercises/"
git -C "$scratch" init -q && git -C "$scratch" add -A &&
  git -C "$scratch" -c user.email=t@t -c user.name=t commit -qm stubs || fail "scratch repository"
echo "// the learner's work" >>"$scratch/exercises/01_matmul_add.cpp"
out=$(WORKBOOK_ROOT="$scratch" WORKBOOK_BUILD_DIR="$scratch/build" WORKBOOK_STATE_DIR="$tmp/reset-state" \
  "${WORKBOOK_BUILD_DIR:-$root/build}/tools/workbook_runner" reset 1 2>&1)
git -C "$scratch" diff --quiet || fail "reset did not write the stub back: $out"
grep -q "kept in" <<<"$out" || fail "reset did not say where the learner's version went: $out"
grep -qs "the learner's work" "$tmp"/reset-state/backup/01_matmul_add.*.cpp || fail "no backup of the learner's version"
# A second reset in the same second keeps its own backup beside the first.
for version in A B; do
  echo "// version $version" >>"$scratch/exercises/01_matmul_add.cpp"
  WORKBOOK_ROOT="$scratch" WORKBOOK_BUILD_DIR="$scratch/build" WORKBOOK_STATE_DIR="$tmp/twice-state" \
    "${WORKBOOK_BUILD_DIR:-$root/build}/tools/workbook_runner" reset 1 >/dev/null 2>&1
done
[ "$(grep -ls "version [AB]" "$tmp"/twice-state/backup/01_matmul_add.*.cpp | wc -l)" -eq 2 ] ||
  fail "two resets in a row kept $(ls "$tmp"/twice-state/backup | wc -l) backup(s), want 2"
# The build log in the state folder is written only as a regular file: a planted symlink is not
# followed, a pipe does not block the runner (and the build lock with it).
trace="$root/tests/data/traces/rocm_minitoy_train.json"
mkdir -p "$tmp/log-link" "$tmp/log-fifo"
echo "IMPORTANT" >"$tmp/victim.txt"
ln -s "$tmp/victim.txt" "$tmp/log-link/build.log"
expect_usage_error "build.log: it is a symlink" env WORKBOOK_STATE_DIR="$tmp/log-link" "$root/workbook" trace "$trace"
[ "$(cat "$tmp/victim.txt")" = "IMPORTANT" ] || fail "the build log followed a symlink and overwrote its target"
mkfifo "$tmp/log-fifo/build.log"
expect_usage_error "build.log" env WORKBOOK_STATE_DIR="$tmp/log-fifo" timeout 60 "$root/workbook" trace "$trace"
# A state folder that cannot exist (under a file) does not stop a command that needs no progress.
WORKBOOK_STATE_DIR="$tmp/state-file/state" "$root/workbook" trace "$trace" >/dev/null 2>&1 ||
  fail "trace with an impossible state folder failed"
# What the learner typed is quoted escaped: a newline in an argument stays on the one line.
expect_usage_error "is not a lesson number" env WORKBOOK_STATE_DIR="$tmp/state" "$root/workbook" hint $'1\nsecond line'
# A progress that cannot be saved stops hint before it prints the hint (which would show again).
mkdir -p "$tmp/unsaved/progress.lock"
out=$(WORKBOOK_STATE_DIR="$tmp/unsaved" "$root/workbook" hint 1 2>/dev/null)
[ -z "$out" ] || fail "hint printed a hint it could not record: $out"
# A build folder that is not a folder: one line, exit 2.
expect_usage_error "is not a folder" env WORKBOOK_BUILD_DIR=/dev/null "$root/workbook" list
# A state folder named by an empty variable is an error, not the current folder.
expect_usage_error "WORKBOOK_STATE_DIR is set but empty" env WORKBOOK_STATE_DIR= "$root/workbook" list
# list: every status starts where the header's "exercise" does, however long a title is.
WORKBOOK_STATE_DIR="$tmp/list-state" "$root/workbook" list | python3 -c '
import sys
lines = sys.stdin.read().splitlines()
column = lines[0].index("exercise")
bad = [l for l in lines[1:] if not (l[column:].startswith("pending") or l[column:].startswith("done")) or l[column - 1] != " "]
sys.exit(1 if bad or len(lines) < 2 else 0)' || fail "list: a status is out of its column"
echo "state_is_data: $((18 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
