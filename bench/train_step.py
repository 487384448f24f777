#!/usr/bin/env python3
"""Training step time: dnnc against PyTorch on the same CPU threads.

For each model (the GPT-2-style and MLP models of
test/onnx/train_vs_torch.py at benchmark size), one run:

* dnnc: `dnnc --mode=train` (AdamW, clipping) with `--simulate`, then
  `dnnc-run --train --steps W+R`; the step time is the median of the R
  steps after W warm-up steps, as dnnc-run prints them (each step: the
  batch upload, the step's code, the parameter swap).
* PyTorch (eager, float32): the same model from the same weights, the same
  batches, `zero_grad`, forward, loss, backward, `clip_grad_norm_`,
  `AdamW.step()`, timed the same way with `time.perf_counter`.
* The ratio dnnc / PyTorch (target: at most 1.5), and the `--simulate`
  estimate against dnnc's measured step (target: within 20%).

Threads: `--threads N` sets OMP_NUM_THREADS / OPENBLAS_NUM_THREADS for
dnnc-run and `torch.set_num_threads(N)` for PyTorch. It is a measurement:
nothing is asserted.

The simulated step is priced on `--cluster` (default cpu-local, whose
core and memory rates are assumptions; `bench/calibrate_cpu.py` measures
this machine's into a cluster file).

With `--ranks N --parallel SPEC [--dnnc-flag FLAG]...` the dnnc plan is
compiled with `--parallel=SPEC` and run under `mpirun -np N` (each rank
`--threads` threads); PyTorch stays one process with `--threads` threads,
so the ratio compares the parallel plan with one PyTorch process, and the
simulated step is the pipelined plan's.

Usage: python3 bench/train_step.py [--models gpt,mlp] [--threads 1]
[--steps 20] [--warmup 5] [--cluster FILE] [--json FILE]
[--ranks N --parallel SPEC [--dnnc-flag FLAG]...] [--keep DIR]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "onnx"))

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("torch is not installed")
    sys.exit(1)

import train_vs_torch as models  # noqa: E402


class BigMlp(nn.Module):
    def __init__(self, width=1024, depth=4, classes=10):
        super().__init__()
        self.layers = nn.ModuleList(
            [nn.Linear(width, width) for _ in range(depth)])
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        for layer in self.layers:
            x = F.relu(layer(x))
        return self.head(x)


def configs():
    """(name, model, input names, data maker, dnnc loss flags, loss fn)."""
    def ce(out, labels):
        return F.cross_entropy(out.reshape(-1, out.shape[-1]),
                               labels.reshape(-1))

    yield ("gpt", models.Gpt(vocab=1000, seq=64, dim=256, heads=4, layers=4),
           ["ids", "labels"], 8,
           lambda r, n: {"ids": r.integers(0, 1000, (n, 64)),
                         "labels": r.integers(0, 1000, (n, 64))},
           ["--loss-output=loss", "--freeze=mask"],
           lambda m, d: m(d["ids"], d["labels"]))
    yield ("mlp", BigMlp(), ["x"], 64,
           lambda r, n: {"x": r.standard_normal((n, 1024))
                         .astype(np.float32),
                         "labels": r.integers(0, 10, (n,))},
           ["--loss=cross-entropy:logits,labels"],
           lambda m, d: ce(m(d["x"]), d["labels"]))


def median_ms(samples):
    return statistics.median(samples) * 1e3


def bench(name, model, input_names, batch, make_data, loss_flags, loss_fn,
          opts, work):
    steps = opts.warmup + opts.steps
    data = make_data(np.random.default_rng(0), batch * steps)
    example = {k: torch.from_numpy(v[:batch]) for k, v in data.items()}
    path, data_dir = models.export_for_training(model, name, input_names,
                                                example, data, work)

    plan = os.path.join(work, name + ".bin")
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(opts.threads)
    start = time.perf_counter()
    # One rank unless --parallel: a cluster file of several devices would
    # plan over all of them.
    cluster = [f"--cluster={opts.cluster}"] if opts.cluster else []
    if opts.parallel:
        cluster += [f"--parallel={opts.parallel}"] + opts.dnnc_flag
    elif opts.cluster:
        cluster.append("--mesh=1")
    proc = subprocess.run([opts.dnnc, path, "--mode=train", "-o", plan,
                           "--simulate", "--clip-grad-norm=1.0"] + loss_flags +
                          cluster, capture_output=True, text=True, env=env)
    compile_s = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip()[:500])
    simulated_ms = None
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("simulated step:"):
            simulated_ms = float(line.split()[2])
            if line.split()[3] == "s":
                simulated_ms *= 1e3
    launch = []
    if opts.ranks > 1:
        launch = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                  str(opts.ranks)]
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            launch += ["-x", f"{var}={opts.threads}"]
    proc = subprocess.run(launch + [opts.dnnc_run, plan, "--train",
                                    "--steps", str(steps), "--data",
                                    data_dir],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip()[:500])
    ours = [float(line.split()[5]) / 1e3 for line in proc.stdout.splitlines()
            if line.startswith("step ")][opts.warmup:]

    torch.set_num_threads(opts.threads)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    theirs = []
    for s in range(steps):
        part = {k: torch.from_numpy(v[s * batch:(s + 1) * batch])
                for k, v in data.items()}
        begin = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model, part)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if s >= opts.warmup:
            theirs.append(time.perf_counter() - begin)
    params = sum(p.numel() for p in model.parameters())
    row = {"model": name, "params": params, "batch": batch,
           "threads": opts.threads, "ranks": opts.ranks,
           "parallel": opts.parallel or "1 rank",
           "compile_s": round(compile_s, 2),
           "dnnc_ms": round(median_ms(ours), 3),
           "torch_ms": round(median_ms(theirs), 3),
           "simulated_ms": simulated_ms}
    row["ratio"] = round(row["dnnc_ms"] / row["torch_ms"], 3)
    if simulated_ms:
        row["simulated_vs_measured"] = round(simulated_ms / row["dnnc_ms"], 3)
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dnnc", default=os.path.join(HERE, "..", "build",
                                                       "bin", "dnnc"))
    parser.add_argument("--dnnc-run", default=os.path.join(
        HERE, "..", "build", "bin", "dnnc-run"))
    parser.add_argument("--models", default="gpt,mlp")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", default="")
    parser.add_argument("--ranks", type=int, default=1,
                        help="ranks of the dnnc run (mpirun), with "
                        "--parallel")
    parser.add_argument("--parallel", default="",
                        help="dnnc --parallel for the dnnc plan (e.g. "
                        "pp=2); PyTorch stays one process")
    parser.add_argument("--dnnc-flag", action="append", default=[],
                        help="a flag for the dnnc compile with --parallel "
                        "(e.g. --microbatches=4)")
    parser.add_argument("--cluster", default="",
                        help="the cluster --simulate prices on (default "
                        "cpu-local; bench/calibrate_cpu.py measures one)")
    parser.add_argument("--keep", default="",
                        help="keep the exported models, data and plans in "
                        "this folder (default: a temporary one)")
    opts = parser.parse_args()
    wanted = set(opts.models.split(","))
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        work = opts.keep or temporary
        os.makedirs(work, exist_ok=True)
        for config in configs():
            if config[0] in wanted:
                torch.manual_seed(0)
                rows.append(bench(*config, opts, work))
    print(f"{'model':6} {'params':>9} {'batch':>5} {'dnnc ms':>9} "
          f"{'torch ms':>9} {'ratio':>6} {'simulated':>10} {'sim/meas':>8}")
    for r in rows:
        sim = r["simulated_ms"]
        print(f"{r['model']:6} {r['params']:>9} {r['batch']:>5} "
              f"{r['dnnc_ms']:>9.3f} {r['torch_ms']:>9.3f} {r['ratio']:>6.2f} "
              f"{(f'{sim:.3f}' if sim else '-'):>10} "
              f"{r.get('simulated_vs_measured', float('nan')):>8.2f}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
