"""What profiling adds to one small PaddlePaddle op, and to a small training loop.

    PYTHONPATH=build/python "$(bash scripts/paddle_env.sh)/bin/python" \\
        benchmarks/paddle_op_overhead.py [--rounds 7] [--ops 20000] [--steps 50]

Ops: a loop of `ops` paddle.add on 8-element tensors (eager), under each setup:
unprofiled; paddle_prof.paddle.profiler; paddle.profiler.Profiler (CPU), and with
profile_memory=True. Each profiled figure covers the loop inside the window only; the
stop (the report, or Paddle's summary) is timed apart. The MLP: `steps` training steps of
a 784-256-10 MLP with Adam on a batch of 64, unprofiled and under paddle_prof.

Setups run in interleaved rounds, each round running every setup once, so that the
machine's drift hits all alike; figures are medians over the rounds. The process has
imported paddle_prof.paddle throughout (its hooks are in place between windows too), so
"unprofiled" is the imported program's floor.
"""

import argparse
import contextlib
import io
import statistics
import tempfile
import time

import paddle

import paddle_prof
import paddle_prof.paddle


def op_loop(ops: int) -> None:
    a, b = paddle.ones([8]), paddle.ones([8])
    for _ in range(ops):
        paddle.add(a, b)


def mlp_steps(steps: int) -> None:
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(784, 256), paddle.nn.ReLU(),
                                 paddle.nn.Linear(256, 10))
    optimizer = paddle.optimizer.Adam(parameters=model.parameters())
    x, y = paddle.randn([64, 784]), paddle.randint(0, 10, [64, 1])
    for _ in range(steps):
        loss = paddle.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()


def timed(work, window=None):
    """Seconds of `work` inside `window` (a context manager, or none), and of its exit."""
    if window is None:
        start = time.perf_counter()
        work()
        return time.perf_counter() - start, 0.0
    window.__enter__()
    start = time.perf_counter()
    work()
    loop = time.perf_counter() - start
    start = time.perf_counter()
    window.__exit__(None, None, None)
    return loop, time.perf_counter() - start


class PaddleProfiler:
    """paddle.profiler.Profiler as a window: started, then stopped with its summary; its
    trace is written, as by default, into a folder of its own, removed after."""

    def __init__(self, memory: bool) -> None:
        self.memory = memory

    def __enter__(self):
        self.folder = tempfile.TemporaryDirectory()
        self.profiler = paddle.profiler.Profiler(
            targets=[paddle.profiler.ProfilerTarget.CPU], profile_memory=self.memory,
            on_trace_ready=paddle.profiler.export_chrome_tracing(self.folder.name))
        self.profiler.start()

    def __exit__(self, *exc_info):
        self.profiler.stop()
        with contextlib.redirect_stdout(io.StringIO()):  # its table, built and not shown
            self.profiler.summary()
        self.folder.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=20000)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    ours = lambda: paddle_prof.paddle.profiler("CPU", stream=io.StringIO())  # noqa: E731
    op_setups = {
        "unprofiled": lambda: None,
        "paddle_prof.paddle": ours,
        "paddle.profiler": lambda: PaddleProfiler(memory=False),
        "paddle.profiler, profile_memory": lambda: PaddleProfiler(memory=True),
    }
    mlp_setups = {"unprofiled": lambda: None, "paddle_prof.paddle": ours}
    op_loop(args.ops)  # warm up
    mlp_steps(5)
    loops = {name: [] for name in op_setups}
    exits = {name: [] for name in op_setups}
    mlp = {name: [] for name in mlp_setups}
    for _ in range(args.rounds):
        for name, window in op_setups.items():
            loop, stop = timed(lambda: op_loop(args.ops), window())
            loops[name].append(loop / args.ops * 1e9)
            exits[name].append(stop / args.ops * 1e9)
        for name, window in mlp_setups.items():
            mlp[name].append(timed(lambda: mlp_steps(args.steps), window())[0])
    floor = statistics.median(loops["unprofiled"])
    print(f"paddle.add on 8 floats, {args.ops} ops, median of {args.rounds} rounds "
          f"(paddle {paddle.__version__}):")
    print(f"  {'setup':34} {'ns/op':>8} {'added':>8} {'stop ns/op':>11}")
    for name in op_setups:
        median = statistics.median(loops[name])
        print(f"  {name:34} {median:8.0f} {median - floor:+8.0f} "
              f"{statistics.median(exits[name]):11.0f}")
    plain = statistics.median(mlp["unprofiled"])
    print(f"MLP 784-256-10, Adam, batch 64, {args.steps} steps: unprofiled {plain:.3f} s, "
          f"paddle_prof.paddle {statistics.median(mlp['paddle_prof.paddle']):.3f} s "
          f"({statistics.median(mlp['paddle_prof.paddle']) / plain:.3f}x)")


if __name__ == "__main__":
    main()
