#!/usr/bin/env bash
# pristine-stubs.sh SOURCE_DIR OUT_DIR
# Copies each exercise stub *as committed* into OUT_DIR, so that the suite's "every stub still
# fails" checks test the stubs the workbook ships, not a learner's edited files. The committed
# version comes from the upstream branch (origin/HEAD) when there is one, else from HEAD; outside
# a git checkout the working file is used. Files are only rewritten when their text changes.
set -eu
src=$1
out=$2
mkdir -p "$out"
rev=""
if git -C "$src" rev-parse --verify -q origin/HEAD >/dev/null 2>&1; then
  rev=origin/HEAD
elif git -C "$src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  rev=HEAD
fi
for stub in "$src"/exercises/*.cpp; do
  name=$(basename "$stub")
  tmp="$out/.$name.tmp.$$"
  if [ -n "$rev" ] && git -C "$src" show "$rev:exercises/$name" >"$tmp" 2>/dev/null; then
    :
  else
    cp "$stub" "$tmp"
  fi
  if cmp -s "$tmp" "$out/$name"; then rm -f "$tmp"; else mv "$tmp" "$out/$name"; fi
done
