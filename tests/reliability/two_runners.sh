#!/usr/bin/env bash
# two_runners.sh ROOT: two `./workbook check 1` at once. Both must run to their verdict (the
# shipped stub fails its checks: exit 1) without corrupting the build tree or the progress
# record; the build lock serialises their builds.
set -u
root=$1
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
"$root/workbook" check 1 >"$log/a" 2>&1 &
a=$!
"$root/workbook" check 1 >"$log/b" 2>&1 &
b=$!
wait "$a"; sa=$?
wait "$b"; sb=$?
for r in a b; do
  grep -q "checking exercise 01" "$log/$r" || { echo "two_runners: runner $r did not check:"; cat "$log/$r"; exit 1; }
done
[ "$sa" -le 1 ] && [ "$sb" -le 1 ] || { echo "two_runners: exit statuses $sa and $sb"; cat "$log/a" "$log/b"; exit 1; }
[ "$sa" -eq "$sb" ] || { echo "two_runners: the two runners disagree ($sa vs $sb)"; exit 1; }
if [ -f "$root/.workbook/progress.json" ]; then
  python3 -c 'import json, re, sys
p = json.load(open(sys.argv[1]))
assert all(re.fullmatch(r"[0-9][0-9]", n) for n in p["done"])' "$root/.workbook/progress.json" ||
    { echo "two_runners: the progress record is corrupt"; cat "$root/.workbook/progress.json"; exit 1; }
fi
"$root/workbook" list >/dev/null || { echo "two_runners: list failed afterwards"; exit 1; }
echo "two_runners: both finished with exit $sa; build tree and progress record intact"
