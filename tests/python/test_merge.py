"""paddle_prof.load() and paddle_prof.merge(): two ranks
profiled in this process (the second summary given another pid, as another process would
have), merged with exact sums, spreads, steps and places; bad inputs are errors that name the
file."""

import io
import json
import time

import pytest

import paddle_prof

EXTRA_ROWS = 55  # rank 0's: more rows than a table prints


def profile_rank(path, rank, monkeypatch, op_sleep_s, op_calls, extra_rows=0):
    monkeypatch.setenv("RANK", str(rank))
    monkeypatch.setenv("WORLD_SIZE", "2")
    with paddle_prof.profiler("CPU", profile_path=str(path), stream=io.StringIO()):
        for step in range(2):
            for _ in range(op_calls):
                with paddle_prof.record_event("op"):
                    x = paddle_prof.empty((1000,), dtype="float32")  # 4,000 bytes
                    time.sleep(op_sleep_s)
                    del x
            paddle_prof.mark_step()
        if rank == 0:
            with paddle_prof.record_event("only_rank0"):
                pass
        for i in range(extra_rows):
            with paddle_prof.record_event(f"extra_{i:02d}"):
                pass


def edit_summary(path, edit):
    summary = json.loads(path.read_text())
    edit(summary)
    path.write_text(json.dumps(summary))


@pytest.fixture
def ranks(tmp_path, monkeypatch):
    """Two ranks' trace paths; rank 1 straggles in op, and is 'another process'."""
    rank0, rank1 = tmp_path / "rank0.json", tmp_path / "rank1.json"
    profile_rank(rank0, 0, monkeypatch, 0.001, 3, EXTRA_ROWS)
    profile_rank(rank1, 1, monkeypatch, 0.015, 2)
    edit_summary(tmp_path / "rank1.json.summary.json",
                 lambda s: s["process"].update(pid=s["process"]["pid"] + 1))
    return rank0, rank1


def summary(trace_path):
    with open(str(trace_path) + ".summary.json") as f:
        return json.load(f)


def row(d, name):
    [found] = [e for e in d["events"] if e["name"] == name]
    return found


def test_load_reads_a_summary_back_whole(ranks):
    rank0, _ = ranks
    loaded = paddle_prof.load(str(rank0) + ".summary.json")
    assert loaded.to_dict() == summary(rank0)
    assert paddle_prof.load(rank0).to_dict() == summary(rank0)  # the trace path stands for it
    assert row(loaded.to_dict(), "op")["calls"] == 6
    assert loaded.to_dict()["process"]["rank"] == 0


def test_merge_sums_rows_and_spreads_them_over_the_ranks(ranks):
    rank0, rank1 = ranks
    s0, s1 = summary(rank0), summary(rank1)
    merged = paddle_prof.merge([rank0, str(rank1) + ".summary.json"])
    d = merged.to_dict()
    op, op0, op1 = row(d, "op"), row(s0, "op"), row(s1, "op")
    assert op["calls"] == 10
    assert op["total_ms"] == pytest.approx(op0["total_ms"] + op1["total_ms"], rel=1e-12)
    assert op["min_ms"] == min(op0["min_ms"], op1["min_ms"])
    assert op["max_ms"] == max(op0["max_ms"], op1["max_ms"])
    assert op["memory"]["CPU"]["alloc_count"] == 10
    assert op["memory"]["CPU"]["alloc_bytes"] == 40_000
    assert op["memory"]["CPU"]["peak_bytes"] == 4_000
    assert op["spread"] == {"by": "rank", "total_ms": {
        "min": op0["total_ms"], "median": op0["total_ms"], "max": op1["total_ms"], "argmax": 1}}
    only = row(d, "only_rank0")
    assert only["calls"] == 1
    assert only["spread"]["total_ms"]["min"] == 0  # rank 1 has no such row: it counts 0 ms
    assert only["spread"]["total_ms"]["argmax"] == 0
    assert sum(e["ratio"] for e in d["events"]) == pytest.approx(1)
    assert d["wall_ms"] == max(s0["wall_ms"], s1["wall_ms"])
    assert merged.wall_ms == d["wall_ms"]


def test_merge_lines_up_steps_places_and_inputs(ranks):
    rank0, rank1 = ranks
    s0, s1 = summary(rank0), summary(rank1)
    d = paddle_prof.merge([rank0, rank1]).to_dict()
    assert len(d["steps"]) == 2
    for merged_step, step0, step1 in zip(d["steps"], s0["steps"], s1["steps"]):
        assert merged_step["wall_ms_by"] == {"0": step0["wall_ms"], "1": step1["wall_ms"]}
        assert merged_step["wall_ms"] == step1["wall_ms"]
        assert merged_step["slowest"] == 1
    pids = [s0["process"]["pid"], s1["process"]["pid"]]
    assert [(p["place"], p["process"]) for p in d["places"]] == [("CPU", pids[0]), ("CPU", pids[1])]
    assert [m["path"] for m in d["merged_from"]] == [str(rank0) + ".summary.json",
                                                     str(rank1) + ".summary.json"]
    assert [m["process"] for m in d["merged_from"]] == [s0["process"], s1["process"]]
    assert d["process"]["role"] == "merged"
    assert d["process"]["rank"] is None
    assert d["process"]["world_size"] == 2
    starts = [s["clock"]["unix_ns"] + s["clock"]["offset_ns"] for s in (s0, s1)]
    assert d["clock"] == {"unix_ns": min(starts), "offset_ns": 0}


def test_merge_names_the_straggler(ranks):
    rank0, rank1 = ranks
    merged = paddle_prof.merge([rank0, rank1])
    spread = row(merged.to_dict(), "op")["spread"]["total_ms"]
    expected = (f"rank 1 is a straggler in op: {spread['max']:.1f} ms there against a median "
                f"of {spread['median']:.1f} ms over 2 ranks")
    assert expected in merged.warnings
    assert any(w.startswith("rank 1 is a straggler in 2 of 2 steps (step 0: ")
               for w in merged.warnings), merged.warnings


def test_merge_takes_reports_and_a_sort_key(ranks):
    rank0, rank1 = ranks
    by_paths = paddle_prof.merge([rank0, rank1], "calls")
    by_reports = paddle_prof.merge(iter([paddle_prof.load(rank0), paddle_prof.load(rank1)]),
                                   "calls")
    assert by_reports.to_dict() == by_paths.to_dict()
    assert by_paths.sorted_by == "calls"
    assert by_paths.events[0].name == "op"
    with pytest.raises(ValueError, match="sorted_key"):
        paddle_prof.merge([rank0, rank1], "fastest")


def test_bad_inputs_are_errors_that_name_the_file(ranks, tmp_path):
    rank0, rank1 = ranks
    not_summary = tmp_path / "notes.json"
    not_summary.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match=f"{not_summary}: not a paddle_prof summary"):
        paddle_prof.merge([rank0, not_summary])
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("not json at all")
    with pytest.raises(ValueError, match=f"{garbage}: not a paddle_prof summary"):
        paddle_prof.load(garbage)
    version2 = tmp_path / "v2.json.summary.json"
    version2.write_text(json.dumps(dict(summary(rank1), version=2)))
    with pytest.raises(ValueError, match=f"{version2}: a paddle_prof summary of version 2"):
        paddle_prof.merge([rank0, version2])
    missing = tmp_path / "missing.json.summary.json"
    with pytest.raises(ValueError, match=f"{missing}: cannot read it"):
        paddle_prof.merge([rank0, missing])
    path0 = str(rank0) + ".summary.json"
    with pytest.raises(ValueError, match=f"{path0} and {path0} are profiles of the same process"):
        paddle_prof.merge([rank0, rank1, rank0])
    with pytest.raises(ValueError, match="nothing to merge"):
        paddle_prof.merge([])
    with pytest.raises(TypeError, match="item 1 is a int"):
        paddle_prof.merge([rank0, 7])
    with pytest.raises(TypeError, match="list"):
        paddle_prof.merge(str(rank0))
