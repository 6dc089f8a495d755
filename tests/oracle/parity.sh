#!/usr/bin/env bash
# parity.sh TRACE_TOOL WORK_DIR LESSON01 LESSON05: Python's key_averages vs `workbook trace --json`
# on every trace in tests/data/traces (.json and .json.gz) and on the traces lessons 01 and 05 write now (exit 77
# without python3-torch).
set -u
tool=$1 work=$2 lesson01=$3 lesson05=$4
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3
[ -x "$python" ] || python=python3
rm -rf "$work" && mkdir -p "$work"
"$lesson01" --size 16 --out "$work" >/dev/null || { echo "parity: lesson 01 failed"; exit 1; }
"$lesson05" --size 2 --dim 16 --hidden 32 --out "$work" >/dev/null || { echo "parity: lesson 05 failed"; exit 1; }
mapfile -t traces < <(ls "$here"/../data/traces/*.json "$here"/../data/traces/*.json.gz; find "$work" -name '*.json' | sort)
exec "$python" "$here/key_averages_parity.py" --trace-tool "$tool" "${traces[@]}"
