#!/usr/bin/env python3
"""under_chain_memory.py TRACE_TOOL WORK_DIR: `trace --under NAME` on a 20 000-deep chain of
alternating names (a 1.7 MB file) stays within 100 MB of resident memory and 10 s. Copying each
match's subtree once per match made it quadratic: 6 GB within 9 s."""
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

tool, work = sys.argv[1], Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
depth = 20000
events = [{"ph": "X", "cat": "cpu_op", "name": "a" if i % 2 == 0 else "b", "pid": 1, "tid": 1,
           "ts": i, "dur": 2 * (depth - i)} for i in range(depth)]
trace = work / "chain.json"
trace.write_text(json.dumps({"traceEvents": events}))
start = time.monotonic()
result = subprocess.run([tool, str(trace), "--under", "a", "--limit", "3"], capture_output=True, text=True, timeout=60)
seconds = time.monotonic() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
trace.unlink()
rows = [line for line in result.stdout.splitlines() if line.split()[:1] in (["a"], ["b"])]
print(f"under_chain_memory: --under a on a {depth}-deep chain: "
      f"{seconds:.2f} s, peak RSS {peak / 1e6:.0f} MB (limit 100 MB), exit {result.returncode}")
counts = {line.split()[0]: line.split()[-1] for line in rows}
ok = result.returncode == 0 and peak <= 100e6 and seconds <= 10
# Each event is counted once: 10 000 calls of each name, not once per enclosing match.
ok = ok and counts.get("a") == "10000" and counts.get("b") == "10000"
if not ok:
    print(result.stdout[-2000:], result.stderr[-2000:])
sys.exit(0 if ok else 1)
