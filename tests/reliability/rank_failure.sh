#!/usr/bin/env bash
# rank_failure.sh LESSON12 OUT: a rank of lesson 12's job that dies (--fail-rank 1, as a crash:
# no goodbye) stops the whole job within the collective timeout, never a hang: exit 1, the
# launcher's one line naming the rank, the surviving rank's own line, and no temporary files.
set -u
lesson=$1 out=$2
rm -rf "$out"
timeout=10
start=$SECONDS
"$lesson" --size 16 --dim 16 --hidden 32 --steps 2 --fail-rank 1 --fail-step 1 --timeout $timeout --out "$out" \
  >"$out.stdout" 2>"$out.stderr"
status=$? elapsed=$((SECONDS - start))
cat "$out.stderr"
fail() { echo "rank_failure: $*" >&2; exit 1; }
[ "$status" -eq 1 ] || fail "exit status $status, want 1"
[ "$elapsed" -le $((timeout + 10)) ] || fail "took $elapsed s, more than the ${timeout} s timeout and 10 s"
grep -q "^lesson12: the job stopped: rank 1 exited with status 3" "$out.stderr" || fail "no launcher line naming rank 1"
grep -q "^lesson12 (rank 0): " "$out.stderr" || fail "rank 0 did not say why it stopped"
[ "$(grep -c '^lesson12: ' "$out.stderr")" -eq 1 ] || fail "the launcher printed more than one line"
if find "$out" -name '*.tmp.*' 2>/dev/null | grep -q .; then fail "temporary files left behind"; fi
echo "rank_failure: the job stopped in $elapsed s with one line"
