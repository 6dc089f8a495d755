#!/usr/bin/env bash
# make-figures.sh LESSON_BINARY SLUG OUT_DIR [FLAGS...]
# Runs a lesson at a small size for the docs and leaves, under OUT_DIR: <slug>_output.txt (what it
# printed), <slug>.svg (its figure: the sweep plot, the flame graph, the memory timeline or the timeline), <slug>_table.txt (its
# key_averages table) and machine.txt (the machine line).
set -euo pipefail
lesson=$1 slug=$2 out=$3
shift 3
runs="$out/runs"
rm -rf "${runs:?}/$slug"
mkdir -p "$runs" "$out"
GLOG_minloglevel=2 "$lesson" "$@" --out "$runs" >"$out/$slug.output.tmp" 2>&1
mv "$out/$slug.output.tmp" "$out/${slug}_output.txt"
sed -n 2p "$out/${slug}_output.txt" >"$out/machine.txt"
figure="$runs/$slug/sweep.svg"
[ -f "$figure" ] || figure="$runs/$slug/flame.svg"
[ -f "$figure" ] || figure="$runs/$slug/memory.svg"
[ -f "$figure" ] || figure=$(find "$runs/$slug" -name '*.svg' | sort | head -n1)
table=$(find "$runs/$slug" -name '*.txt' | sort | head -n1)
[ -n "$figure" ] && [ -n "$table" ] || { echo "make-figures: $slug wrote no figure or table" >&2; exit 1; }
cp "$figure" "$out/$slug.svg"
cp "$table" "$out/${slug}_table.txt"
