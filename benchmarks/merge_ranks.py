"""How long paddle_prof.merge() takes over 1,024 ranks' summaries of 500 rows and 10 steps
each, reading the files included, and the most memory it holds (the targets: 5 s, 2 GiB).

    PYTHONPATH=build/python python3 benchmarks/merge_ranks.py [--ranks 1024] [--rows 500]
        [--rounds 3] [--points N]

One real window with `rows` events (each allocating, so rows carry memory) and 10 steps
writes a summary; the other ranks' summaries are that one with another pid and rank and
each row's times scaled, as ranks of one job would differ; with --points, each
timeline is stretched to N points (2,000 at most: what a long window writes). Prints each
round's seconds, their median, and the process's peak resident memory over the merges
beyond what it held before them.
"""

import argparse
import copy
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import paddle_prof


def stretched(timeline, points):
    """`timeline` ({"t_ms", "bytes"}) with `points` points, its own spread over them."""
    n = len(timeline["t_ms"])
    pick = [min(n - 1, i * n // points) for i in range(points)]
    t = [timeline["t_ms"][i] for i in pick]
    t = [max(a, b) for a, b in zip(t, [t[0]] + t[:-1])]  # stays in time order
    return {"t_ms": t, "bytes": [timeline["bytes"][i] for i in pick]}


def write_summaries(directory, ranks, rows, points=None):
    base = os.path.join(directory, "rank0.json")
    with paddle_prof.profiler("CPU", profile_path=base, stream=io.StringIO()):
        for step in range(10):
            for i in range(rows):
                with paddle_prof.record_event(f"op_{i:04d}", tag=f"[{i % 7}, 64]"):
                    paddle_prof.empty((64 + i,), dtype="float32")
            paddle_prof.mark_step()
    with open(base + ".summary.json") as f:
        summary = json.load(f)
    paths = []
    for rank in range(ranks):
        s = copy.deepcopy(summary)
        s["process"].update(pid=s["process"]["pid"] * 100 + rank, rank=rank, world_size=ranks)
        if points:
            s["timeline"] = {k: stretched(v, points) for k, v in s["timeline"].items()}
        scale = 1 + (rank % 8) / 10
        for row in s["events"]:
            for field in ("total_ms", "self_ms", "min_ms", "max_ms", "ave_ms", "p10_ms",
                          "p50_ms", "p90_ms", "p99_ms"):
                row[field] *= scale
            if "durations" in row:
                row["durations"]["ns"] = [round(ns * scale) for ns in row["durations"]["ns"]]
        path = os.path.join(directory, f"rank{rank}.json.summary.json")
        with open(path, "w") as f:
            json.dump(s, f)
        paths.append(path)
    return paths, len(summary["events"])


# Each round in a process of its own: its peak resident memory is the merge's.
ROUND = """
import resource, sys, time, paddle_prof
paths = sys.argv[1:]
start = time.perf_counter()
merged = paddle_prof.merge(paths)
seconds = time.perf_counter() - start
assert merged.events[0].calls == 10 * len(paths), merged.events[0]
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--points", type=int, default=None)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        paths, rows = write_summaries(directory, options.ranks, options.rows, options.points)
        os.sync()  # the files' write-back would otherwise share the cores with the merge
        seconds, peaks = [], []
        for _ in range(options.rounds):
            done = subprocess.run([sys.executable, "-c", ROUND, *paths], check=True,
                                  capture_output=True, text=True, timeout=600)
            s, peak = done.stdout.split()
            seconds.append(float(s))
            peaks.append(int(peak))
        print(f"merge of {options.ranks} summaries x {rows} rows: "
              + ", ".join(f"{s:.3f}" for s in seconds)
              + f" s; median {statistics.median(seconds):.3f} s; peak resident memory "
              + f"{max(peaks) / (1 << 20):,.0f} MiB")


if __name__ == "__main__":
    main()
