#!/usr/bin/env python3
"""Compiles and runs the model families of python/export_families.py with
dnnc at 1 rank, at `--parallel=tp=2` and at `--parallel=pp=2
--microbatches=2` (mpirun -np 2), compares every output with onnxruntime's
(rtol 1e-3 for float32, as test/onnx/conformance.py does) and prints one
table row per (family, exporter, configuration): result, compile seconds
and peak compile RSS, run seconds.

    python3 bench/families.py [--size small|full] [--exporter ...]
        [--only FAMILY ...] [--configs 1rank,tp2,pp2] [--json out.json]

Exports missing from the cache are made first (python/export_families.py;
needs torch, transformers and onnxscript). A measurement, not a test: the
exit status is 1 when some configuration fails, for scripts that want it.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "onnx"))

import export_families  # noqa: E402
from conformance import compare, input_pb_files  # noqa: E402

CONFIGS = {
    "1rank": (1, []),
    "tp2": (2, ["--parallel=tp=2"]),
    "pp2": (2, ["--parallel=pp=2", "--microbatches=2"]),
}


def first_error(text):
    for line in text.splitlines():
        if line.startswith("error:") or "error" in line.lower():
            return line.strip()[:300]
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1][:300] if lines else "(no output)"


def run_timed(cmd, timeout):
    """Runs cmd; returns (rc, stdout+stderr, seconds, peak RSS in MB of
    the children since the last call)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, out = -1, f"timed out after {timeout} s"
    seconds = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return rc, out, seconds, max(peak, before) / 1024


def check(folder, config, opts):
    ranks, flags = CONFIGS[config]
    model = os.path.join(folder, "model.onnx")
    data = os.path.join(folder, "test_data_set_0")
    row = {"config": config}
    with tempfile.TemporaryDirectory(prefix="dnnc-family-") as tmp:
        plan = os.path.join(tmp, "plan.bin")
        # RSS of this compile alone: measured in a fresh child python.
        cmd = [sys.executable, "-c",
               "import resource, subprocess, sys; "
               "r = subprocess.run(sys.argv[1:]).returncode; "
               "print('RSS_MB', resource.getrusage("
               "resource.RUSAGE_CHILDREN).ru_maxrss / 1024, file=sys.stderr);"
               " sys.exit(r)",
               opts.dnnc, model, "-o", plan] + flags
        rc, out, seconds, _ = run_timed(cmd, opts.timeout)
        row["compile_s"] = round(seconds, 2)
        rss = [l for l in out.splitlines() if l.startswith("RSS_MB")]
        row["compile_rss_mb"] = round(float(rss[-1].split()[1])) if rss \
            else None
        if rc != 0:
            row["result"] = "compile failed: " + first_error(out)
            return row
        outdir = os.path.join(tmp, "out")
        cmd = [opts.dnnc_run, plan, "--output-dir", outdir]
        for pb in input_pb_files(folder):
            cmd += ["--input", pb]
        if ranks > 1:
            cmd = [opts.mpirun, "-np", str(ranks), "--oversubscribe",
                   "--allow-run-as-root"] + cmd
        rc, out, seconds, _ = run_timed(cmd, opts.timeout)
        row["run_s"] = round(seconds, 2)
        if rc != 0:
            row["result"] = "run failed: " + first_error(out)
            return row
        k = 0
        while os.path.isfile(os.path.join(data, f"output_{k}.pb")):
            reason = compare(os.path.join(outdir, f"output_{k}.pb"),
                             os.path.join(data, f"output_{k}.pb"),
                             rtol=1e-3, atol=1e-4)
            if reason:
                row["result"] = f"output {k}: {reason}"
                return row
            k += 1
        row["result"] = "correct"
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    export_families.add_selection_arguments(parser)
    parser.add_argument("--configs", default="1rank,tp2,pp2")
    parser.add_argument("--dnnc", default=os.path.join(ROOT, "build", "bin",
                                                       "dnnc"))
    parser.add_argument("--dnnc-run", default=os.path.join(ROOT, "build",
                                                           "bin", "dnnc-run"))
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--json", help="also write the rows here")
    opts = parser.parse_args(argv)
    exporters = (export_families.EXPORTERS if opts.exporter == "both"
                 else (opts.exporter,))
    configs = [c for c in opts.configs.split(",") if c]
    rows, failed = [], 0
    print(f"| model | exporter | config | result | compile s | compile RSS MB "
          f"| run s |\n|---|---|---|---|---|---|---|", flush=True)
    for family in opts.only or export_families.FAMILIES:
        for exporter in exporters:
            folder = export_families.export(family, opts.size, exporter,
                                            opts.cache)
            for config in configs:
                if folder is None:
                    row = {"config": config, "result": "export failed"}
                else:
                    row = check(folder, config, opts)
                row.update(model=f"{family}-{opts.size}", exporter=exporter)
                rows.append(row)
                failed += row["result"] != "correct"
                print(f"| {row['model']} | {exporter} | {config} | "
                      f"{row['result']} | {row.get('compile_s', '')} | "
                      f"{row.get('compile_rss_mb', '')} | "
                      f"{row.get('run_s', '')} |", flush=True)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
