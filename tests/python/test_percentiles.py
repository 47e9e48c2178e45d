"""Each row's p10/p50/p90/p99: exact nearest-rank percentiles of its calls' durations,
checked against the trace's own durations of those calls, in the summary, the detailed
table, and over all the calls of a merged row."""

import io
import json
import math
import pathlib
import time

import paddle_prof

# Planned durations, 2 ms apart: more than this VM's scheduling noise on a spin, so the
# call of each rank is the one planned for it.
PLANNED_MS = [6, 2, 18, 10, 4, 14, 20, 8, 12, 16]


def spin(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


def nearest_rank(values, percent):
    ordered = sorted(values)
    return ordered[max(1, math.ceil(percent * len(ordered) / 100)) - 1]


def profile(tmp_path, name, planned):
    path = tmp_path / name
    with paddle_prof.profiler("CPU", profile_path=str(path), stream=io.StringIO()) as prof:
        for ms in planned:
            with paddle_prof.record_event("planned"):
                spin(ms)
    trace = json.loads(path.read_text())
    durations_us = [e["dur"] for e in trace["traceEvents"]
                    if e.get("name") == "planned" and e.get("ph") == "X"]
    assert len(durations_us) == len(planned)
    return prof.report, durations_us, str(path) + ".summary.json"


def planned_row(report):
    return next(e for e in report.events if e.name == "planned")


def test_each_percentile_is_the_call_of_its_nearest_rank(tmp_path):
    report, durations_us, _ = profile(tmp_path, "p.json", PLANNED_MS)
    row = planned_row(report)
    for percent, planned_ms in ((10, 2), (50, 10), (90, 18), (99, 20)):
        got_ms = getattr(row, f"p{percent}_ms")
        # The very call the trace shows at that rank (its dur is in us, to the ns).
        assert abs(got_ms * 1000 - nearest_rank(durations_us, percent)) < 0.002, percent
        assert planned_ms <= got_ms < planned_ms + 2, (percent, got_ms)
    assert row.min_ms <= row.p10_ms <= row.p50_ms <= row.p90_ms <= row.p99_ms <= row.max_ms
    assert row.p99_ms == row.max_ms  # rank 10 of 10
    assert sum(row.durations["calls"]) == 10
    detailed = report.table(detailed=True)
    header = next(line for line in detailed.splitlines() if line.startswith("Event"))
    assert header.split()[6:10] == ["Ave.", "P50", "P99", "Ratio."]
    assert "P50" not in report.table()


def test_every_row_keeps_its_percentiles_in_order(tmp_path):
    with paddle_prof.profiler("CPU", stream=io.StringIO()) as prof:
        for i in range(300):
            with paddle_prof.record_event("outer"):
                with paddle_prof.record_event("inner", tag=str(i % 3)):
                    pass
    for row in prof.report.events:
        if row.calls:
            assert row.min_ms <= row.p10_ms <= row.p50_ms <= row.p90_ms <= row.p99_ms \
                <= row.max_ms, row.name


def test_a_merged_rows_percentiles_are_over_all_its_calls(tmp_path):
    # One run has the short calls, the other the long ones: the merged p50 is the
    # longest short call, which neither run's own percentiles show.
    _, short_us, short = profile(tmp_path, "short.json", [2, 4, 6, 8, 10])
    _, long_us, long = profile(tmp_path, "long.json", [12, 14, 16, 18, 20])
    summary = json.loads(pathlib.Path(long).read_text())
    summary["process"]["pid"] += 1  # as another process wrote it: a merge takes one each
    pathlib.Path(long).write_text(json.dumps(summary))
    merged = planned_row(paddle_prof.merge([short, long]))
    everything = short_us + long_us
    assert merged.calls == 10
    for percent in (10, 50, 90, 99):
        assert abs(getattr(merged, f"p{percent}_ms") * 1000 -
                   nearest_rank(everything, percent)) < 0.002, percent
    assert 10 <= merged.p50_ms < 12
