#!/usr/bin/env python3
"""Adds up the reports of several dnnc_fuzz.py runs into one.

    sum_reports.py LOG [LOG ...]

Each LOG is the standard output of one `dnnc_fuzz.py` run (run_many.sh
writes one per chunk). The sum has the same parts as a single report: the
graph count, the classes per mode, the op table (graphs, failures, in min),
the refusals grouped by message and every FAIL line, then
`N passed, N failed`. A log that does not end in that last line (an
unfinished chunk) is an error: the sum would silently undercount.
"""

import collections
import re
import sys

GRAPHS = re.compile(r"^(\d+) graphs \((\d+) invalid\) in (\d+) s$")
LAST = re.compile(r"^(\d+) passed, (\d+) failed$")
REFUSAL = re.compile(r"^  +(\d+) (.*)$")


def parse(path, totals):
    """Adds the report in `path` to `totals`; returns an error or None."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines or not LAST.match(lines[-1]):
        return f"{path}: no final 'N passed, N failed' line (unfinished run?)"
    section = None
    classes = None
    for i, line in enumerate(lines):
        m = GRAPHS.match(line)
        if m:
            totals["graphs"] += int(m[1])
            totals["invalid"] += int(m[2])
            totals["seconds"] += int(m[3])
            continue
        if line.startswith("mode "):
            classes = line.split()[1:]
            totals["classes"] = classes
            section = "mode"
            continue
        if line.startswith("op ") and "graphs" in line:
            section = "op"
            continue
        if line.startswith("refusals "):
            section = "refusals"
            continue
        if line.startswith("FAIL "):
            totals["fails"].append(line)
            continue
        if line.startswith("  invalid seed "):
            totals["invalids"].append(line.strip())
            continue
        if not line.strip():
            if section in ("mode", "op"):
                section = None
            continue
        fields = line.split()
        if section == "mode" and fields[0] != "all":
            counts = totals["modes"].setdefault(fields[0],
                                                collections.Counter())
            for c, n in zip(classes, fields[1:]):
                counts[c] += int(n)
        elif section == "op":
            row = totals["ops"].setdefault(fields[0], [0, 0, 0])
            for k in range(3):
                row[k] += int(fields[k + 1])
        elif section == "refusals":
            m = REFUSAL.match(line)
            if m and i + 1 < len(lines):
                entry = totals["refusals"].setdefault(m[2], [0, None])
                entry[0] += int(m[1])
                if entry[1] is None:
                    entry[1] = lines[i + 1].strip()
    return None


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    totals = {"graphs": 0, "invalid": 0, "seconds": 0, "classes": [],
              "modes": {}, "ops": {}, "refusals": {}, "fails": [],
              "invalids": []}
    for path in argv:
        error = parse(path, totals)
        if error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    classes = totals["classes"]
    print(f"{len(argv)} reports: {totals['graphs']} graphs "
          f"({totals['invalid']} invalid) in {totals['seconds']} s")
    for line in totals["invalids"]:
        print(f"  {line}")
    print(f"\n{'mode':10}" + "".join(f"{c:>10}" for c in classes))
    total = collections.Counter()
    for mode, counts in totals["modes"].items():
        total.update(counts)
        print(f"{mode:10}" + "".join(f"{counts[c]:>10}" for c in classes))
    print(f"{'all':10}" + "".join(f"{total[c]:>10}" for c in classes))
    print(f"\n{'op':26}{'graphs':>8}{'failures':>10}{'in min':>8}")
    for op, row in sorted(totals["ops"].items()):
        print(f"{op:26}" + "".join(f"{n:>{w}}" for n, w in zip(row,
                                                               (8, 10, 8))))
    if totals["refusals"]:
        print("\nrefusals (messages with names and numbers elided):")
        for reason, (n, example) in sorted(totals["refusals"].items(),
                                           key=lambda x: -x[1][0]):
            print(f"  {n:4} {reason}\n       {example}")
    print()
    for line in totals["fails"]:
        print(line)
    failed = sum(total[c] for c in ("wrong", "crash", "internal"))
    print(f"{total['pass']} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
