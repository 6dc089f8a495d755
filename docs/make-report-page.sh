#!/usr/bin/env bash
# make-report-page.sh REPORT_BINARY TRACE OUT_DIR
# The docs' page about `./workbook report`: writes OUT_DIR/report_example.html (the report of
# TRACE, a stored trace of a GPU training run, so every panel has data), OUT_DIR/report.png (that
# page as headless Chromium renders it from disk) and OUT_DIR/pages/report.md, which shows the
# screenshot and links the page itself. Without Chromium the page says so instead of showing a
# picture (scripts/setup-deps.sh installs it).
set -euo pipefail
report=$1 trace=$2 out=$3
mkdir -p "$out/pages"
"$report" "$trace" -o "$out/report_example.html" >/dev/null
browser=$(command -v chromium || command -v chromium-browser || true)
picture="(No screenshot here: Chromium was not installed when this site was built.)"
if [ -n "$browser" ]; then
  profile=$(mktemp -d)
  trap 'rm -rf "$profile"' EXIT
  rm -f "$out/report.png"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --virtual-time-budget=5000 \
    --window-size=1280,1400 --screenshot="$out/report.png" "file://$out/report_example.html" >/dev/null 2>&1 || true
  [ -s "$out/report.png" ] || { echo "make-report-page: Chromium took no screenshot of $out/report_example.html" >&2; exit 1; }
  picture='\image html report.png "The top of the report: the overview, each step split into CPU ops, GPU kernels, copies and idle."'
fi
name=$(basename "$trace")
tmp="$out/pages/report.md.tmp"
cat >"$tmp" <<PAGE
# The report: a trace as one HTML page {#report_page}

\`./workbook report FILE... -o OUT.html\` writes one self-contained page (no network; it opens from
disk) in place of TensorBoard's retired profiler plugin: each step's time split into CPU ops, GPU
kernels, copies and idle; the operator table (the rows of \`trace --json\`, sortable, filtered by
name, grouped by input shape); the kernels with their names read; GPU busy per stream and step; the
memory timeline; a flame graph to click into; the advisor's findings. \`./workbook run N -- --report\`
writes one beside each trace a lesson writes.

Below: the report of \`tests/data/traces/$name\` (a short training run of a small model on an AMD GPU,
recorded by others with Kineto and kept with the tests), built with this site.
[Open the page itself](report_example.html).

$picture

The timeline itself stays with Perfetto (https://ui.perfetto.dev): open the trace file there.
PAGE
mv "$tmp" "$out/pages/report.md"
