#!/usr/bin/env python3
"""Checks the command lines of training: checkpoints, resume, bad input.

Builds a small MLP in ONNX (onnx.helper: no torch needed), then:

* trains 6 steps straight, and 3 steps + `--resume` for 3 more: the losses
  and the final checkpoint shards are identical, bit for bit (on one rank
  and, with --ranks N, data parallel with ZeRO-1 over N ranks);
* a checkpoint of another plan is refused when resumed;
* bad input is one clear error each, and no checkpoint is left behind: a
  loss output that does not exist or is not a scalar, labels of the wrong
  dtype or shape, a data folder with mismatched sample counts, a missing
  data file, --resume without a checkpoint;
* with --ranks N: killing one rank in the middle of training ends every
  rank with an error, and the last complete checkpoint stays readable.

Usage: train_cli.py --dnnc dnnc --dnnc-run dnnc-run [--ranks N
[--parallel SPEC]] [--dnnc-flag FLAG]...
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_mlp(path, batch=8, features=16, hidden=32, classes=4, extra=False):
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(
        (0.3 * rng.standard_normal((features, hidden))).astype(np.float32),
        "w1")
    b1 = numpy_helper.from_array(np.zeros(hidden, np.float32), "b1")
    w2 = numpy_helper.from_array(
        (0.3 * rng.standard_normal((hidden, classes))).astype(np.float32),
        "w2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
             helper.make_node("Relu", ["hb"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2"], ["logits"], name="fc2")]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                             [batch, classes])]
    inits = [w1, b1, w2]
    if extra:  # a second hidden layer: another plan
        w3 = numpy_helper.from_array(np.eye(classes, dtype=np.float32), "w3")
        nodes[-1].output[0] = "l0"
        nodes.append(helper.make_node("MatMul", ["l0", "w3"], ["logits"],
                                      name="fc3"))
        inits.append(w3)
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [batch, features])],
        outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), path)


def run(cmd, expect_ok=True):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if expect_ok and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {proc.stderr.strip()[:600]}")
    return proc


def losses(stdout):
    return [line.split()[3] for line in stdout.splitlines()
            if line.startswith("step ")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dnnc", required=True)
    parser.add_argument("--dnnc-run", required=True)
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--parallel", default="",
                        help="the plan over --ranks (default dp=RANKS)")
    parser.add_argument("--dnnc-flag", action="append", default=[],
                        help="a flag for the training plan's compile (e.g. "
                        "--microbatches=2)")
    opts = parser.parse_args()
    failures = []

    def expect(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    def expect_error(proc, needle, what):
        err = proc.stderr.strip()
        lines = err.splitlines()
        good = proc.returncode != 0 and any(
            line.startswith("error: ") and needle in line for line in lines)
        expect(good, f"{what}: {err.splitlines()[-1] if err else '(none)'}")

    launch = []
    parallel = []
    if opts.ranks > 1:
        launch = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                  str(opts.ranks)]
        parallel = [f"--parallel={opts.parallel or f'dp={opts.ranks}'}"]
    parallel += opts.dnnc_flag

    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "mlp.onnx")
        make_mlp(model)
        data = os.path.join(work, "data")
        os.makedirs(data)
        rng = np.random.default_rng(1)
        np.save(os.path.join(data, "x.npy"),
                rng.standard_normal((40, 16)).astype(np.float32))
        np.save(os.path.join(data, "labels.npy"),
                rng.integers(0, 4, (40,)).astype(np.int64))
        plan = os.path.join(work, "plan.bin")
        train = ["--mode=train", "--loss=cross-entropy:logits,labels",
                 "--lr=0.01"] + parallel
        run([opts.dnnc, model, "-o", plan] + train)

        def dnnc_run(args, expect_ok=True):
            return run(launch + [opts.dnnc_run, plan, "--train",
                                 "--data", data] + args, expect_ok)

        # Resume is bit-exact.
        a, b = os.path.join(work, "a"), os.path.join(work, "b")
        straight = dnnc_run(["--steps=6", "--checkpoint-dir", a])
        first = dnnc_run(["--steps=3", "--checkpoint-dir", b])
        second = dnnc_run(["--steps=6", "--checkpoint-dir", b, "--resume"])
        expect(losses(straight.stdout) ==
               losses(first.stdout) + losses(second.stdout) and
               len(losses(straight.stdout)) == 6,
               "3 steps + --resume 3 steps print the losses of 6 steps")
        same = all(
            open(os.path.join(a, "step-6", f"rank-{r}.ckpt"), "rb").read() ==
            open(os.path.join(b, "step-6", f"rank-{r}.ckpt"), "rb").read()
            for r in range(opts.ranks))
        expect(same, "the resumed run's final checkpoint equals the "
               "straight run's, byte for byte")
        expect(open(os.path.join(b, "latest")).read().strip() == "step-6",
               "latest names the newest checkpoint")

        # --trace: the measured last step, one lane per rank, one event per
        # step of each rank's schedule (as --print-plan lists them); dnnc's
        # simulated step has the forward and backward blocks of every
        # micro-batch of every stage.
        measured = os.path.join(work, "run.json")
        dnnc_run(["--steps=2", "--trace", measured])
        listing = run([opts.dnnc_run, plan, "--print-plan"]).stdout
        steps = {}
        rank = None
        for line in listing.splitlines():
            if line.startswith("rank "):
                rank = int(line.split()[1].rstrip(":"))
            elif line.strip().startswith("step ") and rank is not None:
                steps[rank] = steps.get(rank, 0) + 1
        events = [e for e in json.load(open(measured))["traceEvents"]
                  if e.get("ph") == "X"]
        lanes = sorted({e["tid"] for e in events})
        expect(lanes == list(range(opts.ranks)),
               f"dnnc-run --trace has one lane per rank ({lanes})")
        expect(all(sum(e["tid"] == r for e in events) == steps.get(r, 1)
                   for r in range(opts.ranks)),
               "dnnc-run --trace has one event per schedule step "
               f"({[sum(e['tid'] == r for e in events) for r in lanes]} "
               f"events, {steps} steps)")
        simulated = os.path.join(work, "sim.json")
        run([opts.dnnc, model, "-o", plan + ".sim", "--trace", simulated,
             "--simulate"] + train)
        blocks = [e["name"] for e in json.load(open(simulated))["traceEvents"]
                  if e.get("cat") == "compute"]
        expect(len(blocks) > 0, "dnnc --trace of the step has blocks")

        # A checkpoint of another plan.
        other_model = os.path.join(work, "other.onnx")
        make_mlp(other_model, extra=True)
        other = os.path.join(work, "other.bin")
        run([opts.dnnc, other_model, "-o", other] + train)
        proc = run(launch + [opts.dnnc_run, other, "--train", "--data", data,
                             "--steps=8", "--checkpoint-dir", b,
                             "--resume"], expect_ok=False)
        expect_error(proc, "another plan", "a checkpoint of another plan")

        # Bad compile-time input.
        proc = run([opts.dnnc, model, "--mode=train", "-o", plan + ".x",
                    "--loss-output=nope"], expect_ok=False)
        expect_error(proc, "nope", "a loss output that does not exist")
        proc = run([opts.dnnc, model, "--mode=train", "-o", plan + ".x",
                    "--loss-output=logits"], expect_ok=False)
        expect_error(proc, "one element", "a loss that is not a scalar")
        proc = run([opts.dnnc, model, "--mode=train", "-o", plan + ".x",
                    "--loss=cross-entropy:nope,labels"], expect_ok=False)
        expect_error(proc, "nope", "--loss over an output that does not "
                     "exist")
        expect(not os.path.exists(plan + ".x"), "no plan left behind")

        # Bad data.
        def bad_data(files, needle, what):
            d = os.path.join(work, what.replace(" ", "_"))
            os.makedirs(d)
            for name, array in files.items():
                np.save(os.path.join(d, name + ".npy"), array)
            ck = os.path.join(work, "ck-" + what.replace(" ", "_"))
            proc = run(launch + [opts.dnnc_run, plan, "--train", "--data", d,
                                 "--steps=2", "--checkpoint-dir", ck],
                       expect_ok=False)
            expect_error(proc, needle, what)
            expect(not os.path.exists(ck), f"{what}: no checkpoint written")

        x = np.zeros((40, 16), np.float32)
        bad_data({"x": x, "labels": np.zeros(40, np.int32)}, "int64",
                 "labels of the wrong dtype")
        bad_data({"x": x, "labels": np.zeros((40, 2), np.int64)}, "labels",
                 "labels of the wrong shape")
        bad_data({"x": x, "labels": np.zeros(39, np.int64)}, "samples",
                 "mismatched sample counts")
        bad_data({"x": x}, "labels.npy", "a missing data file")
        proc = dnnc_run(["--steps=2", "--checkpoint-dir",
                         os.path.join(work, "empty"), "--resume"],
                        expect_ok=False)
        expect_error(proc, "no complete checkpoint", "--resume without a "
                     "checkpoint")

        if opts.ranks > 1:
            # Kill one rank in the middle: every rank ends with an error and
            # the last complete checkpoint stays readable.
            big = os.path.join(work, "big")
            os.makedirs(big)
            np.save(os.path.join(big, "x.npy"),
                    rng.standard_normal((4000, 16)).astype(np.float32))
            np.save(os.path.join(big, "labels.npy"),
                    rng.integers(0, 4, (4000,)).astype(np.int64))
            ck = os.path.join(work, "killed")
            proc = subprocess.Popen(
                launch + [opts.dnnc_run, plan, "--train", "--data", big,
                          "--steps=1000000", "--checkpoint-dir", ck,
                          "--save-every=50"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.time() + 60
            while time.time() < deadline and not os.path.exists(
                    os.path.join(ck, "latest")):
                time.sleep(0.1)
            time.sleep(0.3)
            ranks = subprocess.run(["pgrep", "-f", f"dnnc-run {plan}"],
                                   capture_output=True, text=True)
            pids = [int(p) for p in ranks.stdout.split()]
            if pids:
                os.kill(pids[-1], signal.SIGKILL)
            try:
                out, err = proc.communicate(timeout=120)
                ended = True
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                ended = False
            errors = [line for line in err.splitlines()
                      if line.startswith("error:") or "signal" in line]
            expect(ended and proc.returncode != 0,
                   f"killing a rank ends the launch with an error (exit "
                   f"{proc.returncode}: {' | '.join(errors)[:300]})")
            latest = open(os.path.join(ck, "latest")).read().strip()
            resumed = run(launch + [opts.dnnc_run, plan, "--train", "--data",
                                    big, "--steps",
                                    str(int(latest[5:]) + 1),
                                    "--checkpoint-dir", ck, "--resume"],
                          expect_ok=False)
            expect(resumed.returncode == 0,
                   f"the last complete checkpoint ({latest}) resumes: "
                   f"{resumed.stderr.strip()[:200]}")

    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
