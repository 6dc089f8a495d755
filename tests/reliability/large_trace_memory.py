#!/usr/bin/env python3
"""large_trace_memory.py TRACE_TOOL WORK_DIR MEGABYTES [MAX_RATIO]: writes a Kineto-style trace of
MEGABYTES MB (big_trace.py), imports it with `workbook_trace`, and fails when the importer's
peak resident memory exceeds MAX_RATIO (default 4) times the file's size. The importer streams
the events; a whole-document parse needed about 12x here."""
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

tool, work, megabytes = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
max_ratio = float(sys.argv[4]) if len(sys.argv) > 4 else 4.0
work.mkdir(parents=True, exist_ok=True)
trace = work / f"big_{megabytes}mb.json"
subprocess.run([sys.executable, str(Path(__file__).with_name("big_trace.py")), str(megabytes), str(trace)], check=True)
size = trace.stat().st_size
start = time.monotonic()
result = subprocess.run([tool, str(trace), "--limit", "3"], capture_output=True, text=True)
seconds = time.monotonic() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # kB on Linux
trace.unlink()
if result.returncode != 0:
    print(f"large_trace_memory: the import failed: {result.stderr.strip()}")
    sys.exit(1)
if "aten::matmul" not in result.stdout:
    print("large_trace_memory: the table lacks aten::matmul")
    sys.exit(1)
ratio = peak / size
print(f"large_trace_memory: {size / 1e6:.0f} MB trace imported in {seconds:.1f} s, "
      f"peak RSS {peak / 1e6:.0f} MB = {ratio:.2f}x the file (limit {max_ratio}x)")
sys.exit(0 if ratio <= max_ratio else 1)
