#!/usr/bin/env bash
# run_or_explain.sh LESSON_BINARY SLUG OUT_DIR [FLAGS...]: a lesson that needs a GPU. Where it
# can run, it must run and write its timings; where it cannot (no GPU, or no CUDA Toolkit in the
# build), it must say so in exactly one line on stderr, exit 1, and write nothing.
set -u
lesson=$1 slug=$2 out=$3
shift 3
rm -rf "${out:?}/${slug:?}"
stderr=$(mktemp)
trap 'rm -f "$stderr"' EXIT
"$lesson" "$@" --out "$out" >/dev/null 2>"$stderr"
status=$?
if [ "$status" -eq 0 ]; then
  ls "$out/$slug"/*_timings.csv >/dev/null 2>&1 || { echo "run_or_explain: no timings written" >&2; exit 1; }
  echo "run_or_explain: $slug ran on a GPU and wrote its timings"
  exit 0
fi
lines=$(wc -l <"$stderr")
if [ "$status" -ne 1 ] || [ "$lines" -ne 1 ] || ! grep -Eq "needs a CUDA GPU|no CUDA Toolkit" "$stderr"; then
  echo "run_or_explain: expected one line saying a CUDA GPU is needed and exit 1; got exit $status and:" >&2
  cat "$stderr" >&2
  exit 1
fi
if find "$out/$slug" -type f 2>/dev/null | grep -q .; then
  echo "run_or_explain: files written although the lesson could not run" >&2
  exit 1
fi
echo "run_or_explain: no GPU here, and $slug said so in one line: $(cat "$stderr")"
