#!/usr/bin/env bash
# cold_start_advice.sh LESSON01 TRACE_TOOL WORK: the advisor's cold-start rule on lesson 01's own
# traces, as a person runs it (issue 27): recorded without warm-up, `trace --advise` fires
# [cold_first_step]; recorded with two warm-up steps (Kineto's start costs the first two recorded
# steps on LibTorch 2.6, one on 1.13), it stays silent. Measured: 10/10 each way on both legs.
# A busy machine can slow any one step, so each way gets up to three runs and one must show it.
set -u
lesson=$1 tool=$2 work=$3
fired() {  # fired WARMUP: 0 when the rule fired on a fresh recording
  rm -rf "$work" && "$lesson" --warmup "$1" --out "$work" >/dev/null 2>&1 || { echo "cold_start_advice: lesson 01 failed"; exit 1; }
  local trace
  trace=$(ls "$work"/*/*.json | head -1)
  # Findings come first; the rules that stayed silent are listed after "silent here".
  "$tool" "$trace" --advise | sed '/^silent here/,$d' | grep -q '\[cold_first_step\]'
}
shows() {  # shows WARMUP WANT(fires|silent)
  for try in 1 2 3; do
    if fired "$1"; then [ "$2" = fires ] && return 0; else [ "$2" = silent ] && return 0; fi
  done
  return 1
}
shows 0 fires || { echo "cold_start_advice: no warm-up, yet [cold_first_step] did not fire in 3 runs"; exit 1; }
shows 2 silent || { echo "cold_start_advice: two warm-up steps, yet [cold_first_step] fired in 3 runs"; exit 1; }
echo "cold_start_advice: fires without warm-up, silent after two warm-up steps"
