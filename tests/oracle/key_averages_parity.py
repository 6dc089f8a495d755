#!/usr/bin/env python3
"""key_averages_parity.py --trace-tool TOOL TRACE [TRACE ...]  (or --self-test)

Python's own arithmetic as the reference for `workbook trace FILE --json`: for every trace, the
trace's events become torch.autograd.profiler_util.FunctionEvents the way
torch/autograd/profiler.py `_parse_kineto_results` makes them from a recording; then Python's
own EventList tree code (`_populate_cpu_children`, `_remove_dup_nodes`) and `key_averages()` do
the rest. Every row is compared: calls, self/total CPU, self/total device time, CPU and device
memory, FLOPs (times through Python's own `_format_time`, the table's rounding).

What a trace file does not say the way a recording does, decided once and used by the workbook too:
- times are decimal µs in the file; they become integer ns (half away from zero) before anything
  else, then µs relative to the first event (a double holds µs-since-epoch only to 0.25 µs);
- device activity (kernel, memcpy, memset, sync, GPU annotation) belongs to the op around the
  runtime call with its correlation id (the innermost host event that is not itself a runtime
  call: what Kineto links it to when Python records); without a launch, to the op with its
  External id;
- a "[memory]" instant belongs to every host event whose closed interval holds it (any thread, as
  MemRecordsAcc.in_interval); the rest become "[memory]" events.
Exit 77 (skipped) without python3-torch.
"""
import argparse
import decimal
import gzip
import inspect
import json
import subprocess
import sys
from collections import defaultdict

try:
    import torch
    from torch.autograd import DeviceType
    from torch.autograd import profiler_util as pu
except ImportError:
    print("SKIPPED: python3-torch is not installed, so there is no Python reference to compare with")
    sys.exit(77)

FILTERED = {"[OutOfMemory]", "profiler::_record_function_enter", "profiler::_record_function_enter_new",
            "profiler::_record_function_exit", "aten::is_leaf", "aten::output_nr", "aten::_version"}
DEVICE_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "cuda_sync",
               "cuda_profiler_range", "gpu_user_annotation"}
RUNTIME_CATS = {"cuda_runtime", "Runtime", "cuda_driver", "runtime"}
CPU_MEMORY, CUDA_MEMORY = {0, 2, 5}, {1, 6}
FE_PARAMS = set(inspect.signature(pu.FunctionEvent.__init__).parameters)
DEVICE_MEMORY_KW = "device_memory_usage" if "device_memory_usage" in FE_PARAMS else "cuda_memory_usage"
KEYED_BY_ANNOTATION = "is_user_annotation" in FE_PARAMS  # torch >= 2.x adds it to the key


def ns(value):
    return int((decimal.Decimal(value) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def integer(value):
    return int(decimal.Decimal(value)) if isinstance(value, (int, decimal.Decimal)) else 0


def python_rows(path):
    # A .gz trace is read by Python's own gzip module: our decompressor is what is tested.
    with (gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)) as f:
        doc = json.load(f, parse_float=decimal.Decimal, parse_int=decimal.Decimal)
    raw = doc["traceEvents"] if isinstance(doc, dict) else doc
    threads = {}

    def thread_id(tid):
        return threads.setdefault(json.dumps(tid, default=str), len(threads) + 1)

    acts, mems = [], []
    for e in raw:
        ph, name, cat = e.get("ph"), e.get("name"), e.get("cat")
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if ph in ("i", "I") and name == "[memory]":
            code = integer(args.get("Device Type", 0))
            b = integer(args.get("Bytes", 0))
            mems.append(dict(t=ns(e["ts"]), tid=thread_id(e.get("tid")),
                             cpu=b if code in CPU_MEMORY else 0, dev=b if code in CUDA_MEMORY else 0))
        elif ph == "X" and cat != "Trace" and name not in FILTERED:
            if cat is None:
                kind = "op"
            else:
                kind = "device" if cat in DEVICE_CATS else "runtime" if cat in RUNTIME_CATS else "op"
            start = ns(e["ts"])
            acts.append(dict(name=name, cat=cat, kind=kind, start=start, end=start + ns(e["dur"]),
                             tid=thread_id(e.get("tid")), ext=integer(args.get("External id", 0)),
                             corr=integer(args.get("correlation", 0)), flops=integer(args.get("flops", 0)),
                             annotation=cat in ("user_annotation", "gpu_user_annotation") or
                             (cat is None and "::" not in name)))
    origin = min([a["start"] for a in acts] + [m["t"] for m in mems] or [0])
    use_device = "cuda" if any(a["kind"] == "device" for a in acts) else None
    mems.sort(key=lambda m: m["t"])
    matched = [False] * len(mems)

    def event(fid, name, tid, start, end, device, cpu_mem=0, dev_mem=0, flops=0, annotation=False):
        kw = dict(id=fid, name=name, thread=tid, start_us=(start - origin) / 1000, end_us=(end - origin) / 1000,
                  device_type=DeviceType.CUDA if device else DeviceType.CPU, cpu_memory_usage=cpu_mem, flops=flops,
                  input_shapes=[], stack=[])
        kw[DEVICE_MEMORY_KW] = dev_mem
        if "use_device" in FE_PARAMS:
            kw["use_device"] = use_device
        if KEYED_BY_ANNOTATION:
            kw["is_user_annotation"] = annotation
        return pu.FunctionEvent(**kw)

    events, info = [], {}
    for i, a in enumerate(acts):
        cpu_mem = dev_mem = 0
        if a["kind"] != "device":
            for k, m in enumerate(mems):
                if a["start"] <= m["t"] <= a["end"]:
                    cpu_mem += m["cpu"]
                    dev_mem += m["dev"]
                    matched[k] = True
        name = "ProfilerStep*" if a["name"].startswith("ProfilerStep#") else a["name"]
        fe = event(i, name, a["tid"], a["start"], a["end"], a["kind"] == "device", cpu_mem, dev_mem, a["flops"],
                   a["annotation"])
        events.append(fe)
        info[id(fe)] = a
    for k, m in enumerate(mems):
        if not matched[k]:
            events.append(event(len(acts) + k, "[memory]", m["tid"], m["t"], m["t"], False, m["cpu"], m["dev"]))
    events.sort(key=lambda evt: [evt.time_range.start, -evt.time_range.end])
    el = pu.EventList(events)
    # _build_tree(), with the kernels attached between its first two steps (as a recording has
    # them before the tree is built).
    el._populate_cpu_children()
    launches, ops_by_ext = {}, defaultdict(list)
    for fe in el:
        a = info.get(id(fe))
        if a is None or a["kind"] == "device":
            continue
        if a["kind"] == "runtime":
            if a["corr"]:
                launches.setdefault(a["corr"], fe)
        elif a["ext"]:
            ops_by_ext[a["ext"]].append(fe)
    for fe in el:
        a = info.get(id(fe))
        if a is None or a["kind"] != "device":
            continue
        owners = []
        if a["corr"] and a["corr"] in launches:
            owner = launches[a["corr"]].cpu_parent
            while owner is not None and info[id(owner)]["kind"] == "runtime":
                owner = owner.cpu_parent
            owners = [owner] if owner is not None else []
        elif a["ext"]:
            owners = ops_by_ext.get(a["ext"], [])
        for owner in owners:
            owner.append_kernel(fe.name, 0, fe.time_range.end - fe.time_range.start)
    el._remove_dup_nodes()
    el._set_backward_stacktraces()
    el._tree_built = True
    rows = {}
    for avg in el.key_averages():
        dev_total = getattr(avg, "device_time_total", None)
        if dev_total is None:
            dev_total = avg.cuda_time_total
        self_dev = getattr(avg, "self_device_time_total", None)
        if self_dev is None:
            self_dev = avg.self_cuda_time_total
        dev_mem = getattr(avg, "device_memory_usage", getattr(avg, "cuda_memory_usage", 0))
        self_dev_mem = getattr(avg, "self_device_memory_usage", getattr(avg, "self_cuda_memory_usage", 0))
        key = (avg.key, "cpu" if avg.device_type == DeviceType.CPU else "cuda",
               bool(getattr(avg, "is_user_annotation", False)) if KEYED_BY_ANNOTATION else None)
        rows[key] = dict(count=avg.count, self_cpu_us=avg.self_cpu_time_total, cpu_total_us=avg.cpu_time_total,
                         cpu_avg_us=avg.cpu_time_total / avg.count if avg.count else 0,
                         self_device_us=self_dev, device_total_us=dev_total,
                         cpu_memory_bytes=avg.cpu_memory_usage, self_cpu_memory_bytes=avg.self_cpu_memory_usage,
                         device_memory_bytes=dev_mem, self_device_memory_bytes=self_dev_mem,
                         flops=avg.flops or 0)
    return rows


def our_rows(tool, path):
    out = subprocess.run([tool, str(path), "--json", "--limit", "0", "--sort", ""], check=True,
                         capture_output=True, text=True).stdout
    rows = {}
    for r in json.loads(out):
        key = (r["name"], r["device_type"], r["is_user_annotation"] if KEYED_BY_ANNOTATION else None)
        if key in rows:  # torch 1.x keys without is_user_annotation: its row holds both of ours
            for field, value in r.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and field in rows[key]:
                    rows[key][field] += value
            rows[key]["cpu_avg_us"] = rows[key]["cpu_total_us"] / rows[key]["count"]
        else:
            rows[key] = r
    return rows


TIMES = ("self_cpu_us", "cpu_total_us", "self_device_us", "device_total_us")
EXACT = ("count", "cpu_memory_bytes", "self_cpu_memory_bytes", "device_memory_bytes", "self_device_memory_bytes",
         "flops")


def differences(python, ours):
    """Every way the two tables differ, as lines; empty when they agree to the printed rounding."""
    out = []
    for key in sorted(set(python) | set(ours), key=str):
        if key not in ours:
            out.append(f"{key}: Python has this row, ours does not")
            continue
        if key not in python:
            out.append(f"{key}: ours has this row, Python does not")
            continue
        p, o = python[key], ours[key]
        for field in EXACT:
            if p[field] != o[field]:
                out.append(f"{key} {field}: Python {p[field]}, ours {o[field]}")
        for field in TIMES:
            if pu._format_time(p[field]) != pu._format_time(o[field]):
                out.append(f"{key} {field}: Python {pu._format_time(p[field])}, ours {pu._format_time(o[field])}")
        # An average can land on a rounding boundary: equal to float noise is equal.
        if pu._format_time(p["cpu_avg_us"]) != pu._format_time(o["cpu_avg_us"]) and \
                abs(p["cpu_avg_us"] - o["cpu_avg_us"]) > 1e-6 * max(1.0, abs(p["cpu_avg_us"])):
            out.append(f"{key} cpu_avg_us: Python {p['cpu_avg_us']}, ours {o['cpu_avg_us']}")
    return out


def self_test():
    """The comparison can fail: one broken field in one row must be reported, and only that."""
    python = {("aten::mm", "cpu", None): dict(count=2, self_cpu_us=10.0, cpu_total_us=12.5, cpu_avg_us=6.25,
                                              self_device_us=0.0, device_total_us=3.0, cpu_memory_bytes=64,
                                              self_cpu_memory_bytes=64, device_memory_bytes=0,
                                              self_device_memory_bytes=0, flops=100)}
    same = {k: dict(v) for k, v in python.items()}
    assert differences(python, same) == [], differences(python, same)
    for field, broken in (("count", 3), ("self_cpu_us", 10.001), ("device_total_us", 2.0), ("cpu_memory_bytes", 0)):
        ours = {k: dict(v, **{field: broken}) for k, v in python.items()}
        found = differences(python, ours)
        assert len(found) == 1 and field in found[0], (field, found)
    missing = differences(python, {})
    assert len(missing) == 1 and "ours does not" in missing[0], missing
    print("self-test: a broken row is reported (count, times, memory, a missing row)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace-tool")
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("traces", nargs="*")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        return 0
    failed = 0
    print(f"torch {torch.__version__}: rows keyed by (name, device type"
          f"{', is_user_annotation' if KEYED_BY_ANNOTATION else ''})")
    for path in args.traces:
        python, ours = python_rows(path), our_rows(args.trace_tool, path)
        found = differences(python, ours)
        status = "agrees" if not found else f"DIFFERS in {len(found)} places"
        print(f"{path}: {len(python)} rows, {sum(r['count'] for r in python.values())} events: {status}")
        for line in found[:30]:
            print("   ", line)
        failed += bool(found)
    if not args.traces:
        print("no traces given")
        return 1
    print(f"{len(args.traces) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
