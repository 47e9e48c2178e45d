"""Fuzzes the merge of other processes' Chrome traces (python/paddle_prof/trace_merge.py),
what ``merge --profile-path`` reads beside their summaries.

    fuzz_trace_merge.py SEEDS WORK SECONDS [REGRESSION...]

SEEDS is make_seeds's trace directory (two ranks' traces with their summaries). An input
is rank 0's trace and rank 1's, split as tests/fuzz/fuzz_files.h splits files. Whatever
the traces hold, the merge writes a trace that strict JSON readers read, with a warning
for each trace it leaves out, and raises nothing. The REGRESSION inputs run first; then
SECONDS of fuzzing, coverage-guided under atheris where it is installed, else a seeded
mutation loop (byte flips, truncations, splices, deep nesting). WORK keeps the corpus and
any failing input (crash-*). Exits non-zero on a failure.
"""

import json
import os
import random
import shutil
import sys
import time
import traceback

try:
    import atheris
except ImportError:
    atheris = None

import paddle_prof  # noqa: E402

if atheris is not None:  # coverage of the merge alone
    with atheris.instrument_imports(include=["paddle_prof.trace_merge"]):
        from paddle_prof.trace_merge import merge_traces
else:
    from paddle_prof.trace_merge import merge_traces

SEPARATOR = b"\n@@@@\n"


def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


class Harness:
    def __init__(self, seeds, work):
        self.dir = os.path.join(work, "scratch")
        os.makedirs(self.dir, exist_ok=True)
        self.traces = [os.path.join(self.dir, f"rank{r}.json") for r in (0, 1)]
        for trace in self.traces:
            name = os.path.basename(trace) + ".summary.json"
            shutil.copy(os.path.join(seeds, name), self.dir)
        self.inputs = [paddle_prof.load(trace) for trace in self.traces]
        self.merged = paddle_prof.merge(self.inputs)
        self.out = os.path.join(self.dir, "merged.json")

    def seed(self, seeds):
        return SEPARATOR.join(open(os.path.join(seeds, os.path.basename(t)), "rb").read()
                              for t in self.traces)

    def __call__(self, data):
        parts = data.split(SEPARATOR)
        for i, trace in enumerate(self.traces):
            with open(trace, "wb") as f:
                f.write(parts[i] if i < len(parts) else b"")
        merge_traces(self.merged, self.out)
        with open(self.out, encoding="utf-8") as f:
            merged = json.load(f, parse_constant=_refuse_constant)
        assert isinstance(merged["traceEvents"], list)


def _mutate(rng, data, corpus):
    """One of libFuzzer's kinds of change, and deep nesting, which it rarely makes."""
    data = bytearray(data)
    kind = rng.randrange(6)
    at = rng.randrange(len(data) + 1)
    if kind == 0 and data:
        data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
    elif kind == 1:
        del data[at:]
    elif kind == 2:
        other = rng.choice(corpus)
        start = rng.randrange(len(other) + 1)
        data[at:at] = other[start:start + rng.randrange(1, 200)]
    elif kind == 3:
        del data[at:at + rng.randrange(1, 64)]
    elif kind == 4:
        depth = rng.choice([10, 1000, 100000])
        data[at:at] = b"[" * depth + b"]" * depth
    else:
        data[at:at] = rng.choice([b"NaN", b"1e999", b"-1", b"null", b"[]", b"{}", b'"x"', b"1" * 400,
                                  b'"pid":[]', b'"args":[]', b'"ts":1e400', b'"id":true'])
    return bytes(data)


def _mutation_loop(harness, seeds, work, seconds):
    rng = random.Random(1)
    corpus = [harness.seed(seeds)]
    deadline = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < deadline:
        data = _mutate(rng, rng.choice(corpus), corpus)
        try:
            harness(data)
        except Exception:  # noqa: BLE001 - every exception is a finding
            path = os.path.join(work, f"crash-{runs}")
            with open(path, "wb") as f:
                f.write(data)
            traceback.print_exc()
            print(f"fuzz_trace_merge: failing input written to {path}", file=sys.stderr)
            return 1
        if len(corpus) < 256:
            corpus.append(data)
        runs += 1
    print(f"fuzz_trace_merge: {runs} inputs in {seconds} s, no failure (mutation loop; "
          f"atheris is not installed)")
    return 0


def main(argv):
    seeds, work, seconds, regressions = argv[1], argv[2], int(argv[3]), argv[4:]
    harness = Harness(seeds, work)
    for path in regressions:
        with open(path, "rb") as f:
            harness(f.read())
    if seconds <= 0:
        return 0
    if atheris is None:
        return _mutation_loop(harness, seeds, work, seconds)
    corpus = os.path.join(work, "corpus")
    os.makedirs(corpus, exist_ok=True)
    with open(os.path.join(corpus, "seed"), "wb") as f:
        f.write(harness.seed(seeds))
    atheris.Setup([argv[0], corpus, f"-max_total_time={seconds}", "-timeout=10",
                   "-rss_limit_mb=2048", f"-artifact_prefix={work}/"], harness)
    atheris.Fuzz()  # exits: non-zero on a failure
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
