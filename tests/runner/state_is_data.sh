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
echo "state_is_data: $((4 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
