"""What listening for profiling requests costs a PyTorch training loop while no request
comes: examples/train_cnn.py's model and step in child processes, paddle_prof imported
in each, listening (PADDLE_PROF_LISTEN=1: a thread waiting on its socket, and an
increment per optimizer step) or not, started alternately so that the machine's drift
hits both alike.

    PYTHONPATH=build/python python3 benchmarks/listen_overhead.py [--pairs 9] [--steps 20]
        [--threads 1]

Each child times `rounds` loops of `steps` steps after a warm-up and reports its median
loop; the figure is the median over pairs of listening / not listening, with the range.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def child(args) -> None:
    import torch

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "examples"))
    from train_cnn import SmallCNN

    import paddle_prof
    from paddle_prof import step_boundaries

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(args.batch_size, 1, 28, 28)
    labels = torch.randint(0, 10, (args.batch_size,))
    loops = []
    for _ in range(args.rounds + 1):  # the first is the warm-up
        start = time.perf_counter()
        for _ in range(args.steps):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        loops.append(time.perf_counter() - start)
    listening = os.environ.get("PADDLE_PROF_LISTEN") == "1"
    # Listening counted every step: what it costs was paid.
    assert step_boundaries.optimizer_steps == (len(loops) * args.steps if listening else 0)
    print(json.dumps({"loop": statistics.median(loops[1:]), "torch": torch.__version__,
                      "threads": torch.get_num_threads(), "listening": listening,
                      "paddle_prof": paddle_prof.__file__}))


def run_child(args, listening: bool, sockets: str) -> dict:
    env = dict(os.environ, PADDLE_PROF_LISTEN_DIR=sockets)
    env.pop("PADDLE_PROF_LISTEN", None)
    if listening:
        env["PADDLE_PROF_LISTEN"] = "1"
    out = subprocess.run([sys.executable, __file__, "--child", "--rounds", str(args.rounds),
                          "--steps", str(args.steps), "--batch-size", str(args.batch_size),
                          "--threads", str(args.threads)],
                         env=env, capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch's intra-op threads (default 1: two on two cores swing "
                             "by half from one loop to the next)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    sockets = os.path.join(tempfile.mkdtemp(prefix="pp"), "s")
    ratios, plain, listening = [], [], []
    for i in range(args.pairs):
        order = (False, True) if i % 2 == 0 else (True, False)  # each goes first half the time
        got = {mode: run_child(args, mode, sockets) for mode in order}
        plain.append(got[False]["loop"])
        listening.append(got[True]["loop"])
        ratios.append(got[True]["loop"] / got[False]["loop"])
    info = got[True]
    print(f"torch {info['torch']}, {info['threads']} intra-op threads; {args.pairs} pairs of "
          f"child processes, each the median of {args.rounds} loops of {args.steps} steps, "
          f"batch {args.batch_size}:")
    print(f"  not listening: median {statistics.median(plain) * 1e3:.1f} ms "
          f"({min(plain) * 1e3:.1f}-{max(plain) * 1e3:.1f})")
    print(f"  listening:     median {statistics.median(listening) * 1e3:.1f} ms "
          f"({min(listening) * 1e3:.1f}-{max(listening) * 1e3:.1f})")
    print(f"  listening / not, per pair: median {statistics.median(ratios):.3f} "
          f"({min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
