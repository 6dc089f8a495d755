#!/usr/bin/env python3
"""Outside oracle: Python's torch.profiler, run on the same workload as lesson 01, must see the
same operators the same number of times as the workbook's C++ toolkit; and a trace exported by
Python's own exporter must load through the workbook's importer with the same counts.

Debian's python3-torch is the same LibTorch build as libtorch-dev. Exit 77 (skipped) without it.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import torch
except ImportError:
    print("SKIPPED: python3-torch is not installed, so there is no outside oracle to compare with")
    sys.exit(77)

parser = argparse.ArgumentParser()
parser.add_argument("--lesson", required=True)
parser.add_argument("--trace-tool", required=True)
parser.add_argument("--work", required=True)
args = parser.parse_args()
work = Path(args.work)
work.mkdir(parents=True, exist_ok=True)
torch.set_num_threads(1)
REGIONS = {"matmul_add", "ProfilerStep*"}
failures = []


def compared(counts):
    return {k: v for k, v in counts.items() if k.startswith("aten::") or k in REGIONS}


def our_counts(trace, under=None):
    command = [args.trace_tool, str(trace), "--json", "--limit", "0"] + (["--under", under] if under else [])
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return {row["name"]: row["count"] for row in json.loads(out)}


def python_counts(events, names):
    """Python's own call counts of the workload's operators (no tree: see below)."""
    counts = {}
    for event in events:
        if event.name in names:
            counts[event.name] = counts.get(event.name, 0) + 1
    return counts


def misnested(events, child, parent, slack_us=1.0):
    """Python's events named `child` whose interval is not inside any `parent` interval.

    Python 1.13 builds its tree from microsecond timestamps, so a child that ends in the same
    microsecond as its parent is sometimes filed as a sibling; containment with a 1 us slack
    is the structural fact both profilers must agree on."""
    parents = [(e.time_range.start, e.time_range.end) for e in events if e.name == parent]
    return [e for e in events if e.name == child and not any(
        start - slack_us <= e.time_range.start and e.time_range.end <= end + slack_us
        for start, end in parents)]


def compare(what, python, ours):
    python, ours = compared(python), compared(ours)
    print(f"{what}: python {sorted(python.items())}")
    print(f"{what}: ours   {sorted(ours.items())}")
    if python != ours:
        failures.append(f"{what}: python {python} != ours {ours}")
    if not python:
        failures.append(f"{what}: nothing to compare")


def workload():
    torch.manual_seed(0)
    return torch.randn(64, 64), torch.randn(64, 64), torch.randn(64)


# 1. Python's torch.profiler with the lesson's schedule vs lesson 01's own trace.
x, w, b = workload()
schedule = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule,
                            record_shapes=True, profile_memory=True) as prof:
    for _ in range(5):
        with torch.profiler.record_function("matmul_add"):
            y = torch.add(torch.matmul(x, w), b)
        prof.step()
subprocess.run([args.lesson, "--size", "64", "--threads", "1", "--out", str(work)], check=True,
               stdout=subprocess.DEVNULL)
ours = work / "01_matmul_add" / "64_float32_cpu.json"
# Python's record_function runs ops of its own around and inside each region (aten::zeros,
# aten::empty, aten::zero_ for its handle): Python-side machinery that C++ regions do not pay.
# So only the workload's operators (those under aten::matmul and aten::add in our tree) are
# compared, by count, and the nesting is checked by interval containment.
for op in ("aten::matmul", "aten::add"):
    ours_under = our_counts(ours, under=op)
    compare(f"torch.profiler vs lesson 01, {op} and what it calls",
            python_counts(prof.events(), set(ours_under)), ours_under)
for child in ("aten::mm", "aten::resolve_conj"):
    outside = misnested(prof.events(), child, "aten::matmul")
    if outside:
        failures.append(f"python's {child} outside aten::matmul: {len(outside)} events")
    if child not in our_counts(ours, under="aten::matmul"):
        failures.append(f"our trace has no {child} under aten::matmul")
steps = {e.key: e.count for e in prof.key_averages() if e.key in REGIONS}
compare("torch.profiler vs lesson 01, regions", steps, {k: v for k, v in our_counts(ours).items() if k in REGIONS})

# 2. Python's own chrome-trace export (legacy exporter: Kineto's save() is absent in Debian 12's
#    build) read back by our importer.
with tempfile.TemporaryDirectory() as tmp:
    exported = Path(tmp) / "python_export.json"
    with torch.autograd.profiler.profile(use_kineto=False) as legacy:
        for _ in range(3):
            with torch.autograd.profiler.record_function("matmul_add"):
                y = torch.add(torch.matmul(x, w), b)
    legacy.export_chrome_trace(str(exported))
    compare("python export_chrome_trace vs our importer", {e.key: e.count for e in legacy.key_averages()},
            our_counts(exported))

if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print("oracle: op names and call counts agree with Python's torch.profiler")
