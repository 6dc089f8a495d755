#!/usr/bin/env bash
# interrupt.sh LESSON02 OUT: Ctrl-C (SIGINT) and SIGTERM in the middle of a sweep that writes a
# trace per size leave no partial file under the out folder, every file left is complete, and
# the next run works.
set -u
lesson=$1 out=$2
fail() { echo "interrupt: $*" >&2; exit 1; }
for signal in INT TERM; do
  rm -rf "$out"
  # Many small sizes with a trace each: the signal lands while files are being written. It is
  # sent once a few sizes are done (how long that takes differs a lot between machines).
  GLOG_minloglevel=2 "$lesson" --sizes "$(seq -s, 16 1016)" --traces --steps 20 --out "$out" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1200); do
    [ "$(find "$out" -type f 2>/dev/null | wc -l)" -ge 12 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  kill -s "$signal" "$pid" 2>/dev/null
  wait "$pid"
  status=$?
  [ "$status" -ne 0 ] || fail "the lesson finished before SIG$signal; make the sweep longer"
  partial=$(find "$out" -name '*.tmp.*' | head -n1)
  [ -z "$partial" ] || fail "SIG$signal left a partial file: $partial"
  for trace in $(find "$out" -name '*.json'); do
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$trace" || fail "incomplete trace after SIG$signal: $trace"
  done
  echo "interrupt: SIG$signal (exit $status) left $(find "$out" -type f | wc -l) complete files and no partial one"
done
GLOG_minloglevel=2 "$lesson" --sizes 16,32 --out "$out" >/dev/null || fail "the next run failed"
echo "interrupt: the next run works"
