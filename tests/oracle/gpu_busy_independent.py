#!/usr/bin/env python3
"""gpu_busy_independent.py TRACE_TOOL WORK_DIR TRACE [TRACE ...]

`workbook trace FILE --gpu --json` against an independent computation of the same numbers: per
device, the fraction of the window (first to last event of the trace, and each host
ProfilerStep#N) during which at least one kernel, copy or fill ran, computed here by a coverage
count over sorted boundaries (not by merging intervals, as the toolkit does), from times read as
exact decimals. Besides the given traces it writes and checks 20 random multi-device,
multi-stream traces the toolkit has never seen. Agreement: within 0.5 % of the window.
"""
import decimal
import json
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

BUSY = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
FILTERED = {"[OutOfMemory]", "profiler::_record_function_enter", "profiler::_record_function_enter_new",
            "profiler::_record_function_exit", "aten::is_leaf", "aten::output_nr", "aten::_version"}


def ns(v):
    return int((decimal.Decimal(v) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def covered(spans, lo, hi):
    """Time in [lo, hi) covered by at least one span: +1/-1 at each boundary, in time order."""
    marks = []
    for s, e in spans:
        s, e = max(s, lo), min(e, hi)
        if e > s:
            marks += [(s, 1), (e, -1)]
    marks.sort()
    total, depth, since = 0, 0, None
    for t, d in marks:
        if depth == 0 and d == 1:
            since = t
        depth += d
        if depth == 0:
            total += t - since
    return total


def expected(path):
    with open(path) as f:
        doc = json.load(f, parse_float=decimal.Decimal, parse_int=decimal.Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    times, work, steps = [], defaultdict(list), []
    for e in events:
        ph, cat, name = e.get("ph"), e.get("cat"), e.get("name")
        if ph in ("i", "I") and name == "[memory]":
            times.append((ns(e["ts"]), ns(e["ts"])))
        if ph != "X" or cat == "Trace" or name in FILTERED:
            continue
        s = ns(e["ts"])
        t = s + ns(e["dur"])
        times.append((s, t))
        if cat in BUSY:
            args = e.get("args") or {}
            work[int(args.get("device", e.get("pid", 0)))].append((s, t))
        if cat != "gpu_user_annotation" and str(name).startswith("ProfilerStep#"):
            steps.append((s, t))
    lo, hi = min(s for s, _ in times), max(t for _, t in times)
    whole = {d: covered(sp, lo, hi) / (hi - lo) for d, sp in work.items()}
    # Without device work there is nothing to say per step (the toolkit says so in one line).
    per_step = [{d: covered(sp, s, t) / (t - s) if t > s else 0.0 for d, sp in work.items()}
                for s, t in sorted(steps)] if work else []
    return whole, per_step


def random_trace(path, seed):
    rng = random.Random(seed)
    events, t = [], 1_700_000_000_000_000 + rng.randint(0, 10**6)  # µs since the epoch, like Kineto
    for step in range(rng.randint(1, 4)):
        start = t
        for _ in range(rng.randint(0, 40)):
            dev, stream = rng.randint(0, 1), rng.choice([7, 13, 20])
            ks = t + rng.uniform(0, 500)
            events.append({"ph": "X", "cat": rng.choice(["kernel", "kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"]),
                           "name": f"k{rng.randint(0, 5)}", "pid": dev, "tid": stream,
                           "ts": f"{ks:.3f}", "dur": f"{rng.uniform(0.5, 120):.3f}", "args": {"device": dev}})
        t += rng.uniform(300, 900)
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                       "ts": f"{start:.3f}", "dur": f"{t - start:.3f}"})
        t += rng.uniform(0, 50)
    path.write_text(json.dumps({"traceEvents": events}).replace('"ts": "', '"ts": ').replace('", "dur": "', ', "dur": ')
                    .replace('", "args"', ', "args"').replace('"}', '}'))


def main():
    tool, work_dir, traces = sys.argv[1], Path(sys.argv[2]), [Path(p) for p in sys.argv[3:]]
    work_dir.mkdir(parents=True, exist_ok=True)
    for seed in range(20):
        path = work_dir / f"random_{seed}.json"
        random_trace(path, seed)
        traces.append(path)
    failed = 0
    for path in traces:
        whole, per_step = expected(path)
        ours = json.loads(subprocess.run([tool, str(path), "--gpu", "--json"], check=True, capture_output=True,
                                         text=True).stdout)
        problems = []
        got = {d["device"]: d["busy_fraction"] for d in ours["devices"]}
        if set(got) != set(whole):
            problems.append(f"devices: ours {sorted(got)}, expected {sorted(whole)}")
        for d, f in whole.items():
            if abs(got.get(d, -1) - f) > 0.005:
                problems.append(f"GPU {d} busy: ours {got.get(d)}, expected {f:.6f}")
        if len(ours["steps"]) != len(per_step):
            problems.append(f"steps: ours {len(ours['steps'])}, expected {len(per_step)}")
        for k, (step, exp) in enumerate(zip(ours["steps"], per_step)):
            got_step = {d["device"]: d["busy_fraction"] for d in step["devices"]}
            for d, f in exp.items():
                if abs(got_step.get(d, 0.0) - f) > 0.005:
                    problems.append(f"step {k} GPU {d}: ours {got_step.get(d)}, expected {f:.6f}")
        summary = ", ".join(f"GPU {d} {100 * f:.2f}%" for d, f in sorted(whole.items())) or "no device work"
        print(f"{path.name}: {summary}, {len(per_step)} steps: {'agrees' if not problems else 'DIFFERS'}")
        for p in problems[:10]:
            print("   ", p)
        failed += bool(problems)
    print(f"{len(traces) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
