"""What telling the memory kinds costs paddle_prof.torch per step: the scans of a model's
parameters and gradients and of its optimizer's state (paddle_prof/torch/memory.py),
after each optimizer step and at each step's end. A model of N parameter tensors (small
ones: the cost is per tensor) and Adam, stepped once so that every state tensor exists;
then, each round, a backward that makes every gradient again (zero_grad to None) and the
two scans of a step timed alone, inside a window. The first scan of a window, which
tells every block, is timed too.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/torch_memory_scan.py [--tensors 10000]

Prints the medians of the rounds, in ms, and per 10,000 parameter tensors.
"""

import argparse
import io
import statistics
import time

import torch

import paddle_prof.torch
from paddle_prof.torch.memory import MemoryKinds


class Many(torch.nn.Module):
    def __init__(self, tensors: int) -> None:
        super().__init__()
        self.weights = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(4))
                                              for _ in range(tensors))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum(w.sum() for w in self.weights) * x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tensors", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    model = Many(args.tensors)
    optimizer = torch.optim.Adam(model.parameters())
    per_10k = 10000 / args.tensors
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO(), modules=False):
        model(torch.ones(1)).sum().backward()
        optimizer.step()
        first, steps = [], []
        for _ in range(args.rounds):
            kinds = MemoryKinds()
            kinds.note_root(model)
            paddle_prof.torch._torch_bridge.categorize_memory(True)  # nothing told yet
            start = time.perf_counter()
            kinds.note_optimizer(optimizer)
            kinds.scan()
            first.append(time.perf_counter() - start)
        after_step, step_end = [], []
        for _ in range(args.rounds):
            optimizer.zero_grad(set_to_none=True)
            model(torch.ones(1)).sum().backward()
            start = time.perf_counter()
            kinds.scan_optimizer(optimizer)  # after the optimizer's step
            middle = time.perf_counter()
            kinds.scan()                     # at the step's end
            after_step.append(middle - start)
            step_end.append(time.perf_counter() - middle)
    print(f"torch {torch.__version__}: {args.tensors} parameter tensors (and as many gradients, "
          f"2 x as many Adam state tensors and {args.tensors} step counts); "
          f"ms, and ms per 10,000 parameter tensors:")
    for what, times in (("a step's scans, new gradients", list(map(sum, zip(after_step,
                                                                             step_end)))),
                        ("  after the optimizer's step", after_step),
                        ("  at the step's end", step_end),
                        ("a window's first scans", first)):
        ms = statistics.median(times) * 1e3
        print(f"  {what}: {ms:.2f}, {ms * per_10k:.2f}")


if __name__ == "__main__":
    main()
