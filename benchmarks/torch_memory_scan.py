"""What telling the memory kinds costs paddle_prof.torch per step: the scan of a model's
parameters and gradients and of its optimizer's state (paddle_prof/torch_memory.py),
which runs after each optimizer step and at each step's end. A model of N parameter
tensors (small ones: the cost is per tensor), Adam stepped once so that every gradient
and state tensor exists, then the scan timed alone inside a window.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/torch_memory_scan.py [--tensors 10000]

Prints the median of the rounds, in ms per scan and per 10,000 parameter tensors.
"""

import argparse
import io
import statistics
import time

import torch

import paddle_prof.torch
from paddle_prof.torch_memory import MemoryKinds


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
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO(), modules=False):
        model(torch.ones(1)).sum().backward()
        optimizer.step()
        kinds = MemoryKinds()
        kinds.note_root(model)
        kinds.note_optimizer(optimizer)
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            kinds.scan()
            times.append(time.perf_counter() - start)
    ms = statistics.median(times) * 1e3
    print(f"torch {torch.__version__}: {args.tensors} parameter tensors (and as many gradients, "
          f"2 x as many Adam state tensors and {args.tensors} step counts): scan {ms:.2f} ms, "
          f"{ms * 10000 / args.tensors:.2f} ms per 10,000 parameter tensors")


if __name__ == "__main__":
    main()
