#!/usr/bin/env bash
# make-figures.sh LESSON_BINARY SLUG OUT_DIR figure:NAME probe:BLAS_PROBE [FLAGS...]
# Runs a lesson at a small size for the docs and leaves, under OUT_DIR: <slug>_output.txt (what it
# printed), <slug>.svg (its figure: the file NAME the run wrote, as the manifest names it, or its
# first .svg when NAME is empty; the prefix keeps an empty name an argument), <slug>_table.txt (its
# key_averages table), <slug>_conditions.txt (when and under what load it was measured) and
# machine.txt (the machine line).
#
# The docs' numbers should be this machine's quiet ones. The docs build runs the lessons one at a
# time after everything is built (docs/CMakeLists.txt); this script counts the CPU time the whole
# machine spent during the run (/proc/stat) less the lesson's own, and the page says "UNDER LOAD"
# when other work took more than 10 % of the cores' time (the load average before and after is
# printed beside it). A run that prints a matmul ceiling (lesson 02) is compared with
# BLAS_PROBE's (the figure `./workbook doctor` prints as "matmul 2048") and run again, up to twice,
# while the two differ by more than 20 %; the page says when they still do. A run whose lesson
# says "Careful:" (it found its own run disturbed), or whose sweep's GFLOP/s dip more than 20 %
# below a smaller size's, is run again too, up to twice. The lesson runs from the current folder
# (the project root) with a relative --out, so the paths it prints are relative to the project.
set -euo pipefail
lesson=$1 slug=$2 out=$3 figure_name=${4#figure:} probe=${5#probe:}
shift 5
cores=$(nproc)
runs_abs="$out/runs"
runs=$(realpath -m --relative-to="$PWD" "$runs_abs")
mkdir -p "$runs_abs" "$out"

load() { cut -d' ' -f1 /proc/loadavg; }
# All CPUs' jiffies: "busy total" (busy = everything but idle and iowait).
cpu_jiffies() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t }' /proc/stat; }
# Sets `seconds` to the CPU seconds used so far by this shell's finished children: bash's `times`
# (its second line), run in this shell itself (in a $(...) subshell it would count the subshell's).
children_seconds() {
  times >"$out/$slug.times"
  seconds=$(sed -n 2p "$out/$slug.times" |
    awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); s += p[1] * 60 + p[2] } print s }')
  rm -f "$out/$slug.times"
}
ceiling_of() { sed -n 's/^matmul ceiling here: \([0-9.]*\) GFLOP\/s.*/\1/p' "$1" | head -n1; }
# Lesson 02's sweep table (header "n  step us ... GFLOP/s ..."): true when a row's GFLOP/s (the 7th
# column) is below 0.8 x the best of the rows above it.
sweep_dips() {
  awk '/^ +n +step us/ { table = 1; next } table && NF < 7 { table = 0 }
       table && $1 ~ /^[0-9]+$/ { if (best > 0 && $7 < 0.8 * best) dip = 1; if ($7 > best) best = $7 }
       END { exit !dip }' "$1"
}
differs() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(b > 0 && (a / b > 1.2 || a / b < 1 / 1.2)) }'; }

reference=""
attempt=0 note=""
while :; do
  attempt=$((attempt + 1))
  rm -rf "${runs_abs:?}/$slug"
  before=$(load)
  read -r busy0 total0 < <(cpu_jiffies)
  children_seconds
  own0=$seconds
  GLOG_minloglevel=2 "$lesson" "$@" --out "$runs" >"$out/$slug.output.tmp" 2>&1
  read -r busy1 total1 < <(cpu_jiffies)
  children_seconds
  own1=$seconds
  after=$(load)
  # The share of the machine's CPU time that went to other work while the lesson ran.
  others=$(awk -v b="$((busy1 - busy0))" -v t="$((total1 - total0))" -v own="$own0 $own1" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { split(own, o, " "); x = t > 0 ? (b - (o[2] - o[1]) * hz) / t : 0; printf "%.0f", (x < 0 ? 0 : x) * 100 }')
  ceiling=$(ceiling_of "$out/$slug.output.tmp")
  # A lesson that found its own run disturbed says "Careful:" (lesson 02's disturbed sizes), and a
  # sweep whose GFLOP/s fall more than 20 % below a smaller size's dipped: run again.
  if { grep -q "^  | Careful: " "$out/$slug.output.tmp" || sweep_dips "$out/$slug.output.tmp"; } &&
    [ "$attempt" -lt 3 ]; then continue; fi
  [ -z "$ceiling" ] && break
  [ -n "$reference" ] || reference=$("$probe" 2048 | awk '{ print $2 }' || true)
  differs "$ceiling" "$reference" || break
  if [ "$attempt" -ge 3 ]; then
    note="Its matmul ceiling (${ceiling} GFLOP/s) still differed from \`./workbook doctor\`'s (${reference} GFLOP/s) by more than 20 % after 3 runs: its rates are not this machine's quiet ones."
    break
  fi
done
mv "$out/$slug.output.tmp" "$out/${slug}_output.txt"
sed -n 2p "$out/${slug}_output.txt" >"$out/machine.txt"

{
  printf 'Measured %s (run %d): other work took %s %% of the %d cores'"'"' time while the lesson ran (load average %s before, %s after)' \
    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$attempt" "$others" "$cores" "$before" "$after"
  if [ "$others" -gt 10 ]; then
    printf ': UNDER LOAD, so its times are not this machine'"'"'s quiet figures.\n'
  else
    printf ': a quiet machine.\n'
  fi
  [ -z "$ceiling" ] || printf 'Matmul ceiling %s GFLOP/s; `./workbook doctor` measures %s.\n' "$ceiling" "$reference"
  [ -z "$note" ] || printf '%s\n' "$note"
  if sweep_dips "$out/${slug}_output.txt"; then
    printf 'Its GFLOP/s still fell more than 20 %% below a smaller size'"'"'s after %d runs: that row is not this machine'"'"'s quiet rate.\n' "$attempt"
  fi
} >"$out/${slug}_conditions.txt"

if [ -n "$figure_name" ]; then
  figure="$runs_abs/$slug/$figure_name"
  [ -f "$figure" ] || { echo "make-figures: $slug wrote no $figure_name (the manifest's figure)" >&2; exit 1; }
else
  figure=$(find "$runs_abs/$slug" -name '*.svg' | sort | head -n1)
fi
table=$(find "$runs_abs/$slug" -name '*.txt' | sort | head -n1)
[ -n "$figure" ] && [ -n "$table" ] || { echo "make-figures: $slug wrote no figure or table" >&2; exit 1; }
cp "$figure" "$out/$slug.svg"
cp "$table" "$out/${slug}_table.txt"
