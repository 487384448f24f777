#!/usr/bin/env python3
"""Times the cpu data path of dnnc on MPI against Gloo, in one run.

The same binaries are launched two ways on this machine:

* `mpi`: `mpirun -np N` (Open MPI; on one host its shared-memory transport);
* `gloo`: N processes torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1,
  MASTER_PORT), whose collectives and stage transfers run on Gloo over TCP
  (docs/runtime.md, "Launching without MPI");
* with `--mpi-tcp`, also `mpi-tcp`: mpirun restricted to its TCP transport
  (`--mca btl tcp,self`), the like-for-like transport of Gloo.

Two measurements per rank count (`--ranks 2,4`):

* `dnnc-comm-bench` (built with dnnc-run) times `dnnc_rt_all_reduce` (f32
  sum) and `dnnc_rt_all_gather` (f32) at each of `--sizes` bytes per rank,
  as rank code calls them, and prints rank 0's mean per call;
* one end-to-end plan: bench/run_bench.py's MLP (4 x Gemm 1024x1024, batch
  64) compiled with `dnnc --parallel=tp=N`, run with
  `dnnc-run --warmup W --repeat R`; the outputs of every launcher are first
  compared with the mpi run's.

Every configuration runs `--rounds` times, the launchers interleaved; the
tables give the median of the rounds' means and the ratio gloo / mpi
(above 1: Gloo is slower). One BLAS thread per rank. Not a test: no speed
is asserted.

Usage:

    python3 bench/cpu_collectives.py [--ranks 2,4]
        [--sizes 4096,65536,1048576,16777216] [--rounds 3] [--mpi-tcp]
        [--dnnc build/bin/dnnc] [--dnnc-run build/bin/dnnc-run] [--json F]
"""

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402

ROOT = run_bench.ROOT
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
LAUNCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
               "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK",
               "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
               "SLURM_NTASKS", "SLURM_STEP_ID")
BENCH_RE = re.compile(r"^(\w+) ranks=(\d+) bytes=(\d+) iters=(\d+) "
                      r"mean_us=([0-9.]+) min_us=([0-9.]+)$", re.M)


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(launcher, ranks, cmd, timeout=600):
    """Runs `cmd` on `ranks` ranks with `launcher`; returns rank 0's stdout.
    Exits with the ranks' stderr when any rank fails."""
    env = dict(os.environ)
    for var in LAUNCH_VARS:
        env.pop(var, None)
    for var in THREAD_VARS:
        env[var] = "1"
    if launcher in ("mpi", "mpi-tcp"):
        flags = ["-np", str(ranks)]
        for var in THREAD_VARS:
            flags += ["-x", f"{var}=1"]
        if launcher == "mpi-tcp":
            flags += ["--mca", "btl", "tcp,self"]
        proc = subprocess.run(MPIRUN + flags + cmd, capture_output=True,
                              text=True, env=env, timeout=timeout)
        if proc.returncode != 0:
            sys.exit(f"error: {launcher} {' '.join(cmd[:2])}: exit code "
                     f"{proc.returncode}: {proc.stderr.strip()}")
        return proc.stdout
    port = str(free_port())
    procs = []
    for r in range(ranks):
        renv = dict(env, RANK=str(r), WORLD_SIZE=str(ranks),
                    LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(ranks),
                    MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True,
                                      env=renv))
    results = [p.communicate(timeout=timeout) for p in procs]
    failed = [(r, p.returncode, results[r][1].strip())
              for r, p in enumerate(procs) if p.returncode != 0]
    if failed:
        sys.exit(f"error: gloo {' '.join(cmd[:2])}: " +
                 "; ".join(f"rank {r}: exit code {c}: {e}"
                           for r, c, e in failed))
    return results[0][0]


def same_outputs(a, b):
    """The largest relative difference of the output_K.pb files of
    directories a and b (inf when they do not match in names or shapes)."""
    if sorted(os.listdir(a)) != sorted(os.listdir(b)):
        return float("inf")
    worst = 0.0
    for name in os.listdir(a):
        x = numpy_helper.to_array(onnx.load_tensor(os.path.join(a, name)))
        y = numpy_helper.to_array(onnx.load_tensor(os.path.join(b, name)))
        if x.shape != y.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(x))), 1e-30)
        worst = max(worst, float(np.max(np.abs(x - y))) / scale)
    return worst


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--sizes", default="4096,65536,1048576,16777216",
                        help="bytes per rank, comma-separated")
    parser.add_argument("--iters", type=int, default=200,
                        help="timed collective calls per size (fewer for "
                             "large sizes)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=50,
                        help="timed runs of the end-to-end plan")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--mpi-tcp", action="store_true",
                        help="also time mpirun over its TCP transport")
    parser.add_argument("--dnnc", default=os.path.join(ROOT, "build", "bin",
                                                       "dnnc"))
    parser.add_argument("--dnnc-run", default=os.path.join(ROOT, "build",
                                                           "bin", "dnnc-run"))
    parser.add_argument("--comm-bench", default=None,
                        help="dnnc-comm-bench (default: next to dnnc-run)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    comm_bench = args.comm_bench or os.path.join(
        os.path.dirname(args.dnnc_run), "dnnc-comm-bench")
    launchers = ["mpi", "gloo"] + (["mpi-tcp"] if args.mpi_tcp else [])
    ranks_list = [int(r) for r in args.ranks.split(",")]

    # Collectives: times[(launcher, op, ranks, bytes)] = [mean_us per round].
    times = {}
    for ranks in ranks_list:
        for _ in range(args.rounds):
            for launcher in launchers:
                out = launch(launcher, ranks,
                             [comm_bench, "--sizes", args.sizes, "--iters",
                              str(args.iters)])
                for m in BENCH_RE.finditer(out):
                    key = (launcher, m.group(1), ranks, int(m.group(3)))
                    times.setdefault(key, []).append(float(m.group(5)))

    # One plan end to end.
    plan_times = {}
    diffs = {}
    with tempfile.TemporaryDirectory(prefix="dnnc-cpu-coll-") as tmp:
        model, inputs = run_bench.make_mlp(tmp)
        for ranks in ranks_list:
            plan = os.path.join(tmp, f"mlp-tp{ranks}.bin")
            run_bench.run_checked([args.dnnc, model, "-o", plan,
                                   f"--parallel=tp={ranks}"])
            for rnd in range(args.rounds):
                for launcher in launchers:
                    outdir = os.path.join(tmp, f"out-{ranks}-{launcher}-{rnd}")
                    cmd = [args.dnnc_run, plan, "--warmup", str(args.warmup),
                           "--repeat", str(args.repeat), "--output-dir",
                           outdir]
                    for f in inputs:
                        cmd += ["--input", f]
                    text = launch(launcher, ranks, cmd)
                    match = run_bench.TIME_RE.search(text)
                    if not match:
                        sys.exit(f"error: no timing from {launcher}: {text}")
                    plan_times.setdefault((launcher, ranks), []).append(
                        float(match.group(1)))
                    ref = os.path.join(tmp, f"out-{ranks}-mpi-0")
                    diff = same_outputs(ref, outdir)
                    diffs[(launcher, ranks)] = max(
                        diffs.get((launcher, ranks), 0.0), diff)
                    if diff > 1e-5:
                        sys.exit(f"error: tp={ranks} outputs of {launcher} "
                                 f"differ from mpi's (relative {diff:g})")

    rows = []
    print("collectives: rank 0's mean per call in microseconds, median of "
          f"{args.rounds} rounds")
    header = f"{'op':10} {'ranks':>5} {'bytes':>9}"
    for launcher in launchers:
        header += f" {launcher + ' us':>12}"
    header += f" {'gloo/mpi':>9}"
    if args.mpi_tcp:
        header += f" {'gloo/mpi-tcp':>13}"
    print(header)
    for op in ("allreduce", "allgather"):
        for ranks in ranks_list:
            for size in [int(s) for s in args.sizes.split(",")]:
                med = {l: statistics.median(times[(l, op, ranks, size)])
                       for l in launchers}
                line = f"{op:10} {ranks:5} {size:9}"
                for launcher in launchers:
                    line += f" {med[launcher]:12.1f}"
                line += f" {med['gloo'] / med['mpi']:9.2f}"
                if args.mpi_tcp:
                    line += f" {med['gloo'] / med['mpi-tcp']:13.2f}"
                print(line)
                rows.append({"kind": "collective", "op": op, "ranks": ranks,
                             "bytes": size,
                             **{f"{l}_us": med[l] for l in launchers},
                             "gloo_over_mpi": med["gloo"] / med["mpi"]})
    print(f"\nend to end: mlp (4 x 1024x1024, batch 64), --parallel=tp=N, "
          f"mean ms per run, median of {args.rounds} rounds")
    header = f"{'ranks':>5}"
    for launcher in launchers:
        header += f" {launcher + ' ms':>12}"
    print(header + f" {'gloo/mpi':>9} {'max rel diff':>13}")
    for ranks in ranks_list:
        med = {l: statistics.median(plan_times[(l, ranks)])
               for l in launchers}
        line = f"{ranks:5}"
        for launcher in launchers:
            line += f" {med[launcher]:12.3f}"
        worst = max(diffs[(l, ranks)] for l in launchers)
        print(line + f" {med['gloo'] / med['mpi']:9.2f} {worst:13.2g}")
        rows.append({"kind": "plan", "model": "mlp", "ranks": ranks,
                     **{f"{l}_ms": med[l] for l in launchers},
                     "gloo_over_mpi": med["gloo"] / med["mpi"],
                     "max_rel_diff": worst})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
