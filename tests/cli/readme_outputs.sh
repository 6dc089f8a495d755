#!/usr/bin/env bash
# readme_outputs.sh ROOT TRACE_TOOL: every README block marked `<!-- output of: trace ARGS -->` is
# what `workbook trace ARGS` prints now (run from ROOT), so a sentence shown as output cannot drift.
set -u
root=$1 tool=$2
cd "$root" || exit 1
failures=0 checked=0
while IFS= read -r marker; do
  args=${marker#<!-- output of: trace }
  args=${args% -->}
  # The fenced block right after the marker.
  shown=$(awk -v m="$marker" 'found == 2 && /^```$/ { exit } found == 2 { print } found == 1 && /^```$/ { found = 2 } $0 == m { found = 1 }' README.md)
  # shellcheck disable=SC2086  # the marker's arguments are split as a shell would
  now=$("$tool" $args 2>&1)
  checked=$((checked + 1))
  if [ "$shown" != "$now" ]; then
    echo "FAIL: README's output of 'trace $args' differs from what it prints now:"
    diff <(printf '%s\n' "$shown") <(printf '%s\n' "$now") | head -20
    failures=$((failures + 1))
  fi
done < <(grep '^<!-- output of: trace .* -->$' README.md)
[ "$checked" -gt 0 ] || { echo "FAIL: no marked output block in README.md"; exit 1; }
[ "$failures" -eq 0 ] || exit 1
echo "readme_outputs: $checked README output blocks equal the program's output"
