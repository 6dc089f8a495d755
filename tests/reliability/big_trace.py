#!/usr/bin/env python3
"""big_trace.py MEGABYTES OUT: writes a Kineto-style chrome trace of about MEGABYTES MB (steps of
regions, nested operators with shapes, memory instants, kernels with launches), streamed to
OUT.tmp and renamed, for measuring what importing a very large trace costs."""
import os
import sys

target = int(sys.argv[1]) * 1_000_000
out = sys.argv[2]
tmp = out + ".tmp"
with open(tmp, "w") as f:
    f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "none"}], "traceEvents": [\n')
    written, t, step, first = 0, 1_000_000.0, 0, True
    while written < target:
        lines = [
            f'{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{step}", "pid": 1, "tid": 1, "ts": {t:.3f}, "dur": 90.0}}',
            f'{{"ph": "X", "cat": "user_annotation", "name": "matmul_add", "pid": 1, "tid": 1, "ts": {t + 1:.3f}, "dur": 80.0}}',
            f'{{"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 1, "tid": 1, "ts": {t + 2:.3f}, "dur": 50.0, "args": {{"Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"]}}}}',
            f'{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": {t + 3:.3f}, "dur": 45.0, "args": {{"Input Dims": [[64, 64], [64, 64]], "flops": 524288}}}}',
            f'{{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": {t + 4:.3f}, "args": {{"Bytes": 16384, "Total Allocated": 16384}}}}',
            f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {t + 5:.3f}, "dur": 4.0, "args": {{"correlation": {step + 1}}}}}',
            f'{{"ph": "X", "cat": "kernel", "name": "ampere_sgemm_64x64_nn", "pid": 0, "tid": 7, "ts": {t + 9:.3f}, "dur": 30.0, "args": {{"correlation": {step + 1}, "device": 0, "stream": 7}}}}',
            f'{{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": {t + 60:.3f}, "dur": 15.0, "args": {{"Input Dims": [[64, 64], [64], []]}}}}',
        ]
        chunk = ("" if first else ",\n") + ",\n".join(lines)
        first = False
        f.write(chunk)
        written += len(chunk)
        t += 100.0
        step += 1
    f.write("\n]}\n")
os.replace(tmp, out)
print(f"big_trace: {os.path.getsize(out) / 1e6:.0f} MB, {step * 8} events, {out}")
