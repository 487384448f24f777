#!/usr/bin/env python3
"""Imports ONNX backend-test models with `dnnc --compile-to=import`.

For each entry of LIST_FILE (a path relative to the test data directory, such
as `node/test_relu`; blank lines and `#` comments are skipped) this runs

    dnnc DATA_DIR/ENTRY/model.onnx --compile-to=import [--bind NAME=FILE.pb ...]

where every graph input of a non-floating type (INT*, UINT*, BOOL) is bound to
its value in `test_data_set_0` (such inputs are usually shapes, indices or
axes, which dnnc needs as compile-time constants). An entry passes when dnnc
exits 0 within the timeout and prints a `func.func`.

Prints one line per failure (with the first line dnnc wrote on stderr), then
`N passed, N failed` as the last line. Exits 0 iff the pass rate is at least
--min-pass-rate, 77 (CTest's skip) if the data directory does not exist, and
2 on usage errors.
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys

import onnx

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


def bind_args(model_path, test_dir):
    """Returns the --bind arguments for the non-floating graph inputs."""
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

    args = []
    for k, inp in enumerate(inputs):
        tensor_type = inp.type.tensor_type if inp.type.HasField(
            "tensor_type") else None
        if tensor_type is None or tensor_type.elem_type not in BOUND_TYPES:
            continue
        pb = by_name.get(inp.name)
        if pb is None and k < len(pb_files):
            pb = pb_files[k]
        if pb is not None:
            args += ["--bind", f"{inp.name}={pb}"]
    return args


def first_line(text):
    """Returns the first non-empty line of text, or a placeholder."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "(no output on stderr)"


def run_one(entry, dnnc, data_dir, timeout):
    """Imports one entry; returns (entry, None) on success or (entry, reason)."""
    test_dir = os.path.join(data_dir, entry)
    model_path = os.path.join(test_dir, "model.onnx")
    if not os.path.isfile(model_path):
        return entry, f"no such model: {model_path}"
    try:
        cmd = [dnnc, model_path, "--compile-to=import"]
        cmd += bind_args(model_path, test_dir)
    except Exception as e:  # a broken model or data set in the list
        return entry, f"cannot read the model or its test data: {e}"
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return entry, f"timed out after {timeout} s"
    except OSError as e:
        return entry, f"cannot run {dnnc}: {e}"
    stdout = proc.stdout.decode("utf-8", "replace")
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        return entry, f"exit code {proc.returncode}: {first_line(stderr)}"
    if "func.func" not in stdout:
        return entry, "exit code 0 but no func.func in the output"
    return entry, None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("list_file", metavar="LIST_FILE")
    parser.add_argument("--dnnc", default="dnnc",
                        help="the dnnc binary (default: dnnc on PATH)")
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
        results = pool.map(
            lambda e: run_one(e, args.dnnc, args.data_dir, args.timeout),
            entries)
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
