#!/usr/bin/env python3
"""Checks that a plan's per-rank schedule and dnnc's simulated trace agree.

Usage: compare_schedule.py TRACE.json PRINT_PLAN.txt

TRACE.json is `dnnc --trace` output (one lane `tid` per device, compute
events named "F<microbatch> stage <stage>"); PRINT_PLAN.txt is `dnnc-run
--print-plan` of the plan.bin built by the same dnnc invocation. For every
rank, the (stage, micro-batch) order of its compute steps must equal the
order of the compute events on its lane. Prints one line per rank and exits
1 on the first difference.
"""
import json
import re
import sys


def main(trace_path, plan_path):
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    lanes = {}
    for e in sorted((e for e in events if e.get("cat") == "compute"),
                    key=lambda e: (e["tid"], e["ts"])):
        m = re.fullmatch(r"F(\d+) stage (\d+)", e["name"])
        if m:
            lanes.setdefault(e["tid"], []).append(
                (int(m.group(2)), int(m.group(1))))
    steps, rank = {}, None
    with open(plan_path) as f:
        for line in f:
            m = re.match(r"rank (\d+):", line)
            if m:
                rank = int(m.group(1))
                steps[rank] = []
                continue
            m = re.search(r"compute dnnc_entry_stage_(\d+) \(mb (\d+)\)", line)
            if m and rank is not None:
                steps[rank].append((int(m.group(1)), int(m.group(2))))
    if not steps:
        print("no ranks in the plan listing")
        return 1
    for rank in sorted(steps):
        simulated = lanes.get(rank, [])
        if steps[rank] != simulated:
            print(f"rank {rank}: plan {steps[rank]} != simulated {simulated}")
            return 1
        print(f"rank {rank}: {len(steps[rank])} compute steps agree")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
