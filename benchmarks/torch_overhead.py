"""What profiling costs a PyTorch training loop: examples/train_cnn.py's model and step,
unprofiled vs paddle_prof.torch (memory tracked, with and without its module events) vs
torch.profiler(profile_memory=True, record_shapes=True), and, in child processes (the malloc hooks must be loaded at the
start), unprofiled vs paddle_prof.torch vs paddle_prof.torch with native tracking (every
malloc, under the preload library); interleaved so that the machine's drift hits all of
them alike.

    PYTHONPATH=build/python python3 benchmarks/torch_overhead.py [--rounds 7] [--steps 20]

Each round times `steps` training steps under each setup, including what it takes to
produce the report (paddle_prof's table; torch's key_averages().table()). Prints
medians and the ratios to the unprofiled loop (benchmarks/torch_module_overhead.py
measures the module events' cost per call on its own).
"""

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from train_cnn import SmallCNN  # noqa: E402

import paddle_prof  # noqa: E402
import paddle_prof.torch  # noqa: E402


def make_step(batch_size: int):
    torch.manual_seed(0)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(batch_size, 1, 28, 28)
    labels = torch.randint(0, 10, (batch_size,))

    def step() -> None:
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def unprofiled(step, steps: int) -> tuple:
    start = time.perf_counter()
    for _ in range(steps):
        step()
    loop = time.perf_counter() - start
    return 0.0, loop, loop


def with_paddle_prof(step, steps: int, modules: bool = True) -> tuple:
    start = time.perf_counter()
    with paddle_prof.torch.profiler('CPU', 'total', stream=io.StringIO(), modules=modules):
        opened = time.perf_counter() - start
        for _ in range(steps):
            step()
            paddle_prof.mark_step()
        loop = time.perf_counter() - start
    return opened, loop, time.perf_counter() - start  # the report is built at exit


def with_torch_profiler(step, steps: int) -> tuple:
    start = time.perf_counter()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                profile_memory=True, record_shapes=True) as prof:
        opened = time.perf_counter() - start
        for _ in range(steps):
            step()
        loop = time.perf_counter() - start
    prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
    return opened, loop, time.perf_counter() - start


PRELOAD = os.path.join(os.path.dirname(paddle_prof.__file__), "libpaddle_prof_preload.so")


def in_child(args, mode: str, preload: bool) -> tuple:
    """One timed loop in a fresh child process: the malloc hooks must be there from the
    process's start, and its baseline is a child started the same way without them."""
    env = dict(os.environ, LD_PRELOAD=PRELOAD) if preload else dict(os.environ)
    out = subprocess.run([sys.executable, __file__, "--child", mode, "--steps", str(args.steps),
                          "--batch-size", str(args.batch_size)],
                         env=env, capture_output=True, text=True, check=True).stdout
    opened, loop, total = json.loads(out.strip().splitlines()[-1])
    return opened, loop, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--child", choices=["unprofiled", "paddle_prof"], help=argparse.SUPPRESS)
    args = parser.parse_args()

    step = make_step(args.batch_size)
    if args.child:  # one timed loop in this child process
        run = unprofiled if args.child == "unprofiled" else with_paddle_prof
        run(step, 2)
        print(json.dumps(run(step, args.steps)))
        return
    setups = {"unprofiled": unprofiled, "paddle_prof": with_paddle_prof,
              "paddle_prof, no modules":
                  lambda s, n: with_paddle_prof(s, n, modules=False),
              "torch.profiler": with_torch_profiler}
    in_process = list(setups)
    if os.path.exists(PRELOAD):
        setups["child: unprofiled"] = lambda _s, _n: in_child(args, "unprofiled", False)
        setups["child: paddle_prof"] = lambda _s, _n: in_child(args, "paddle_prof", False)
        setups["child: +native"] = lambda _s, _n: in_child(args, "paddle_prof", True)
    for name in in_process:  # warm up every in-process path once
        setups[name](step, 2)
    times = {name: ([], [], []) for name in setups}
    for _ in range(args.rounds):
        for name, run in setups.items():
            opened, loop, total = run(step, args.steps)
            times[name][0].append(loop - opened)
            times[name][1].append(total)
            times[name][2].append(opened)

    print(f"{args.rounds} rounds of {args.steps} steps, batch {args.batch_size}, "
          f"{torch.get_num_threads()} intra-op threads; medians, ratios to the unprofiled "
          "loop of the same process kind; 'open' is opening the window (for paddle_prof "
          "after an unprofiled loop: the walk of the program's objects for the tensors it "
          "made outside windows), 'with report' the whole, opening included:")
    print(f"{'setup':24} {'open ms':>8} {'loop ms':>9} {'ratio':>7} {'with report ms':>15} "
          f"{'ratio':>7}")
    for name, (loops, totals, opens) in times.items():
        base = "child: unprofiled" if name.startswith("child") else "unprofiled"
        base_loop = statistics.median(times[base][0])
        loop, total = statistics.median(loops), statistics.median(totals)
        print(f"{name:24} {statistics.median(opens) * 1e3:8.1f} {loop * 1e3:9.1f} "
              f"{loop / base_loop:7.3f} {total * 1e3:15.1f} {total / base_loop:7.3f}")


if __name__ == "__main__":
    main()
