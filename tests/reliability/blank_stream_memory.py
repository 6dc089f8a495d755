#!/usr/bin/env python3
"""blank_stream_memory.py TRACE_TOOL: `trace` on a pipe of 300 MB of blanks (then the end of input)
stays within 100 MB of resident memory: whitespace between items is read and dropped, never kept in
the buffer. Before, the buffer doubled on it past 3 GB and the read ended in std::bad_alloc."""
import resource
import subprocess
import sys

tool = sys.argv[1]
blanks = subprocess.Popen(["sh", "-c", "yes ' ' | head -c 300000000"], stdout=subprocess.PIPE)
result = subprocess.run([tool, "/dev/stdin"], stdin=blanks.stdout, capture_output=True, text=True, timeout=120)
blanks.wait()
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
lines = result.stderr.strip().splitlines()
print(f"blank_stream_memory: 300 MB of blanks on a pipe: peak RSS {peak / 1e6:.0f} MB (limit 100 MB), "
      f"exit {result.returncode}: {lines}")
ok = result.returncode == 2 and len(lines) == 1 and "unexpected end of input" in lines[0] and peak <= 100e6
# The same blanks between two events, after the comma: a valid trace, read in the same small memory.
event = '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 5}'
script = f"printf '%s' '{{\"traceEvents\": [{event},'; yes ' ' | head -c 300000000; printf '%s' '{event}]}}'"
between = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE)
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
result = subprocess.run([tool, "/dev/stdin"], stdin=between.stdout, capture_output=True, text=True, timeout=120)
between.wait()
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(f"blank_stream_memory: 300 MB of blanks after a comma: peak RSS {peak / 1e6:.0f} MB, exit {result.returncode}")
ok = ok and result.returncode == 0 and "aten::mm" in result.stdout and peak <= 100e6
sys.exit(0 if ok else 1)
