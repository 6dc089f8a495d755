#!/usr/bin/env bash
# trace_reads_gzip.sh TRACE_TOOL WORK: `workbook trace` reads a gzip-compressed trace (compressed by
# gzip itself, not by this toolkit) exactly as it reads the JSON: the table, --json, --gpu --json
# and --kernels --json give the same bytes for every stored trace; `--ranks` reads a folder of
# .json.gz traces as one of .json; `--out X.json.gz` writes gzip that reads back to the same rows.
set -u
tool=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
traces="$here/../data/traces"
rm -rf "$work" && mkdir -p "$work/plain" "$work/packed"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
same() {  # same WHAT FLAGS...: the output for the .json and the .json.gz copy
  local what=$1 a b
  shift
  # (an error names the file: the names are taken out)
  a=$("$tool" "$plain" "$@" 2>&1 | sed "s|$plain|FILE|g")
  b=$("$tool" "$packed" "$@" 2>&1 | sed "s|$packed|FILE|g")
  [ "$a" = "$b" ] || fail "$what: trace $* differs between $(basename "$plain") and its gzip copy"
}
count=0
for plain in "$traces"/*.json; do
  packed="$work/packed/$(basename "$plain").gz"
  gzip -c -n "$plain" >"$packed"
  same table
  same json --json --limit 0
  same gpu --gpu --json
  same kernels --kernels --json --limit 0
  count=$((count + 1))
done
# Two traces as the ranks of a job, once as .json, once as .json.gz (names differ only by .gz).
cp "$traces/rocm_minitoy_train.json" "$work/plain/rank0.json"
cp "$traces/rocm_minitoy_train.json" "$work/plain/rank1.json"
gzip -c -n "$work/plain/rank0.json" >"$work/packed/rank0.json.gz"
gzip -c -n "$work/plain/rank1.json" >"$work/packed/rank1.json.gz"
a=$("$tool" --ranks "$work/plain" --json 2>&1)
b=$(mkdir -p "$work/ranks_packed" && mv "$work/packed/rank"*.json.gz "$work/ranks_packed/" &&
  "$tool" --ranks "$work/ranks_packed" --json 2>&1 | sed 's/\.json\.gz/.json/g')
[ "$a" = "$b" ] || fail "--ranks: a folder of .json.gz traces reads differently from the same .json traces"
# --out: gzip data that reads back to the same rows (our export of the events read).
plain="$traces/alexnet_cuda.json"
"$tool" "$plain" --out "$work/out.json.gz" >/dev/null || fail "--out out.json.gz failed"
[ "$(head -c 2 "$work/out.json.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ] || fail "--out out.json.gz is not gzip"
gzip -t "$work/out.json.gz" 2>/dev/null || fail "gzip -t rejects what --out wrote"
[ "$("$tool" "$plain" --json --limit 0)" = "$("$tool" "$work/out.json.gz" --json --limit 0)" ] ||
  fail "--out out.json.gz reads back to different rows"
"$tool" "$plain" --under 'aten::conv2d' --out "$work/under.json" >/dev/null || fail "--under with --out failed"
[ "$("$tool" "$plain" --under 'aten::conv2d' --json --limit 0)" = "$("$tool" "$work/under.json" --json --limit 0)" ] ||
  fail "--under's subtree written with --out reads back to different rows"
[ "$failures" -eq 0 ] || exit 1
echo "trace_reads_gzip: $count stored traces read the same from gzip; --ranks and --out too"
