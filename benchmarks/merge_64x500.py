"""How long paddle_prof.merge() takes over 64 ranks' summaries of 500 rows each, reading
the files included (the target: 5 s).

    PYTHONPATH=build/python python3 benchmarks/merge_64x500.py [--ranks 64] [--rows 500]
        [--rounds 5]

One real window with `rows` events (each allocating, so rows carry memory) and 10 steps
writes a summary; the other ranks' summaries are that one with another pid and rank and
each row's times scaled, as ranks of one job would differ. Prints each round's seconds
and their median.
"""

import argparse
import copy
import io
import json
import os
import statistics
import tempfile
import time

import paddle_prof


def write_summaries(directory, ranks, rows):
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        paths, rows = write_summaries(directory, options.ranks, options.rows)
        seconds = []
        for _ in range(options.rounds):
            start = time.perf_counter()
            merged = paddle_prof.merge(paths)
            seconds.append(time.perf_counter() - start)
        assert merged.events[0].calls == 10 * options.ranks, merged.events[0]
        print(f"merge of {options.ranks} summaries x {rows} rows: "
              + ", ".join(f"{s:.3f}" for s in seconds)
              + f" s; median {statistics.median(seconds):.3f} s")


if __name__ == "__main__":
    main()
