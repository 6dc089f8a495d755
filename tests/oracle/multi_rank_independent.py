#!/usr/bin/env python3
"""multi_rank_independent.py TRACE_TOOL LESSON12 WORK_DIR [STORED_DIR...]

`workbook trace --ranks DIR --json` against an independent computation of the same numbers, on
the traces of a real job: lesson 12 runs two ranks (quick sizes) and writes one trace per rank and
way, and each STORED_DIR holds the rank traces of a job recorded elsewhere (Python's
torch.profiler around DistributedDataParallel, see its README); this script reads each folder's
traces itself, from times read as exact decimals:
- per step (ProfilerStep#N), the time a transfer was in flight (gloo:/nccl: events, NCCL
  kernels) and the part of it in which an op computed (a cpu_op not inside a c10d:: call or
  record_param_comms, and outside the calls its thread made), by a coverage count over sorted
  boundaries (not by merging intervals, as the toolkit does); medians over the steps;
- the clocks aligned by each rank's first transfer end, each outermost collective call's arrival,
  the time each rank waited for the last one, and the rank last most often.
Agreement: within 1 µs per figure (the traces keep 3 decimals of µs), overlap fractions within
0.001, the same straggler.
"""
import decimal
import json
import subprocess
import sys
from pathlib import Path

COLLECTIVE_CALLS = ("c10d::",)


def ns(v):
    return int((decimal.Decimal(str(v)) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def is_transfer(e):
    name, cat = e["name"], e.get("cat", "")
    if cat.lower() == "kernel":
        return name.startswith("nccl")
    return name.startswith("gloo:") or name.startswith("nccl:")


def is_call(name):
    return name.startswith(COLLECTIVE_CALLS) or name == "record_param_comms"


def covered(spans, lo, hi):
    """Time in [lo, hi) covered by at least one span: +1/-1 at each boundary, in time order."""
    marks = []
    for s, e in spans:
        s, e = max(s, lo), min(e, hi)
        if e > s:
            marks += [(s, 1), (e, -1)]
    marks.sort(key=lambda m: (m[0], -m[1]))
    depth, last, total = 0, None, 0
    for t, d in marks:
        if depth > 0:
            total += t - last
        depth += d
        last = t
    return total


def both_covered(a, b, lo, hi):
    """Time in [lo, hi) covered by a span of `a` and a span of `b` at once."""
    marks = []
    for kind, spans in ((0, a), (1, b)):
        for s, e in spans:
            s, e = max(s, lo), min(e, hi)
            if e > s:
                marks += [(s, kind, 1), (e, kind, -1)]
    marks.sort(key=lambda m: (m[0], -m[2]))
    depth, last, total = [0, 0], None, 0
    for t, kind, d in marks:
        if depth[0] > 0 and depth[1] > 0:
            total += t - last
        depth[kind] += d
        last = t
    return total


def outside(spans, holes):
    """The time of `spans` not inside any of `holes`: each span's boundaries and the holes' edges
    walked in order, keeping the pieces no hole covers."""
    pieces = []
    for s, e in spans:
        cuts = sorted((max(hs, s), min(he, e)) for hs, he in holes if he > s and hs < e)
        at = s
        for hs, he in cuts:
            if hs > at:
                pieces.append((at, hs))
            at = max(at, he)
        if e > at:
            pieces.append((at, e))
    return pieces


def read_rank(path):
    events = [e for e in json.loads(Path(path).read_text())["traceEvents"] if e.get("ph") == "X"]
    for e in events:
        e["s"], e["e"] = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
    host = [e for e in events if e.get("cat", "").lower() not in ("kernel", "gpu_memcpy", "gpu_memset")]
    # Inside a collective call: contained by one on the same thread.
    calls = [e for e in host if is_call(e["name"])]

    def inside_call(e):
        return any(c is not e and c["tid"] == e["tid"] and c["s"] <= e["s"] and e["e"] <= c["e"] for c in calls)

    transfers = [(e["s"], e["e"]) for e in events if is_transfer(e)]
    # Per thread: its ops' time outside the collective calls it made (an op enclosing a call
    # computes only around it).
    computing = []
    for tid in {e["tid"] for e in host}:
        ops = [(e["s"], e["e"]) for e in host
               if e["tid"] == tid and e.get("cat") == "cpu_op" and not is_call(e["name"]) and not inside_call(e)
               and not any(t["tid"] == e["tid"] and t["s"] <= e["s"] and e["e"] <= t["e"]
                           for t in events if is_transfer(t))]
        in_calls = [(c["s"], c["e"]) for c in calls if c["tid"] == tid]
        computing += outside(ops, in_calls)
    steps = sorted((e["s"], e["e"]) for e in host if e["name"].startswith("ProfilerStep#"))
    per_step = []
    for lo, hi in steps:
        comm = covered(transfers, lo, hi)
        over = both_covered(transfers, computing, lo, hi)
        per_step.append((hi - lo, comm, over))
    outermost = sorted(c["s"] for c in calls if not inside_call(c))
    arrivals = outermost if outermost else sorted(s for s, _ in transfers)
    anchor = min(e for _, e in transfers)
    return per_step, arrivals, anchor


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def independent(files):
    ranks = [read_rank(f) for f in files]
    latest = max(anchor for _, _, anchor in ranks)
    shifts = [latest - anchor for _, _, anchor in ranks]
    compared = min(len(arrivals) for _, arrivals, _ in ranks)
    waited = [0] * len(ranks)
    last_count = [0] * len(ranks)
    for k in range(compared):
        aligned = [ranks[r][1][k] + shifts[r] for r in range(len(ranks))]
        last = max(range(len(ranks)), key=lambda r: (aligned[r], -r))
        last_count[last] += 1
        for r in range(len(ranks)):
            waited[r] += aligned[last] - aligned[r]
    out = []
    for r, (steps, _, _) in enumerate(ranks):
        comm_total = sum(c for _, c, _ in steps)
        out.append({
            "step_us": median([s for s, _, _ in steps]) / 1000,
            "communication_us": median([c for _, c, _ in steps]) / 1000,
            "overlapped_us": median([o for _, _, o in steps]) / 1000,
            "exposed_us": median([c - o for _, c, o in steps]) / 1000,
            "overlap_fraction": sum(o for _, _, o in steps) / comm_total if comm_total else 0,
            "waited_us": waited[r] / 1000,
            "arrived_last": last_count[r],
        })
    most = max(last_count)
    straggler = last_count.index(most) if compared and last_count.count(most) == 1 else None
    return out, straggler


def compare(tool, label, folder):
    """Prints one line for the folder's job; returns how many figures differ."""
    files = sorted(folder.glob("rank*.json"), key=lambda p: int(p.stem[4:]))
    ours = json.loads(subprocess.run([tool, "--ranks", str(folder), "--json"], check=True, capture_output=True,
                                     text=True).stdout)
    theirs, straggler = independent(files)
    failures = 0
    for r, (o, t) in enumerate(zip(ours["ranks"], theirs)):
        for key, value in t.items():
            tolerance = 0.001 if key == "overlap_fraction" else (0 if key == "arrived_last" else 1.0)
            if abs(o[key] - value) > tolerance:
                print(f"FAIL {label} rank {r} {key}: trace --ranks {o[key]}, independent {value}")
                failures += 1
    if ours["straggler"] != straggler:
        print(f"FAIL {label}: straggler {ours['straggler']} against {straggler}")
        failures += 1
    if len(ours["ranks"]) != len(files):
        print(f"FAIL {label}: {len(ours['ranks'])} ranks read of {len(files)}")
        failures += 1
    print(f"{label}: {len(files)} ranks, {len(ours['collectives'])} collectives compared, "
          f"{'agree' if not failures else 'differ'}")
    return failures


def main():
    tool, lesson, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    subprocess.run([lesson, "--size", "16", "--dim", "16", "--hidden", "32", "--steps", "3", "--bucket-kb", "1",
                    "--out", str(work)], check=True, stdout=subprocess.DEVNULL)
    failures = 0
    for way in ("each_gradient", "flat_bucket", "overlapped"):
        failures += compare(tool, way, work / "12_data_parallel" / way)
    for stored in sys.argv[4:]:
        failures += compare(tool, Path(stored).name, Path(stored))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
