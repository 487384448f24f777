#!/usr/bin/env python3
"""Runs ONNX backend-test models through dnnc (the conformance harness).

For each entry of LIST_FILE (a path relative to the test data directory, such
as `node/test_relu`; blank lines and `#` comments are skipped), with
`--mode=import` this runs

    dnnc DATA_DIR/ENTRY/model.onnx --compile-to=import [--bind NAME=FILE.pb ...]

and an entry passes when dnnc exits 0 within the timeout and prints a
`func.func`. With `--mode=run` it compiles `plan.bin` instead, runs it with
`dnnc-run` on the remaining inputs of `test_data_set_0` (under
`mpirun -np RANKS` when --ranks > 1, or as RANKS processes launched
torchrun-style with `--launcher=torchrun` (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT: the Gloo data path), compiling with `--mesh=RANKS` unless a
`--dnnc-flag` gives `--mesh` or `--parallel`), and an entry passes when every
`output_K.pb` matches the reference: same dtype and shape, floats within
|got - want| <= atol + rtol * |want| (NaN matches NaN), other types exactly.
With `--atol-scale`, atol is relative to the output's largest |value| (the
reduced-precision runs of `dnnc --precision`); `--print-errors` prints the
measured error of every float output.

`--dnnc-flag=FLAG` (repeatable; write it with `=`, since FLAG starts with
`--`) passes FLAG to every dnnc command, e.g. the sharding of a multi-rank
run:

    conformance.py LIST --mode run --ranks 4 \
        --dnnc-flag=--mesh=2x2 --dnnc-flag=--sharding=stress:1

With `--bind-inputs=non-float` (the default), every graph input of a
non-floating type (INT*, UINT*, BOOL) is bound to its value in
`test_data_set_0` with `dnnc --bind` (in the backend node tests such inputs
are shapes, indices or axes, which dnnc needs as compile-time constants).
A floating-point input that dnnc names as needing a compile-time value
(Resize's scales, OneHot's depth: "must be a compile-time ... constant; bind
it with --bind") is then bound too and the compile retried, as a user would.
With `--bind-inputs=none` nothing is bound and every input is passed to
`dnnc-run` (for real models, whose integer inputs such as `input_ids` and
`attention_mask` are data).

Prints one line per failure (with the first line dnnc wrote on stderr), then
`N passed, N failed` as the last line. Exits 0 iff the pass rate is at least
--min-pass-rate, 77 (CTest's skip) if the data directory does not exist, and
2 on usage errors.
"""

import argparse
import concurrent.futures
import os
import re
import socket
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

DEFAULT_DATA_DIR = "/usr/share/libonnx-testdata/data"

# Input element types that are bound as constants.
BOUND_TYPES = {
    onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32,
    onnx.TensorProto.INT64, onnx.TensorProto.UINT8, onnx.TensorProto.UINT16,
    onnx.TensorProto.UINT32, onnx.TensorProto.UINT64, onnx.TensorProto.BOOL,
}


def read_list(path):
    """Returns the entries of a test list file."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                # Tolerate extra tab-separated columns (as in the by-op list).
                entries.append(line.split()[0])
    return entries


def input_pb_files(test_dir):
    """Returns the input_K.pb files of test_data_set_0, K ascending."""
    data_set = os.path.join(test_dir, "test_data_set_0")
    files = {}
    if os.path.isdir(data_set):
        for name in os.listdir(data_set):
            if name.startswith("input_") and name.endswith(".pb"):
                try:
                    files[int(name[len("input_"):-len(".pb")])] = name
                except ValueError:
                    pass
    return [os.path.join(data_set, files[k]) for k in sorted(files)]


def retyped_inputs(model_path, runtime_inputs, directory):
    """The (name, file) pairs of `runtime_inputs`, with each file that holds
    the bits of a BFLOAT16 graph input as a UINT16 tensor (older ONNX test
    data) rewritten into `directory` as the BFLOAT16 tensor it stands for."""
    model = onnx.load(model_path, load_external_data=False)
    types = {i.name: i.type.tensor_type.elem_type for i in model.graph.input
             if i.type.HasField("tensor_type")}
    result = []
    for name, pb in runtime_inputs:
        tensor = onnx.load_tensor(pb)
        if (types.get(name) == TensorProto.BFLOAT16 and
                tensor.data_type == TensorProto.UINT16):
            tensor.data_type = TensorProto.BFLOAT16
            if not tensor.raw_data:
                tensor.raw_data = np.array(tensor.int32_data,
                                           np.uint16).tobytes()
                del tensor.int32_data[:]
            pb = os.path.join(directory, f"bf16-{len(result)}.pb")
            onnx.save_tensor(tensor, pb)
        result.append((name, pb))
    return result


def bind_args(model_path, test_dir, bind_types=BOUND_TYPES):
    """Returns the --bind arguments for the graph inputs whose element type
    is in `bind_types` and the (name, input file) pairs of the other
    (runtime) inputs, in graph order."""
    model = onnx.load(model_path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    pb_files = input_pb_files(test_dir)

    # input_K.pb is the K-th graph input that is not an initializer; when the
    # stored tensor carries a name, trust the name instead.
    by_name = {}
    for k, pb in enumerate(pb_files):
        tensor = onnx.TensorProto()
        with open(pb, "rb") as f:
            tensor.ParseFromString(f.read())
        if tensor.name:
            by_name[tensor.name] = pb
        elif k < len(inputs):
            by_name.setdefault(inputs[k].name, pb)

    args, runtime_inputs = [], []
    for k, inp in enumerate(inputs):
        tensor_type = inp.type.tensor_type if inp.type.HasField(
            "tensor_type") else None
        pb = by_name.get(inp.name)
        if pb is None and k < len(pb_files):
            pb = pb_files[k]
        if tensor_type is None or tensor_type.elem_type not in bind_types:
            if pb is not None:
                runtime_inputs.append((inp.name, pb))
            continue
        if pb is not None:
            args += ["--bind", f"{inp.name}={pb}"]
    return args, runtime_inputs


def first_line(text):
    """Returns the first line of text that says `error`, else the first
    non-empty one (mpirun's abort banner comes before the ranks' errors),
    or a placeholder."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower() and not line.startswith("---"):
            return line
    return lines[0] if lines else "(no output on stderr)"


def run(cmd, timeout):
    """Runs cmd; returns (returncode, stdout, stderr) or raises RuntimeError
    with the reason."""
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {timeout} s")
    except OSError as e:
        raise RuntimeError(f"cannot run {cmd[0]}: {e}")
    return (proc.returncode, proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"))


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_torchrun(cmd, ranks, timeout):
    """Runs cmd as `ranks` processes launched torchrun-style (RANK,
    WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1, a free MASTER_PORT);
    returns (the first non-zero exit code or 0, rank 0's stdout, every
    rank's stderr) or raises RuntimeError with the reason."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                        "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
                        "SLURM_STEP_ID")}
    port = str(free_port())
    procs = []
    try:
        for r in range(ranks):
            procs.append(subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env, RANK=str(r), WORLD_SIZE=str(ranks),
                         LOCAL_RANK=str(r), MASTER_ADDR="127.0.0.1",
                         MASTER_PORT=port)))
    except OSError as e:
        for p in procs:
            p.kill()
        raise RuntimeError(f"cannot run {cmd[0]}: {e}")
    results = []
    for p in procs:
        try:
            results.append(p.communicate(timeout=timeout))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
                q.wait()
            raise RuntimeError(f"timed out after {timeout} s")
    rc = next((p.returncode for p in procs if p.returncode != 0), 0)
    return (rc, results[0][0].decode("utf-8", "replace"),
            "".join(e.decode("utf-8", "replace") for _, e in results))


def compare(got_pb, want_pb, rtol, atol, atol_scale=False, errors=None,
            ratios=None):
    """Returns None if the tensors match, else the reason. With `atol_scale`
    the absolute tolerance is `atol` times the output's scale (its largest
    finite |value|). With `errors` (a list), appends a line with the largest
    absolute error, the scale and their ratio, and the ratio to `ratios`."""
    got_tensor, want_tensor = onnx.load_tensor(got_pb), onnx.load_tensor(want_pb)
    got = numpy_helper.to_array(got_tensor)
    want = numpy_helper.to_array(want_tensor)
    if (got_tensor.data_type == TensorProto.BFLOAT16 and
            want_tensor.data_type == TensorProto.UINT16):
        # Older ONNX test data stores bfloat16 as its bits in a UINT16
        # tensor: compare the values those bits stand for.
        got = got.astype(np.float32)
        want = (want.astype(np.uint32) << 16).view(np.float32)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if np.issubdtype(want.dtype, np.floating):
        g, w = got.astype(np.float64), want.astype(np.float64)
        finite = np.isfinite(w)
        scale = float(np.abs(w[finite]).max()) if finite.any() else 0.0
        if errors is not None and g.size:
            diff = np.abs(g - w)[finite & np.isfinite(g)]
            err = float(diff.max()) if diff.size else 0.0
            ratio = err / scale if scale else 0.0
            errors.append(f"max abs error {err:.3e}, scale {scale:.3e}, "
                          f"error/scale {ratio:.3e}")
            if ratios is not None:
                ratios.append(ratio)
        if atol_scale:
            atol = atol * scale
        bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w)) |
                (np.isnan(g) & np.isnan(w)) | (g == w))
        if bad.any():
            i = np.unravel_index(np.argmax(bad), bad.shape)
            return (f"{int(bad.sum())} of {bad.size} values differ, e.g. at "
                    f"{list(i)}: {g[i]!r} vs {w[i]!r}")
    elif not np.array_equal(got, want):
        return "values differ"
    return None


def run_one(entry, opts):
    """Checks one entry; returns (entry, None) on success or (entry, reason)."""
    errors = [] if opts.print_errors or opts.min_error else None
    ratios = []
    entry, reason = check_one(entry, opts, errors, ratios)
    for k, line in enumerate(errors or []):
        if opts.print_errors:
            print(f"ERROR {entry} output {k}: {line}")
    if reason is None and opts.min_error and max(ratios, default=0.0) < \
            opts.min_error:
        reason = (f"largest error/scale {max(ratios, default=0.0):.3e} is "
                  f"below --min-error {opts.min_error:g}: the run was not "
                  "in reduced precision")
    return entry, reason


# dnnc's error for a graph input it needs as a compile-time value.
NEEDS_BINDING = re.compile(r"\(input \d+ '([^']+)'\) must be a compile-time "
                           r".*constant; bind it with --bind")


def compile_binding(cmd, binds, runtime_inputs, timeout):
    """Runs the dnnc command `cmd` + `binds`; while it fails naming a runtime
    input that must be a compile-time value, binds that input (taking it out
    of `runtime_inputs`) and retries. Returns run()'s result."""
    while True:
        rc, out, err = run(cmd + binds, timeout)
        match = NEEDS_BINDING.search(err) if rc != 0 else None
        names = [name for name, _ in runtime_inputs]
        if not match or match.group(1) not in names:
            return rc, out, err
        pb = runtime_inputs.pop(names.index(match.group(1)))[1]
        binds = binds + ["--bind", f"{match.group(1)}={pb}"]


def check_one(entry, opts, errors, ratios):
    """run_one, appending to `errors` (a list or None) the error line of
    each float output compared and to `ratios` its error/scale."""
    test_dir = os.path.join(opts.data_dir, entry)
    model_path = os.path.join(test_dir, "model.onnx")
    if not os.path.isfile(model_path):
        return entry, f"no such model: {model_path}"
    try:
        binds, runtime_inputs = bind_args(
            model_path, test_dir,
            BOUND_TYPES if opts.bind_inputs == "non-float" else set())
    except Exception as e:  # a broken model or data set in the list
        return entry, f"cannot read the model or its test data: {e}"
    try:
        if opts.mode == "import":
            rc, out, err = compile_binding(
                [opts.dnnc, model_path, "--compile-to=import"] +
                opts.dnnc_flags, binds, runtime_inputs, opts.timeout)
            if rc != 0:
                return entry, f"exit code {rc}: {first_line(err)}"
            if "func.func" not in out:
                return entry, "exit code 0 but no func.func in the output"
            return entry, None
        with tempfile.TemporaryDirectory(prefix="dnnc-conf-") as tmp:
            plan = os.path.join(tmp, "plan.bin")
            cmd = [opts.dnnc, model_path, "-o", plan] + opts.dnnc_flags
            if opts.ranks > 1 and not any(
                    f.startswith(("--mesh", "--parallel"))
                    for f in opts.dnnc_flags):
                cmd.append(f"--mesh={opts.ranks}")
            rc, _, err = compile_binding(cmd, binds, runtime_inputs,
                                         opts.timeout)
            if rc != 0:
                return entry, f"dnnc exit code {rc}: {first_line(err)}"
            outdir = os.path.join(tmp, "out")
            runtime_inputs = retyped_inputs(model_path, runtime_inputs, tmp)
            cmd = [opts.dnnc_run, plan, "--output-dir", outdir]
            for _, pb in runtime_inputs:
                cmd += ["--input", pb]
            if opts.ranks > 1 and opts.launcher == "torchrun":
                rc, _, err = run_torchrun(cmd, opts.ranks, opts.timeout)
            else:
                if opts.ranks > 1:
                    cmd = [opts.mpirun, "-np", str(opts.ranks),
                           "--oversubscribe", "--allow-run-as-root"] + cmd
                rc, _, err = run(cmd, opts.timeout)
            if rc != 0:
                return entry, f"dnnc-run exit code {rc}: {first_line(err)}"
            data_set = os.path.join(test_dir, "test_data_set_0")
            k = 0
            while os.path.isfile(os.path.join(data_set, f"output_{k}.pb")):
                got = os.path.join(outdir, f"output_{k}.pb")
                if not os.path.isfile(got):
                    return entry, f"dnnc-run wrote no output_{k}.pb"
                reason = compare(got, os.path.join(data_set, f"output_{k}.pb"),
                                 opts.rtol, opts.atol, opts.atol_scale,
                                 errors, ratios)
                if reason:
                    return entry, f"output {k}: {reason}"
                k += 1
            return entry, None
    except RuntimeError as e:
        return entry, str(e)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("list_file", metavar="LIST_FILE")
    parser.add_argument("--mode", choices=["import", "run"], default="import",
                        help="import only, or compile, run and compare "
                             "(default: import)")
    parser.add_argument("--dnnc", default="dnnc",
                        help="the dnnc binary (default: dnnc on PATH)")
    parser.add_argument("--dnnc-run", default="dnnc-run",
                        help="the dnnc-run binary (default: dnnc-run on PATH)")
    parser.add_argument("--ranks", type=int, default=1,
                        help="ranks to run on (default: 1)")
    parser.add_argument("--mpirun", default="mpirun",
                        help="MPI launcher for --ranks > 1")
    parser.add_argument("--launcher", choices=["mpirun", "torchrun"],
                        default="mpirun",
                        help="how --ranks > 1 are launched: mpirun (MPI), "
                             "or torchrun-style processes (Gloo; exits 77 "
                             "when dnnc-run is built without Gloo)")
    parser.add_argument("--dnnc-flag", dest="dnnc_flags", action="append",
                        default=[], metavar="FLAG",
                        help="pass FLAG to dnnc (repeatable; write "
                             "--dnnc-flag=--sharding=stress:1, with '='). "
                             "With --ranks > 1, --mesh=RANKS is added unless "
                             "a FLAG gives --mesh or --parallel")
    parser.add_argument("--bind-inputs", choices=["non-float", "none"],
                        default="non-float",
                        help="graph inputs folded into constants with dnnc "
                             "--bind: the non-floating ones (default) or none")
    parser.add_argument("--rtol", type=float, default=1e-3,
                        help="relative tolerance for floats (default: 1e-3)")
    parser.add_argument("--atol", type=float, default=1e-5,
                        help="absolute tolerance for floats (default: 1e-5)")
    parser.add_argument("--atol-scale", action="store_true",
                        help="make --atol relative to each output's scale "
                             "(its largest finite |value|): reduced-precision "
                             "runs (dnnc --precision) err in proportion to "
                             "the magnitudes they compute with")
    parser.add_argument("--print-errors", action="store_true",
                        help="print each float output's largest absolute "
                             "error, its scale and their ratio")
    parser.add_argument("--min-error", type=float, default=0.0,
                        help="fail an entry whose largest float-output "
                             "error/scale is below this (a reduced-precision "
                             "run that computed in fp32)")
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                        help=f"ONNX backend test data (default: {DEFAULT_DATA_DIR})")
    parser.add_argument("--min-pass-rate", type=float, default=0.95,
                        help="lowest pass rate that exits 0 (default: 0.95)")
    parser.add_argument("--timeout", type=float, default=60,
                        help="seconds per model (default: 60)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="models imported in parallel (default: all cores)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also print a line per passing entry")
    args = parser.parse_args(argv)

    if not os.path.isdir(args.data_dir):
        print(f"ONNX test data not found in {args.data_dir} "
              "(Debian package libonnx-testdata); skipping")
        return 77
    if args.launcher == "torchrun" and args.mode == "run":
        rc, version, _ = run([args.dnnc_run, "--version"], 60)
        if "Gloo" not in version:
            print(f"{args.dnnc_run} is built without Gloo (--version: "
                  f"{version.strip()}); skipping the torchrun-style runs")
            return 77
    try:
        entries = read_list(args.list_file)
    except OSError as e:
        print(f"error: cannot read {args.list_file}: {e}", file=sys.stderr)
        return 2
    if not entries:
        print(f"error: {args.list_file} lists no tests", file=sys.stderr)
        return 2

    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = pool.map(lambda e: run_one(e, args), entries)
        for entry, reason in results:  # in list order
            if reason is None:
                passed += 1
                if args.verbose:
                    print(f"PASS {entry}")
            else:
                failed += 1
                print(f"FAIL {entry}: {reason}")
            sys.stdout.flush()

    rate = passed / len(entries)
    print(f"pass rate {rate:.1%} (minimum {args.min_pass_rate:.1%})")
    print(f"{passed} passed, {failed} failed")
    return 0 if rate >= args.min_pass_rate else 1


if __name__ == "__main__":
    sys.exit(main())
