"""What profiling costs a PyTorch training loop: examples/train_cnn.py's model and step,
unprofiled vs paddle_prof.torch (memory tracked) vs paddle_prof.torch with native tracking
(every malloc, under the preload library; timed in a child process started with it) vs
torch.profiler(profile_memory=True, record_shapes=True), interleaved so that the
machine's drift hits all of them alike.

    PYTHONPATH=build/python python3 benchmarks/torch_overhead.py [--rounds 7] [--steps 20]

Each round times `steps` training steps under each setup, including what it takes to
produce the report (paddle_prof's table; torch's key_averages().table()). Prints
medians and the ratios to the unprofiled loop.
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
    return loop, loop


def with_paddle_prof(step, steps: int) -> tuple:
    start = time.perf_counter()
    with paddle_prof.torch.profiler('CPU', 'total', stream=io.StringIO()):
        for _ in range(steps):
            step()
            paddle_prof.mark_step()
        loop = time.perf_counter() - start
    return loop, time.perf_counter() - start  # the report is built and printed at exit


def with_torch_profiler(step, steps: int) -> tuple:
    start = time.perf_counter()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                profile_memory=True, record_shapes=True) as prof:
        for _ in range(steps):
            step()
        loop = time.perf_counter() - start
    prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
    return loop, time.perf_counter() - start


PRELOAD = os.path.join(os.path.dirname(paddle_prof.__file__), "libpaddle_prof_preload.so")


def with_native_tracking(args):
    """paddle_prof with the malloc hooks, which must be there from the process's start:
    a child process started with them times the same loop."""
    env = dict(os.environ, LD_PRELOAD=PRELOAD)
    out = subprocess.run([sys.executable, __file__, "--child", "--steps", str(args.steps),
                          "--batch-size", str(args.batch_size)],
                         env=env, capture_output=True, text=True, check=True).stdout
    loop, total = json.loads(out.strip().splitlines()[-1])
    return loop, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    step = make_step(args.batch_size)
    if args.child:  # one timed paddle_prof loop, under the preload library
        with_paddle_prof(step, 2)
        print(json.dumps(with_paddle_prof(step, args.steps)))
        return
    setups = {"unprofiled": unprofiled, "paddle_prof": with_paddle_prof,
              "torch.profiler": with_torch_profiler}
    if os.path.exists(PRELOAD):
        setups["paddle_prof+native"] = lambda _step, _steps: with_native_tracking(args)
    for name, run in setups.items():  # warm up every in-process path once
        if name != "paddle_prof+native":
            run(step, 2)
    times = {name: ([], []) for name in setups}
    for _ in range(args.rounds):
        for name, run in setups.items():
            loop, total = run(step, args.steps)
            times[name][0].append(loop)
            times[name][1].append(total)

    base_loop = statistics.median(times["unprofiled"][0])
    print(f"{args.rounds} rounds of {args.steps} steps, batch {args.batch_size}, "
          f"{torch.get_num_threads()} intra-op threads; medians:")
    print(f"{'setup':20} {'loop ms':>9} {'ratio':>7} {'with report ms':>15} {'ratio':>7}")
    for name, (loops, totals) in times.items():
        loop, total = statistics.median(loops), statistics.median(totals)
        print(f"{name:20} {loop * 1e3:9.1f} {loop / base_loop:7.3f} {total * 1e3:15.1f} "
              f"{total / base_loop:7.3f}")


if __name__ == "__main__":
    main()
