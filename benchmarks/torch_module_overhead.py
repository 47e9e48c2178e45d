"""What paddle_prof.torch's module events cost per nn.Module call: a stack of 50 small
Linear layers, its forward and its backward timed apart, under paddle_prof.torch with
modules=True and modules=False, interleaved so that the machine's drift hits both alike.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/torch_module_overhead.py [--rounds 15]

Prints the medians and the difference per module call (51 per step: the Sequential and
its layers), forward and backward apart.
"""

import argparse
import io
import statistics
import time

import torch

import paddle_prof.torch

LAYERS = 50


def forward(model, x, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        model(x)
    return time.perf_counter() - start


def backward(model, x, steps: int) -> float:
    total = 0.0
    for _ in range(steps):
        loss = model(x).sum()
        start = time.perf_counter()
        loss.backward()
        total += time.perf_counter() - start
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(LAYERS)])
    x = torch.randn(2, 4)
    times = {}
    for _ in range(args.rounds):
        for modules in (True, False):
            with paddle_prof.torch.profiler("CPU", stream=io.StringIO(), modules=modules):
                times.setdefault(("forward", modules), []).append(forward(model, x, args.steps))
                times.setdefault(("backward", modules), []).append(backward(model, x, args.steps))
    calls = (LAYERS + 1) * args.steps
    print(f"torch {torch.__version__}, {args.rounds} rounds of {args.steps} steps, "
          f"{LAYERS + 1} module calls per step; medians:")
    for phase in ("forward", "backward"):
        on = statistics.median(times[(phase, True)])
        off = statistics.median(times[(phase, False)])
        print(f"{phase:9} modules {on * 1e3:7.2f} ms, without {off * 1e3:7.2f} ms: "
              f"{(on - off) / calls * 1e6:.2f} us per module call")


if __name__ == "__main__":
    main()
