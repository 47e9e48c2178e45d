"""Fuzzes the merge of other processes' Chrome traces (python/paddle_prof/trace_merge.py),
what ``merge --profile-path`` reads beside their summaries.

    fuzz_trace_merge.py SEEDS WORK SECONDS [REGRESSION...]

SEEDS is make_seeds's trace directory (two ranks' traces with their summaries). An input
is rank 0's trace and rank 1's, split as tests/fuzz/fuzz_files.h splits files. Whatever
the traces hold, the merge writes a trace that strict JSON readers read, with a warning
for each trace it leaves out, and raises nothing. The fuzzing is python_fuzzing.py's.
"""

import json
import os
import shutil
import sys

import paddle_prof  # noqa: E402
from python_fuzzing import atheris, fuzz

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


def main(argv):
    seeds, work, seconds, regressions = argv[1], argv[2], int(argv[3]), argv[4:]
    harness = Harness(seeds, work)
    return fuzz("fuzz_trace_merge", harness, [harness.seed(seeds)], work, seconds, regressions)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
