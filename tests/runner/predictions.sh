#!/usr/bin/env bash
# predictions.sh ROOT LESSON01: `./workbook predict` stores the learner's guesses (checked, never
# the answers: it does not know them), refuses one that is not of its question's kind, and lesson
# 01 writes this run's answers where the runner asks (WORKBOOK_ANSWERS_FILE), each from a finding.
# A temporary WORKBOOK_STATE_DIR, never the learner's.
set -u
root=$1 lesson=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
wb() { (cd "$tmp" && WORKBOOK_STATE_DIR="$tmp/state" "$root/workbook" "$@"); }

out=$(wb predict 1 --answers yes,2 2>&1) || fail "predict 1 --answers yes,2 failed: $out"
grep -q "2 of 2 predictions saved" <<<"$out" || fail "predict did not say what it saved: $out"
grep -qi "this run says\|right:" <<<"$out" && fail "predict printed a verdict before any run: $out"
python3 - "$tmp/state/progress.json" <<'PY' || fail "the predictions are not in the progress file"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["predictions"]["01"] == {"first_step_cold": "yes", "ops_in_region": "2"}, p
PY
# expect_usage_error WHAT ARGS...: exit 2 and one line naming WHAT; the saved predictions stay.
expect_usage_error() {
  local want=$1 err status
  shift
  err=$(wb "$@" 2>&1 >/dev/null)
  status=$?
  if [ "$status" -ne 2 ] || [ "$(grep -c . <<<"$err")" -ne 1 ] || ! grep -qF -- "$want" <<<"$err"; then
    fail "'$*' gave exit $status: $err"
  fi
}
expect_usage_error "must be yes or no" predict 1 --answers maybe,2
expect_usage_error "must be a number" predict 1 --answers yes,two
expect_usage_error "takes 2 answers" predict 1 --answers yes
grep -q '"ops_in_region": "2"' "$tmp/state/progress.json" || fail "a refused --answers changed the saved predictions"
# Interactive: a wrong kind is asked again, Enter skips.
out=$(printf 'maybe\ny\n\n' | wb predict 1 2>&1) || fail "interactive predict failed: $out"
grep -q "that is not yes or no" <<<"$out" || fail "a wrong answer was not asked again: $out"
grep -q "1 of 2 predictions saved" <<<"$out" || fail "Enter did not skip the second question: $out"
# The lesson's side: its answers, computed from this run's profile.
WORKBOOK_ANSWERS_FILE="$tmp/answers.json" GLOG_minloglevel=2 "$lesson" --size 16 --out "$tmp/traces" >/dev/null ||
  fail "lesson 01 failed"
python3 - "$tmp/answers.json" <<'PY' || fail "lesson 01's answers are not what its profile says"
import json, sys
a = json.load(open(sys.argv[1]))
assert a["first_step_cold"]["value"] in ("yes", "no") and a["first_step_cold"]["why"], a
assert a["ops_in_region"]["value"] == "2", a
PY
[ "$failures" -eq 0 ] || exit 1
echo "predictions: saved, refused when malformed, asked again interactively; lesson 01 answers from its profile"
