"""What comparing two large runs costs: paddle_prof.diff of two merged profiles of 64
ranks, 500 rows each (each row 40 calls a rank, with their duration counts), read from
their summary files, as `python3 -m paddle_prof diff` reads them.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/diff_benchmark.py [--ranks 64]

Prints the merged summaries' sizes and the median of the rounds, in seconds.
"""

import argparse
import io
import json
import os
import statistics
import tempfile
import time

import paddle_prof


def one_rank(directory, rows, calls):
    path = os.path.join(directory, "rank.json")
    with paddle_prof.profiler("CPU", profile_path=path, stream=io.StringIO()):
        for call in range(calls):
            for row in range(rows):
                with paddle_prof.record_event(f"op_{row}", tag=f"[{call % 3}, 64]" if row % 2 else None):
                    pass
    with open(path + ".summary.json") as f:
        return json.load(f)


def merged_run(directory, name, rank_summary, ranks):
    paths = []
    for rank in range(ranks):
        summary = json.loads(json.dumps(rank_summary))
        summary["process"]["pid"] = 100000 + rank
        summary["process"]["rank"] = rank
        summary["process"]["world_size"] = ranks
        path = os.path.join(directory, f"{name}{rank}.summary.json")
        with open(path, "w") as f:
            json.dump(summary, f)
        paths.append(path)
    out = os.path.join(directory, f"{name}.summary.json")
    merged = paddle_prof.merge(paths)
    with open(out, "w") as f:
        json.dump(merged.to_dict(), f)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        # Rows of the same name and tag merge: 500 names, half with three tags.
        rank_summary = one_rank(directory, args.rows // 2, 40)
        base = merged_run(directory, "base", rank_summary, args.ranks)
        new = merged_run(directory, "new", rank_summary, args.ranks)
        rows = len(paddle_prof.load(base).events)
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            result = paddle_prof.diff(base, new)
            times.append(time.perf_counter() - start)
        print(f"{args.ranks} ranks, {rows} merged rows, summaries of "
              f"{os.path.getsize(base) / 1e6:.1f} MB: diff {statistics.median(times):.3f} s "
              f"(median of {args.rounds}), {len(result.changed())} changed rows")


if __name__ == "__main__":
    main()
