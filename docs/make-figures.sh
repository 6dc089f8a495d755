#!/usr/bin/env bash
# make-figures.sh LESSON_BINARY SLUG OUT_DIR figure:NAME [FLAGS...]
# Runs a lesson at a small size for the docs and leaves, under OUT_DIR: <slug>_output.txt (what it
# printed), <slug>.svg (its figure: the file NAME the run wrote, as the manifest names it, or its
# first .svg when NAME is empty; the prefix keeps an empty name an argument), <slug>_table.txt (its key_averages table) and machine.txt (the
# machine line).
set -euo pipefail
lesson=$1 slug=$2 out=$3 figure_name=${4#figure:}
shift 4
runs="$out/runs"
rm -rf "${runs:?}/$slug"
mkdir -p "$runs" "$out"
GLOG_minloglevel=2 "$lesson" "$@" --out "$runs" >"$out/$slug.output.tmp" 2>&1
mv "$out/$slug.output.tmp" "$out/${slug}_output.txt"
sed -n 2p "$out/${slug}_output.txt" >"$out/machine.txt"
if [ -n "$figure_name" ]; then
  figure="$runs/$slug/$figure_name"
  [ -f "$figure" ] || { echo "make-figures: $slug wrote no $figure_name (the manifest's figure)" >&2; exit 1; }
else
  figure=$(find "$runs/$slug" -name '*.svg' | sort | head -n1)
fi
table=$(find "$runs/$slug" -name '*.txt' | sort | head -n1)
[ -n "$figure" ] && [ -n "$table" ] || { echo "make-figures: $slug wrote no figure or table" >&2; exit 1; }
cp "$figure" "$out/$slug.svg"
cp "$table" "$out/${slug}_table.txt"
