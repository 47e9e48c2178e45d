"""What profiling adds to one small PyTorch op, and what a Python scope costs.

    PYTHONPATH=build/python python3 benchmarks/torch_op_overhead.py [--rounds 7] [--ops 20000]

Ops: a loop of `ops` torch.add on 8-element tensors, one intra-op thread, under each
setup: unprofiled; paddle_prof (plain, record_shapes=True, record_stacks=True); and the
same op writing into `out=`, unprofiled and under paddle_prof, which shows what the op's event costs without the tracking of a tensor's
memory. A profiled figure includes leaving the with-block, where the report is built
and printed (torch's: key_averages().table()), and shows that part apart. Then the
floor any callback-based profiler pays, torch's own work per op: the unprofiled loop
with an empty global RecordFunction callback, and with one that asks for the inputs
(record_shapes' floor); and torch.profiler (CPU). Both in rounds of their own.

Scopes: `with paddle_prof.record_event('x'):` made fresh per with, and one object
reused, against `with contextlib.nullcontext():`, inside an open paddle_prof window.

Setups run in interleaved rounds, each round running every setup once, so that the
machine's drift hits all alike; figures are medians over the rounds. Each setup starts
on a settled heap and pays for settling what its own loop left (see settle_heap): a
profiled window's report does that with its first large allocation, and without the
same step the unprofiled loop's leftovers would be paid by whichever setup runs next.
"""

import argparse
import contextlib
import io
import statistics
import time

import torch

import paddle_prof
import paddle_prof.torch
from paddle_prof import _torch_bridge


def op_loop(ops: int, into: bool = False) -> None:
    a, b = torch.ones(8), torch.ones(8)
    if into:  # the op allocates nothing: no tensor memory to track
        out = torch.empty(8)
        for _ in range(ops):
            torch.add(a, b, out=out)
    else:
        for _ in range(ops):
            torch.add(a, b)


def settle_heap() -> None:
    """Has glibc merge the small chunks freed so far: its first allocation of 1 KiB or
    more after many small frees does that work (malloc_consolidate), which a loop of
    small tensors leaves behind."""
    bytearray(4096)  # Python hands a request this large to malloc


def unprofiled(ops: int, into: bool = False) -> tuple:
    settle_heap()  # the previous setup's leftovers are not this one's
    start = time.perf_counter()
    op_loop(ops, into)
    settle_heap()  # this loop's own, as a profiled loop's report pays them
    loop = time.perf_counter() - start
    return 0.0, loop, loop


def empty_callback(needs_inputs: bool):
    def run(ops: int) -> tuple:
        _torch_bridge._bench_empty_callback(True, needs_inputs)
        try:
            return unprofiled(ops)
        finally:
            _torch_bridge._bench_empty_callback(False)

    return run


def paddle_prof_setup(into: bool = False, **kwargs):
    def run(ops: int) -> tuple:
        settle_heap()
        start = time.perf_counter()
        with paddle_prof.torch.profiler('CPU', stream=io.StringIO(), **kwargs):
            opened = time.perf_counter() - start
            op_loop(ops, into)
            loop = time.perf_counter() - start
        return opened, loop, time.perf_counter() - start  # the report is built at exit

    return run


def torch_profiler(ops: int) -> tuple:
    settle_heap()
    start = time.perf_counter()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        opened = time.perf_counter() - start
        op_loop(ops)
        loop = time.perf_counter() - start
    prof.key_averages().table(sort_by="cpu_time_total")
    return opened, loop, time.perf_counter() - start


def record_stacks_supported() -> bool:
    try:
        with paddle_prof.torch.profiler('CPU', stream=io.StringIO(), record_stacks=True):
            pass
    except TypeError:
        return False
    return True


def fresh_record_event(n: int) -> float:
    record_event = paddle_prof.record_event
    start = time.perf_counter()
    for _ in range(n):
        with record_event('x'):
            pass
    return time.perf_counter() - start


def reused_record_event(n: int) -> float:
    scope = paddle_prof.record_event('x')
    start = time.perf_counter()
    for _ in range(n):
        with scope:
            pass
    return time.perf_counter() - start


def null_context(n: int) -> float:
    nullcontext = contextlib.nullcontext
    start = time.perf_counter()
    for _ in range(n):
        with nullcontext():
            pass
    return time.perf_counter() - start


def in_window(run):
    def timed(n: int) -> tuple:
        with paddle_prof.profiler('CPU', stream=io.StringIO()):
            elapsed = run(n)
        return 0.0, elapsed, elapsed

    return timed


def rounds(setups: dict, count: int, n: int) -> dict:
    """Medians of ns per op (or per with): (opening the window, the loop in it, the
    whole: opening, loop and report)."""
    for run in setups.values():  # warm up every path once
        run(n // 10)
    times = {name: ([], [], []) for name in setups}
    for _ in range(count):
        for name, run in setups.items():
            opened, loop, total = run(n)
            times[name][0].append(opened / n * 1e9)
            times[name][1].append((loop - opened) / n * 1e9)
            times[name][2].append(total / n * 1e9)
    return {name: tuple(statistics.median(t) for t in figures)
            for name, figures in times.items()}


def print_ops(ns: dict) -> None:
    print(f"{'setup':28} {'ns/op':>9} {'added':>9} {'open':>9} {'loop':>9} {'report':>9}")
    for name, (opened, loop, total) in ns.items():
        base = ns["unprofiled, out=" if name.endswith("out=") else "unprofiled"][2]
        print(f"{name:28} {total:9.0f} {total - base:+9.0f} {opened:9.0f} {loop - base:+9.0f} "
              f"{total - loop - opened:9.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=20000)
    args = parser.parse_args()
    torch.set_num_threads(1)

    setups = {"unprofiled": unprofiled,
              "paddle_prof": paddle_prof_setup(),
              "paddle_prof record_shapes": paddle_prof_setup(record_shapes=True)}
    stacks = record_stacks_supported()
    if stacks:
        setups["paddle_prof record_stacks"] = paddle_prof_setup(record_stacks=True)
    # The same op writing into out=: what paddle_prof adds without tensor memory.
    setups["unprofiled, out="] = lambda ops: unprofiled(ops, into=True)
    setups["paddle_prof, out="] = paddle_prof_setup(into=True)
    print(f"torch.add on 8 elements, {args.ops} ops, 1 thread, medians of {args.rounds} "
          "rounds; a profiled figure includes opening its window and its report, also shown "
          "apart ('loop' is what the loop alone adds; 'open' includes the walk of the "
          "program's objects for tensors made outside windows, which the setups after "
          "an unprofiled loop pay):")
    print_ops(rounds(setups, args.rounds, args.ops))
    if not stacks:
        print("record_stacks: n/a")

    # Rounds of their own: what runs just before a window changes what its report costs
    # by tens of ns/op (the heap's state), so the rounds above stay the same for a build
    # without this entry.
    if hasattr(_torch_bridge, "_bench_empty_callback"):
        floors = {"unprofiled": unprofiled,
                  "empty callback (floor)": empty_callback(False),
                  "empty callback, inputs": empty_callback(True)}
        print("\nThe floor, in rounds of its own: an empty global callback")
        print_ops(rounds(floors, args.rounds, args.ops))

    # torch.profiler in rounds of its own too: the objects it leaves make the garbage
    # collections of whatever runs next, which tripled paddle_prof's report when they
    # shared rounds.
    print("\ntorch.profiler (CPU), in rounds of its own")
    print_ops(rounds({"unprofiled": unprofiled, "torch.profiler": torch_profiler},
                     args.rounds, args.ops))

    scopes = {"nullcontext()": in_window(null_context),
              "record_event fresh": in_window(fresh_record_event),
              "record_event reused": in_window(reused_record_event)}
    ns = rounds(scopes, args.rounds, args.ops)
    base = ns["nullcontext()"][1]
    print(f"\nwith-blocks inside a paddle_prof window, {args.ops} per round, medians of "
          f"{args.rounds} rounds:")
    print(f"{'setup':28} {'ns/with':>9} {'x nullcontext':>14}")
    for name, (_, value, _) in ns.items():
        print(f"{name:28} {value:9.0f} {value / base:14.2f}")


if __name__ == "__main__":
    main()
