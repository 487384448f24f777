#!/usr/bin/env python3
"""Benchmarks dnnc's planner (`dnnc --plan-only`) on GPT models.

Subcommands (see bench/README.md, "Planner benchmarks"):

* `scaling`: one GPT shape (default hidden 12288, 96 heads, seq 2048, vocab
  51200, f16) at several depths (default 24, 48, 96, 192 layers), each planned
  with `dnnc MODEL --plan-only --mode=train --batch=B --mesh=1024
  --cluster=a100-80g-x128nodes --report-json R`. Prints per model the layers,
  the ONNX graph nodes, the report's `search_time_s`, the wall time of the
  dnnc process, the chosen degrees, microbatches and schedule, the estimated
  step time, and the search time per layer (and its ratio to the first
  model's): if the search is linear in depth, time per layer stays roughly
  constant.
* `megatron`: the weak-scaling configurations of Narayanan et al., SC'21,
  Table 1 (TABLE_1 below). For each row, the model is planned twice on
  `a100-80g-x<GPUs/8>nodes` with `--mesh=<GPUs> --mode=train --plan-only
  --batch=<global batch>`: (a) the automatic search; (b) the published
  degrees forced with `--parallel=dp=D,tp=T,pp=P`. Each estimated step time
  is turned into TFLOP/s per GPU with the paper's FLOP count (equation 3,
  which includes the activation-recomputation forward pass):

      F = 96 B s l h^2 (1 + s / (6 h) + V / (16 l h)),
      TFLOP/s per GPU = F / (step_time_s * GPUs) / 1e12,

  and compared with the paper's measured TFLOP/s per GPU. Rows above 145.6B
  parameters are marked informational (`*`) and left out of the summary's
  main counts.

Models come from python/gen_gpt.py (`--weights none`: no weight is written,
the model can only be planned) and are cached in `--workdir`/models: a model
is generated only when its file is missing. A dnnc run that fails is reported
(its stderr is printed) and the next one runs; the exit status is 0 unless
the command line is wrong or dnnc is missing.

Usage:

    python3 bench/planner.py scaling [--layers 24,48,96,192] [--batch 1536]
        [--mesh 1024] [--cluster a100-80g-x128nodes] [--mode train]
    python3 bench/planner.py megatron [--rows all|1.7B,18B|1-7] [--mode train]
    common: [--dnnc build/bin/dnnc] [--workdir build/bench-planner]
        [--graph generator|fused|symbolic|fused-f32]
        [--json OUT] [--timeout 1800] [--gen python/gen_gpt.py]

The common options may come before or after the subcommand.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Narayanan, Shoeybi, Casper, LeGresley, Patwary, Korthikanti, Vainbrand,
# Kashinkunti, Bernauer, Catanzaro, Phanishayee, Zaharia: "Efficient
# Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
# SC'21, https://arxiv.org/abs/2104.04473, Table 1 ("Weak-scaling throughput
# for GPT models ranging from 1 billion to 1 trillion parameters").
# Sequence length 2048, vocabulary 51,200, mixed precision, activation
# recomputation; DGX A100 80 GB nodes (8 GPUs, NVLink/NVSwitch, 8 x 200 Gb/s
# HDR InfiniBand); A100 16-bit peak 312 TFLOP/s.
# The microbatch size (mbs) and the layers per virtual pipeline stage (vls,
# interleaved schedule; None: not interleaved) are not columns of Table 1:
# they come from the authors' reproduction script examples/sc21/
# run_table_1.sh in https://github.com/NVIDIA/Megatron-LM (2021-08).
TABLE_1_SOURCE = ("Narayanan et al., SC'21, arXiv:2104.04473, Table 1; "
                  "microbatch sizes and virtual stages from NVIDIA/Megatron-LM "
                  "examples/sc21/run_table_1.sh")
TABLE_1 = [
    # label, params (B), heads, hidden, layers, tp, pp, GPUs, batch,
    # TFLOP/s per GPU, % of peak, aggregate PFLOP/s, mbs, vls
    ("1.7B", 1.7, 24, 2304, 24, 1, 1, 32, 512, 137, 44, 4.4, 16, None),
    ("3.6B", 3.6, 32, 3072, 30, 2, 1, 64, 512, 138, 44, 8.8, 16, None),
    ("7.5B", 7.5, 32, 4096, 36, 4, 1, 128, 512, 142, 46, 18.2, 16, None),
    ("18B", 18.4, 48, 6144, 40, 8, 1, 256, 1024, 135, 43, 34.6, 8, None),
    ("39B", 39.1, 64, 8192, 48, 8, 2, 512, 1536, 138, 44, 70.8, 4, None),
    ("76B", 76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140, 45, 143.8, 2, 5),
    ("145B", 145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148, 47, 227.1, 2, 5),
    ("310B", 310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155, 50, 297.4, 1, 3),
    ("530B", 529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163, 52, 410.2, 1, 1),
    ("1T", 1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163, 52, 502.0, 1,
     None),
]
TABLE_1_SEQ, TABLE_1_VOCAB = 2048, 51200
# Rows above this many billion parameters are informational.
INFORMATIONAL_ABOVE_B = 145.6
# "published estimate within 15% of paper" (issue 18's bound).
TOLERANCE = 0.15


def megatron_flops(batch, seq, layers, hidden, vocab):
    """FLOPs of one training iteration, paper's equation (3)."""
    return (96.0 * batch * seq * layers * hidden * hidden *
            (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden)))


# ---------------------------------------------------------------------------
# Models

# The graph shapes --graph picks: gen_gpt.py's own (separate q, k and v
# projections, tanh GELU, float16, a fixed batch), the shape real exports
# have (one fused QKV projection then Split, erf GELU), the generator's
# with a symbolic batch, and the fused shape exported in float32 (what
# torch.onnx.export writes) planned with --precision=bf16.
GRAPH_FLAGS = {"generator": [], "fused": ["--fused-qkv", "--gelu", "erf"],
               "symbolic": ["--symbolic-batch"],
               "fused-f32": ["--fused-qkv", "--gelu", "erf"]}
# The dtype of each graph shape and the dnnc flags it is planned with.
GRAPH_DTYPE = {"fused-f32": "float32"}
GRAPH_DNNC_FLAGS = {"fused-f32": ["--precision=bf16"]}


def model_path(workdir, layers, hidden, heads, seq, vocab, batch, dtype,
               graph="generator"):
    name = (f"gpt_l{layers}_h{hidden}_a{heads}_s{seq}_v{vocab}_b{batch}_"
            f"{'f16' if dtype == 'float16' else 'f32'}"
            f"{'' if graph == 'generator' else '_' + graph}.onnx")
    return os.path.join(workdir, "models", name)


def ensure_model(args, layers, hidden, heads, seq, vocab, batch,
                 dtype=None):
    """Returns (path, seconds spent generating or None when cached, error)."""
    dtype = dtype or GRAPH_DTYPE.get(args.graph, "float16")
    path = model_path(args.workdir, layers, hidden, heads, seq, vocab, batch,
                      dtype, args.graph)
    if os.path.exists(path):
        return path, None, None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # Generate into a scratch directory under the final name (the model
    # records its external-data file by name), then move it in: an
    # interrupted generation leaves no model behind.
    scratch = tempfile.mkdtemp(prefix="gen-", dir=os.path.dirname(path))
    tmp = os.path.join(scratch, os.path.basename(path))
    cmd = [sys.executable, args.gen, "--layers", str(layers),
           "--hidden", str(hidden), "--heads", str(heads), "--seq", str(seq),
           "--vocab", str(vocab), "--batch", str(batch), "--dtype", dtype,
           "--weights", "none", "-o", tmp] + GRAPH_FLAGS[args.graph]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not os.path.exists(tmp):
            return None, None, ("gen_gpt.py failed (exit %d): %s" % (
                proc.returncode, (proc.stderr or proc.stdout).strip()))
        os.replace(tmp, path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return path, time.perf_counter() - start, None


def count_nodes(path):
    """ONNX nodes of the model's graph (None if onnx is missing)."""
    try:
        import onnx
    except ImportError:
        return None
    try:
        return len(onnx.load(path, load_external_data=False).graph.node)
    except Exception:  # a model dnnc may still read; the count is optional
        return None


# ---------------------------------------------------------------------------
# dnnc runs and their reports

def run_dnnc(args, model, flags, report):
    """Runs `dnnc MODEL --plan-only FLAGS --report-json REPORT`.

    Returns a dict: ok, returncode, wall_s, stderr, command, report (the
    parsed JSON or None), error (a one-line reason when not ok)."""
    if os.path.exists(report):
        os.remove(report)  # never read a stale report
    cmd = [args.dnnc, model, "--plan-only"] + flags + [
        "--report-json", report]
    result = {"command": " ".join(cmd), "ok": False, "returncode": None,
              "wall_s": None, "stderr": "", "report": None, "error": None}
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired as e:
        result["wall_s"] = time.perf_counter() - start
        result["error"] = f"timed out after {args.timeout} s"
        err = e.stderr or b""
        result["stderr"] = (err.decode(errors="replace")
                            if isinstance(err, bytes) else err)
        return result
    except OSError as e:
        result["error"] = f"cannot run {args.dnnc}: {e}"
        return result
    result["wall_s"] = time.perf_counter() - start
    result["returncode"] = proc.returncode
    result["stderr"] = proc.stderr
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        result["error"] = (lines[-1] if lines else
                           f"dnnc exited with status {proc.returncode}")
        return result
    try:
        with open(report) as f:
            result["report"] = json.load(f)
    except (OSError, ValueError) as e:
        result["error"] = f"no readable report ({e})"
        return result
    result["ok"] = True
    return result


def as_float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def as_int(value):
    f = as_float(value)
    return int(f) if f is not None and f == int(f) else None


def plan_summary(report):
    """The fields this script reads from a report, tolerant of missing or
    oddly typed ones (None when absent)."""
    report = report if isinstance(report, dict) else {}
    degrees = report.get("degrees")
    degrees = degrees if isinstance(degrees, dict) else {}
    schedule = report.get("schedule")
    return {
        "dp": as_int(degrees.get("dp")),
        "tp": as_int(degrees.get("tp")),
        "pp": as_int(degrees.get("pp")),
        "microbatches": as_int(report.get("microbatches")),
        "schedule": None if schedule is None else str(schedule),
        "step_time_s": as_float(report.get("step_time_s")),
        "search_time_s": as_float(report.get("search_time_s")),
        "peak_memory_bytes": as_float(report.get("peak_memory_bytes")),
        "mfu": as_float(report.get("mfu")),
    }


def degrees_text(plan):
    if plan is None or all(plan[k] is None for k in ("dp", "tp", "pp")):
        return "-"
    return ",".join("%s=%s" % (k, "?" if plan[k] is None else plan[k])
                    for k in ("dp", "tp", "pp"))


def fmt(value, spec, unit=""):
    return "-" if value is None else format(value, spec) + unit


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"


def gib(nbytes):
    return None if nbytes is None else nbytes / 2**30


def print_table(headers, rows):
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w)
                                   for c, w in zip(cells, widths)).rstrip()
    print(line(headers))
    print(line(["-" * w for w in widths]))
    for row in rows:
        print(line(row))


def report_failure(what, run):
    """Prints why a run failed: dnnc's stderr when it wrote one."""
    stderr = (run.get("stderr") or "").rstrip()
    status = ("" if run.get("returncode") is None else
              f" (exit {run['returncode']})")
    if not stderr or run.get("returncode") in (None, 0):
        print(f"  {what}: FAILED{status}: {run['error']}", flush=True)
    else:
        print(f"  {what}: FAILED{status}, stderr:", flush=True)
    for l in stderr.splitlines():
        print(f"    {l}")


def write_json(path, data):
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    print(f"\nwrote {path}")


# ---------------------------------------------------------------------------
# scaling

def cmd_scaling(args):
    layers_list = parse_int_list(args.layers, "--layers")
    results = []
    print(f"scaling: hidden {args.hidden}, heads {args.heads}, seq {args.seq},"
          f" vocab {args.vocab}, f16, batch {args.batch}; dnnc --mode="
          f"{args.mode} --mesh={args.mesh} --cluster={args.cluster}",
          flush=True)
    for layers in layers_list:
        entry = {"layers": layers}
        results.append(entry)
        path, gen_s, err = ensure_model(args, layers, args.hidden, args.heads,
                                        args.seq, args.vocab, args.batch)
        if err:
            entry["error"] = err
            print(f"  {layers} layers: {err}", flush=True)
            continue
        entry["model"] = path
        entry["generate_s"] = gen_s
        entry["nodes"] = count_nodes(path)
        report = os.path.join(args.workdir, "reports",
                              f"scaling_l{layers}.json")
        os.makedirs(os.path.dirname(report), exist_ok=True)
        flags = [f"--mode={args.mode}", f"--batch={args.batch}",
                 f"--mesh={args.mesh}", f"--cluster={args.cluster}"
                 ] + GRAPH_DNNC_FLAGS.get(args.graph, [])
        run = run_dnnc(args, path, flags, report)
        entry["run"] = run
        entry["plan"] = plan_summary(run["report"]) if run["ok"] else None
        if not run["ok"]:
            report_failure(f"{layers} layers", run)
        else:
            p = entry["plan"]
            print(f"  {layers} layers: {degrees_text(p)}, step "
                  f"{fmt_time(p['step_time_s'])}, search "
                  f"{fmt_time(p['search_time_s'])}, wall "
                  f"{fmt_time(run['wall_s'])}", flush=True)

    base = None
    rows = []
    for e in results:
        run, plan = e.get("run"), e.get("plan")
        search = plan["search_time_s"] if plan else None
        wall = run["wall_s"] if run else None  # failed runs too
        e["search_per_layer_s"] = (search / e["layers"]
                                   if search is not None else None)
        e["wall_per_layer_s"] = (wall / e["layers"]
                                 if wall is not None and plan else None)
        if base is None and e["search_per_layer_s"]:
            base = e["search_per_layer_s"]
        e["search_per_layer_ratio"] = (e["search_per_layer_s"] / base
                                       if base and e["search_per_layer_s"]
                                       is not None else None)
        rows.append([
            e["layers"], fmt(e.get("nodes"), "d"),
            fmt_time(search), fmt_time(wall),
            degrees_text(plan) if plan else "FAILED",
            fmt(plan["microbatches"], "d") if plan else "-",
            (plan["schedule"] or "-") if plan else "-",
            fmt_time(plan["step_time_s"]) if plan else "-",
            fmt_time(e["search_per_layer_s"]),
            fmt_time(e["wall_per_layer_s"]),
            fmt(e["search_per_layer_ratio"], ".2f"),
        ])
    print()
    print_table(["layers", "nodes", "search", "wall", "degrees", "mb",
                 "schedule", "est. step", "search/layer", "wall/layer",
                 "vs first"], rows)
    per_layer = [e["search_per_layer_s"] for e in results
                 if e.get("search_per_layer_s")]
    summary = {"runs": len(results),
               "ok": sum(1 for e in results if e.get("plan"))}
    if len(per_layer) >= 2:
        summary["search_per_layer_max_over_min"] = (max(per_layer) /
                                                    min(per_layer))
        print(f"\nsearch time per layer: {fmt_time(min(per_layer))} .. "
              f"{fmt_time(max(per_layer))} (max/min "
              f"{summary['search_per_layer_max_over_min']:.2f}; about 1 when "
              f"the search is linear in depth)")
    print(f"{summary['ok']}/{summary['runs']} runs produced a plan")
    write_json(args.json, {
        "subcommand": "scaling", "dnnc": args.dnnc,
        "config": {"hidden": args.hidden, "heads": args.heads,
                   "seq": args.seq, "vocab": args.vocab, "batch": args.batch,
                   "dtype": "float16", "mesh": args.mesh,
                   "cluster": args.cluster, "mode": args.mode},
        "results": results, "summary": summary})
    return 0


# ---------------------------------------------------------------------------
# megatron

def select_rows(spec):
    if spec in (None, "", "all"):
        return list(range(len(TABLE_1)))
    labels = {r[0].lower(): i for i, r in enumerate(TABLE_1)}
    chosen = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if part.lower() in labels:
            chosen.append(labels[part.lower()])
            continue
        bounds = part.split("-")
        try:
            lo, hi = int(bounds[0]), int(bounds[-1])
        except ValueError:
            sys.exit(f"error: --rows: '{part}' is not a row label "
                     f"({', '.join(r[0] for r in TABLE_1)}), a 1-based "
                     f"index or a range such as 1-7")
        if len(bounds) > 2 or not 1 <= lo <= hi <= len(TABLE_1):
            sys.exit(f"error: --rows: '{part}' is out of 1..{len(TABLE_1)}")
        chosen.extend(range(lo - 1, hi))
    return sorted(set(chosen))


def cmd_megatron(args):
    results = []
    selected = select_rows(args.rows)
    print(f"megatron: {TABLE_1_SOURCE}; seq {TABLE_1_SEQ}, vocab "
          f"{TABLE_1_VOCAB}, f16; dnnc --mode={args.mode}", flush=True)
    if args.mode != "train":
        print("note: --mode=infer prices one forward pass; its TFLOP/s (from "
              "the paper's training FLOP count) are not comparable with the "
              "paper's", flush=True)
    for i in selected:
        (label, params_b, heads, hidden, layers, tp, pp, gpus, batch,
         tflops, pct, pflops, mbs, vls) = TABLE_1[i]
        dp = gpus // (tp * pp)
        flops = megatron_flops(batch, TABLE_1_SEQ, layers, hidden,
                               TABLE_1_VOCAB)
        entry = {
            "row": i + 1, "label": label,
            "informational": params_b > INFORMATIONAL_ABOVE_B,
            "paper": {"params_b": params_b, "heads": heads, "hidden": hidden,
                      "layers": layers, "tp": tp, "pp": pp, "dp": dp,
                      "gpus": gpus, "batch": batch, "tflops_per_gpu": tflops,
                      "percent_of_peak": pct, "aggregate_pflops": pflops,
                      "microbatch_size": mbs,
                      "microbatches": batch // (dp * mbs),
                      "layers_per_virtual_stage": vls,
                      "step_time_s": flops / (tflops * 1e12 * gpus)},
            "flops_per_step": flops,
        }
        results.append(entry)
        cluster = f"a100-80g-x{gpus // 8}nodes"
        entry["cluster"] = cluster
        paper_schedule = ("no pipeline" if pp == 1 else
                          f"interleaved, {layers // pp // vls} chunks per stage"
                          if vls else "1F1B, not interleaved")
        print(f"row {i + 1} ({label}): {layers} layers, hidden {hidden}, "
              f"{heads} heads, batch {batch}, {gpus} GPUs on {cluster}; "
              f"paper: tp={tp} pp={pp} dp={dp}, microbatch size {mbs} "
              f"({entry['paper']['microbatches']} per replica), "
              f"{paper_schedule}", flush=True)
        path, gen_s, err = ensure_model(args, layers, hidden, heads,
                                        TABLE_1_SEQ, TABLE_1_VOCAB, batch)
        if err:
            entry["error"] = err
            print(f"  {err}", flush=True)
            continue
        entry["model"] = path
        entry["generate_s"] = gen_s
        common = [f"--mode={args.mode}", f"--batch={batch}",
                  f"--mesh={gpus}", f"--cluster={cluster}"
                  ] + GRAPH_DNNC_FLAGS.get(args.graph, [])
        os.makedirs(os.path.join(args.workdir, "reports"), exist_ok=True)
        # The published configuration as run: its degrees, micro-batch
        # size, schedule and activation recomputation (every row of Table 1
        # recomputes, and the paper's FLOP count includes it).
        published = [f"--parallel=dp={dp},tp={tp},pp={pp}"]
        if args.mode == "train":
            published += [f"--micro-batch-size={mbs}",
                          "--recompute=full"]
            if vls:
                published.append(
                    f"--schedule=interleaved:{layers // pp // vls}")
            elif pp > 1:
                published.append("--schedule=1f1b")
        for kind, extra in (("published", published), ("auto", [])):
            report = os.path.join(args.workdir, "reports",
                                  f"megatron_{label}_{kind}.json")
            run = run_dnnc(args, path, common + extra, report)
            plan = plan_summary(run["report"]) if run["ok"] else None
            step = plan["step_time_s"] if plan else None
            entry[kind] = {
                "run": run, "plan": plan,
                "tflops_per_gpu": (flops / (step * gpus) / 1e12
                                   if step else None)}
            if not run["ok"]:
                report_failure(kind, run)
            else:
                print(f"  {kind}: {degrees_text(plan)}, step "
                      f"{fmt_time(step)}, "
                      f"{fmt(entry[kind]['tflops_per_gpu'], '.1f')} TFLOP/s"
                      f" per GPU, wall {fmt_time(run['wall_s'])}",
                      flush=True)
        pub = entry["published"]["tflops_per_gpu"]
        entry["published"]["relative_error"] = (
            (pub - tflops) / tflops if pub is not None else None)
        pub_step = (entry["published"]["plan"] or {}).get("step_time_s")
        auto_step = (entry["auto"]["plan"] or {}).get("step_time_s")
        entry["auto_over_published_step"] = (
            auto_step / pub_step if auto_step and pub_step else None)

    rows = []
    for e in results:
        p = e["paper"]
        pub = e.get("published") or {}
        auto = e.get("auto") or {}
        pplan, aplan = pub.get("plan"), auto.get("plan")
        rows.append([
            e["label"] + ("*" if e["informational"] else ""),
            f"{p['tp']},{p['pp']},{p['dp']}",
            p["tflops_per_gpu"],
            fmt(pub.get("tflops_per_gpu"), ".1f") if pplan else "FAILED",
            fmt(pub.get("relative_error"), "+.0%"),
            fmt_time(p["step_time_s"]),
            fmt_time(pplan["step_time_s"]) if pplan else "-",
            degrees_text(aplan) if aplan else "FAILED",
            fmt(aplan["microbatches"], "d") if aplan else "-",
            (aplan["schedule"] or "-") if aplan else "-",
            fmt_time(aplan["step_time_s"]) if aplan else "-",
            fmt(auto.get("tflops_per_gpu"), ".1f"),
            fmt(e.get("auto_over_published_step"), ".3f"),
            fmt(gib(pplan["peak_memory_bytes"]) if pplan else None, ".1f"),
            fmt(gib(aplan["peak_memory_bytes"]) if aplan else None, ".1f"),
        ])
    print()
    print_table(["row", "paper tp,pp,dp", "paper TF/s", "pub. TF/s",
                 "err", "paper step", "pub. step", "auto degrees", "mb", "schedule",
                 "auto step", "auto TF/s", "auto/pub", "pub. GiB",
                 "auto GiB"], rows)
    print("TF/s: TFLOP/s per GPU from the paper's FLOP count; pub.: dnnc's "
          "estimate of the published degrees; err: vs the paper's measured "
          "TFLOP/s; paper step: the paper's FLOP count / (paper TF/s x "
          "GPUs); GiB: peak memory per device; *: informational row")

    def count(rows_, test):
        known = [e for e in rows_ if test(e) is not None]
        return sum(1 for e in known if test(e)), len(known)

    def auto_ok(e):
        r = e.get("auto_over_published_step")
        return None if r is None else r <= 1 + 1e-9

    def pub_ok(e):
        r = (e.get("published") or {}).get("relative_error")
        return None if r is None else abs(r) <= TOLERANCE

    def pub_fits(e):
        # A published configuration that does not fit fails to plan ("no
        # plan fits in memory"): fitting is planning.
        pub = e.get("published") or {}
        return None if "run" not in pub else pub.get("plan") is not None

    core = [e for e in results if not e["informational"]]
    info = [e for e in results if e["informational"]]
    summary = {}
    for name, test in (("auto_step_le_published_step", auto_ok),
                       ("published_within_15_percent", pub_ok),
                       ("published_fits", pub_fits)):
        ok, known = count(core, test)
        iok, iknown = count(info, test)
        summary[name] = {"core": ok, "core_known": known,
                         "core_rows": len(core), "informational": iok,
                         "informational_known": iknown,
                         "informational_rows": len(info)}
    a, w, f = (summary["auto_step_le_published_step"],
               summary["published_within_15_percent"],
               summary["published_fits"])
    print(f"\nsummary: auto step <= published step in {a['core']}/"
          f"{a['core_rows']} rows ({a['core_known']} with both plans); "
          f"published estimate within 15% of paper in {w['core']}/"
          f"{w['core_rows']} rows ({w['core_known']} estimated); published "
          f"configuration fits in {f['core']}/{f['core_rows']} rows; "
          f"informational rows: {a['informational']}/{a['informational_rows']}"
          f", {w['informational']}/{w['informational_rows']} and "
          f"{f['informational']}/{f['informational_rows']}")
    write_json(args.json, {
        "subcommand": "megatron", "dnnc": args.dnnc, "mode": args.mode,
        "source": TABLE_1_SOURCE, "seq": TABLE_1_SEQ,
        "vocab": TABLE_1_VOCAB, "results": results, "summary": summary})
    return 0


# ---------------------------------------------------------------------------

def parse_int_list(text, flag):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        sys.exit(f"error: {flag}: expected integers separated by commas")
    if not values or min(values) < 1:
        sys.exit(f"error: {flag}: expected positive integers")
    return values


def add_common(parser, suppress):
    """The options every subcommand takes. On the subparsers their default
    is SUPPRESS, so a value given before the subcommand is kept."""
    d = (lambda v: argparse.SUPPRESS) if suppress else (lambda v: v)
    parser.add_argument("--dnnc", default=d(os.path.join(ROOT, "build", "bin",
                                                         "dnnc")),
                        help="the dnnc binary (default build/bin/dnnc)")
    parser.add_argument("--workdir",
                        default=d(os.path.join(ROOT, "build",
                                               "bench-planner")),
                        help="models (cached) and reports go here (default "
                             "build/bench-planner)")
    parser.add_argument("--json", default=d(None), metavar="OUT",
                        help="write machine-readable results to OUT")
    parser.add_argument("--timeout", type=float, default=d(1800.0),
                        help="seconds per dnnc run (default 1800)")
    parser.add_argument("--graph", choices=sorted(GRAPH_FLAGS),
                        default=d("generator"),
                        help="generator: separate q, k, v projections and "
                             "tanh GELU, float16, fixed batch; fused: one QKV "
                             "projection then Split and erf GELU, as exports "
                             "write them; symbolic: the generator's with a "
                             "symbolic batch; fused-f32: fused in float32, "
                             "planned with --precision=bf16 (default "
                             "generator)")
    parser.add_argument("--gen", default=d(os.path.join(ROOT, "python",
                                                        "gen_gpt.py")),
                        help="the model generator (default "
                             "python/gen_gpt.py)")


def main():
    parser = argparse.ArgumentParser(
        description="Benchmark dnnc's planner on GPT models.",
        epilog="See the module docstring and bench/README.md.")
    add_common(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", required=True)

    sc = sub.add_parser("scaling", help="search time against model depth")
    add_common(sc, suppress=True)
    sc.add_argument("--layers", default="24,48,96,192",
                    help="depths, comma-separated (default 24,48,96,192)")
    sc.add_argument("--hidden", type=int, default=12288)
    sc.add_argument("--heads", type=int, default=96)
    sc.add_argument("--seq", type=int, default=2048)
    sc.add_argument("--vocab", type=int, default=51200)
    sc.add_argument("--batch", type=int, default=1536)
    sc.add_argument("--mesh", type=int, default=1024)
    sc.add_argument("--cluster", default="a100-80g-x128nodes")
    sc.add_argument("--mode", choices=["train", "infer"], default="train")

    mg = sub.add_parser("megatron",
                        help="Narayanan et al. SC'21 Table 1: auto plans "
                             "and the published degrees")
    add_common(mg, suppress=True)
    mg.add_argument("--rows", default="all",
                    help="rows: all, labels (1.7B,18B), 1-based indices or "
                         "ranges (1-7); default all")
    mg.add_argument("--mode", choices=["train", "infer"], default="train",
                    help="dnnc --mode (the paper's numbers are training)")

    args = parser.parse_args()
    args.dnnc = os.path.abspath(args.dnnc)
    args.workdir = os.path.abspath(args.workdir)
    if not (os.path.isfile(args.dnnc) and os.access(args.dnnc, os.X_OK)):
        sys.exit(f"error: --dnnc: {args.dnnc} is not an executable (build it "
                 f"with `bash scripts/build.sh`)")
    if not os.path.isfile(args.gen):
        sys.exit(f"error: --gen: {args.gen} not found")
    os.makedirs(args.workdir, exist_ok=True)
    if args.command == "scaling":
        return cmd_scaling(args)
    return cmd_megatron(args)


if __name__ == "__main__":
    sys.exit(main())
