"""What `import paddle_prof.torch` costs a program's ops while no window is open.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/torch_import_cost.py [--pairs 11]

Each process runs `torch.add` on 8 floats, 7 loops of 20,000, and reports its best loop in
ns per op; processes that import paddle_prof.torch first and processes that do not
alternate, pair by pair, so that the machine's drift hits both alike. Prints each pair and
the median of the pairs' differences (and the least one): the import's cost per op.
"""

import argparse
import statistics
import subprocess
import sys

LOOP = r"""
import sys, time
import torch
if sys.argv[1] == "imported":
    import paddle_prof, paddle_prof.torch
a, b = torch.ones(8), torch.ones(8)
for _ in range(20000):
    torch.add(a, b)
best = float("inf")
for _ in range(7):
    start = time.perf_counter()
    for _ in range(20000):
        torch.add(a, b)
    best = min(best, (time.perf_counter() - start) / 20000 * 1e9)
print(best)
"""


def best_ns(setup: str) -> float:
    out = subprocess.run([sys.executable, "-c", LOOP, setup], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=11)
    args = parser.parse_args()
    import torch
    differences = []
    for i in range(args.pairs):
        plain, imported = best_ns("plain"), best_ns("imported")
        differences.append(imported - plain)
        print(f"pair {i + 1}: plain {plain:,.0f} ns/op, imported {imported:,.0f} ns/op "
              f"({imported - plain:+,.0f})")
    print(f"torch {torch.__version__}: import adds {statistics.median(differences):+,.0f} ns "
          f"per op (median of {args.pairs} pairs; least {min(differences):+,.0f})")


if __name__ == "__main__":
    main()
