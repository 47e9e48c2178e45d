"""paddle_prof.load(), paddle_prof.merge() and ``python3 -m paddle_prof merge``: two ranks
profiled in this process (the second summary given another pid, as another process would
have), merged with exact sums, spreads, steps and places, and one process per input in
the merged trace; bad inputs are errors that name the file."""

import io
import json
import os
import subprocess
import sys
import time

import pytest

import paddle_prof
from helpers import row

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
    # Each rank's CPU timeline under the table's label, its bytes unchanged, its times
    # moved onto the merged clock by the rank's start.
    assert [p["input"] for p in d["places"]] == ["rank 0", "rank 1"]
    assert sorted(d["timeline"]) == ["CPU (rank 0)", "CPU (rank 1)"]
    for rank, each in enumerate((s0, s1)):
        mine = d["timeline"][f"CPU (rank {rank})"]
        assert mine["bytes"] == each["timeline"]["CPU"]["bytes"]
        clock = each["clock"]
        shift = (clock["unix_ns"] + clock["offset_ns"] - d["clock"]["unix_ns"]) / 1e6
        assert mine["t_ms"] == [t + shift for t in each["timeline"]["CPU"]["t_ms"]]
    assert [m["path"] for m in d["merged_from"]] == [str(rank0) + ".summary.json",
                                                     str(rank1) + ".summary.json"]
    assert [m["process"] for m in d["merged_from"]] == [s0["process"], s1["process"]]
    assert [(m["label"], m["key"], m["wall_ms"]) for m in d["merged_from"]] == [
        ("rank 0", "0", s0["wall_ms"]), ("rank 1", "1", s1["wall_ms"])]
    assert d["peaks_by"] == {"CPU": {"0": s0["places"][0]["peak_bytes"],
                                     "1": s1["places"][0]["peak_bytes"]}}
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
    with pytest.raises(ValueError, match=f"^{path0} is given twice \\(inputs 1 and 3\\): "
                                         f"merge each profile once$"):
        paddle_prof.merge([rank0, rank1, rank0])
    with pytest.raises(ValueError, match="nothing to merge"):
        paddle_prof.merge([])
    with pytest.raises(TypeError, match="item 1 is a int"):
        paddle_prof.merge([rank0, 7])
    with pytest.raises(TypeError, match="list"):
        paddle_prof.merge(str(rank0))


def cli(*args):
    return subprocess.run([sys.executable, "-m", "paddle_prof", "merge", *map(str, args)],
                          capture_output=True, text=True, timeout=120, env=os.environ.copy())


def test_cli_prints_the_merged_table_and_writes_the_summary_trace_and_page(ranks, tmp_path):
    rank0, rank1 = ranks
    out = tmp_path / "merged.json"
    result = cli(rank0, str(rank1) + ".summary.json", "--sorted-key", "calls",
                 "--profile-path", out)
    assert result.returncode == 0, result.stderr
    assert "Merged from 2 profiles" in result.stdout
    assert "Sorted by number of calls" in result.stdout
    rows = len(summary(out)["events"])
    assert rows == EXTRA_ROWS + 2  # op, only_rank0 and the extras
    assert f"({rows - 50} more rows, all in {out}.summary.json)" in result.stdout
    assert summary(out) == paddle_prof.merge([rank0, rank1], "calls").to_dict()
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["merged.json", "merged.json.html", "merged.json.summary.json", "rank0.json",
         "rank0.json.html", "rank0.json.summary.json", "rank1.json", "rank1.json.html",
         "rank1.json.summary.json"])  # no temporary left behind


def test_the_merged_trace_has_a_process_per_input_on_one_clock(ranks, tmp_path):
    rank0, rank1 = ranks
    out = tmp_path / "merged.json"
    assert cli(rank0, rank1, "--profile-path", out).returncode == 0
    trace = json.loads(out.read_text())
    assert trace["displayTimeUnit"] == "ms"
    s0, s1 = summary(rank0), summary(rank1)
    pids = [s0["process"]["pid"], s1["process"]["pid"]]
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {pids[0]: "rank 0", pids[1]: "rank 1"}
    start = min(s["clock"]["unix_ns"] for s in (s0, s1))
    assert trace["baseTimeNanoseconds"] == start
    for pid, trace_path, s in zip(pids, (rank0, rank1), (s0, s1)):
        own = [e for e in json.loads(trace_path.read_text())["traceEvents"] if e["name"] == "op"]
        moved = [e for e in trace["traceEvents"] if e["name"] == "op" and e["pid"] == pid]
        assert len(own) == len(moved) == (6 if pid == pids[0] else 4)
        shift_us = (s["clock"]["unix_ns"] - start) / 1000
        for before, after in zip(own, moved):
            assert after["ts"] == pytest.approx(before["ts"] + shift_us, abs=0.001)
            assert after["dur"] == before["dur"]
    # Rank 1 started later, so its first op starts later on the merged clock.
    assert s1["clock"]["unix_ns"] > s0["clock"]["unix_ns"]


def test_cli_merges_without_a_missing_trace_and_says_so(ranks, tmp_path):
    rank0, rank1 = ranks
    os.remove(rank1)
    out = tmp_path / "merged.json"
    result = cli(rank0, rank1, "--profile-path", out)
    assert result.returncode == 0, result.stderr
    [warning] = [w for w in summary(out)["warnings"] if "merged trace lacks it" in w]
    assert warning.startswith(f"rank 1: its trace {rank1} could not be read")
    assert "merged trace lacks it" in result.stdout
    pids = {e["pid"] for e in json.loads(out.read_text())["traceEvents"]}
    assert pids == {summary(rank0)["process"]["pid"]}


def test_cli_bad_input_exits_1_naming_the_file(ranks, tmp_path):
    rank0, _ = ranks
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    result = cli(rank0, bad)
    assert result.returncode == 1
    assert f"{bad}: not a paddle_prof summary" in result.stderr
    assert result.stdout == ""
    same = cli(rank0, rank0)
    assert same.returncode == 1
    assert same.stderr == (f"paddle_prof merge: {rank0}.summary.json is given twice (inputs 1 "
                           f"and 2): merge each profile once\n")


def test_one_file_under_two_spellings_is_refused(ranks, tmp_path, monkeypatch):
    _, rank1 = ranks
    # Relative spellings, read from tmp_path by this process and the CLI's.
    monkeypatch.setenv("PYTHONPATH", os.path.dirname(os.path.dirname(paddle_prof.__file__)))
    monkeypatch.chdir(tmp_path)
    os.symlink("rank0.json.summary.json", "link.summary.json")
    first = "rank0.json.summary.json"
    for again, read in (("./rank0.json", "./rank0.json.summary.json"),
                        (str(tmp_path / "rank0.json"), f"{tmp_path}/rank0.json.summary.json"),
                        ("link.summary.json", "link.summary.json")):
        message = f"{first} and {read} are the same file (inputs 1 and 3): merge each profile once"
        with pytest.raises(ValueError) as raised:
            paddle_prof.merge(["rank0.json", rank1, again])
        assert str(raised.value) == message
        with pytest.raises(ValueError) as raised:  # a Report read from it is that file too
            paddle_prof.merge([paddle_prof.load("rank0.json"), rank1, paddle_prof.load(again)])
        assert str(raised.value) == message
        result = cli("rank0.json", rank1, again)
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr == f"paddle_prof merge: {message}\n"
    assert row(paddle_prof.merge(["rank0.json", rank1]).to_dict(), "op")["calls"] == 6 + 4


def test_cli_refuses_to_write_over_an_input(ranks, tmp_path):
    rank0, rank1 = ranks
    solo = tmp_path / "solo.json.summary.json"  # a summary whose trace is gone
    solo.write_text((tmp_path / "rank1.json.summary.json").read_text())
    os.symlink(rank1, tmp_path / "link.json")
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    for out, why in (
            (rank0, f"is the trace of the input {rank0}"),
            (f"{rank0}.summary.json", f"is the summary of the input {rank0}"),
            (tmp_path / "link.json", f"is the trace of the input {rank1}"),  # through the link
            (tmp_path / "solo.json", f"would write {solo}, which is the summary of the input "
                                     f"{solo}")):
        result = cli(rank0, rank1, solo, "--profile-path", out)
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == (f"paddle_prof merge: --profile-path {out} {why}: give another "
                                 f"output path\n")
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_each_inputs_gpu_stays_a_process_of_its_own(ranks, tmp_path):
    gpu_pid = 0x7FFF0000  # where the core draws GPU 0
    for trace_path in ranks:
        trace = json.loads(trace_path.read_text())
        trace["traceEvents"] += [
            {"name": "process_name", "ph": "M", "pid": gpu_pid, "args": {"name": "GPU 0"}},
            {"name": "kernel", "cat": "gpu_kernel", "ph": "X", "pid": gpu_pid, "tid": 7,
             "ts": 5.0, "dur": 1.0},
            {"name": "launch", "cat": "launch", "ph": "s", "pid": gpu_pid, "tid": 7,
             "ts": 5.0, "id": 3}]
        trace_path.write_text(json.dumps(trace))
    out = tmp_path / "merged.json"
    assert cli(*ranks, "--profile-path", out).returncode == 0
    events = json.loads(out.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    labels = [f"rank {r}" for r in range(len(ranks))]
    assert sorted(names.values()) == sorted(labels + [f"{label}: GPU 0" for label in labels])
    kernel_pids = {e["pid"] for e in events if e["name"] == "kernel"}
    assert len(kernel_pids) == 2
    assert all(names[pid].endswith(": GPU 0") for pid in kernel_pids)
    assert len({e["id"] for e in events if e["name"] == "launch"}) == 2


def test_merge_of_three_good_summaries_and_a_bad_one_names_the_bad_one(ranks, tmp_path):
    rank0, rank1 = ranks
    rank2 = tmp_path / "rank2.json"
    rank2.write_text(rank1.read_text())
    s2 = summary(rank1)
    s2["process"].update(pid=s2["process"]["pid"] + 1, rank=2)
    (tmp_path / "rank2.json.summary.json").write_text(json.dumps(s2))
    bad = tmp_path / "rank3.json.summary.json"
    bad.write_text(json.dumps(summary(rank1))[:-100])  # cut short, as by a full disk
    with pytest.raises(ValueError, match=f"^{bad}: not a paddle_prof summary"):
        paddle_prof.merge([rank0, rank1, rank2, bad])
    for files in ([rank0, rank1, bad, rank2], [bad, rank0, rank1, rank2]):
        result = cli(*files, "--profile-path", tmp_path / "merged.json")
        assert result.returncode == 1
        assert result.stderr == f"paddle_prof merge: {bad}: not a paddle_prof summary (not JSON)\n"
        assert result.stdout == ""
        assert not (tmp_path / "merged.json").exists()  # no merge of three passed off as four
    assert len(paddle_prof.merge([rank0, rank1, rank2]).to_dict()["merged_from"]) == 3


def test_cli_errors_are_one_line_however_deep_the_file(tmp_path):
    deep = tmp_path / "deep.json.summary.json"
    deep.write_text('{"version":' + "[" * 100000 + "]" * 100000 + ', "events": []}')
    for command in (["merge", deep], ["html", deep, "-o", tmp_path / "x.html"]):
        result = subprocess.run([sys.executable, "-m", "paddle_prof", *map(str, command)],
                                capture_output=True, text=True, timeout=120,
                                env=os.environ.copy())
        assert result.returncode == 1
        assert result.stderr == (f"paddle_prof {command[0]}: {deep}: not a paddle_prof summary "
                                 f"(nesting deeper than 512 at byte 522)\n")


def merged_trace_of(ranks, tmp_path, rank1_trace):
    """The CLI's merge of both ranks with rank 1's trace replaced: its warnings and trace."""
    rank0, rank1 = ranks
    rank1.write_text(rank1_trace)
    out = tmp_path / "merged.json"
    result = cli(rank0, rank1, "--profile-path", out)
    assert result.returncode == 0, result.stderr
    trace = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"{c} written"))
    return summary(out)["warnings"], trace["traceEvents"]


@pytest.mark.parametrize("trace, why", [
    ("[" * 100000 + "]" * 100000, "maximum recursion depth exceeded"),
    ('{"traceEvents": [{"name": "op", "ph": "X", "pid": 1, "ts": NaN}]}', "NaN is not JSON"),
    ('{"traceEvents": [{"name": "op", "ph": "X", "pid": 1, "ts": 1e400}]}',
     "the number 1e400 is out of range"),
], ids=["nested_100000_deep", "nan", "past_a_double"])
def test_a_trace_that_strict_json_readers_cannot_read_is_left_out_and_named(
        ranks, tmp_path, trace, why):
    warnings, events = merged_trace_of(ranks, tmp_path, trace)
    rank1 = ranks[1]
    [warning] = [w for w in warnings if "merged trace lacks it" in w]
    assert warning.startswith(f"rank 1: its trace {rank1} could not be read (")
    assert why in warning
    assert {e["pid"] for e in events} == {summary(ranks[0])["process"]["pid"]}


def test_trace_entries_that_are_no_event_of_a_process_are_left_out_and_counted(ranks, tmp_path):
    rank1 = ranks[1]
    trace = json.loads(rank1.read_text())
    pid = trace["traceEvents"][0]["pid"]
    trace["traceEvents"] += [
        {"name": "no_pid", "ph": "X", "ts": 1.0}, {"name": "object_pid", "ph": "X", "pid": {}},
        7, {"name": "process_name", "ph": "M", "pid": 99, "args": []},
        {"name": "late", "ph": "X", "pid": pid, "ts": 10 ** 400, "dur": 1}]
    warnings, events = merged_trace_of(ranks, tmp_path, json.dumps(trace))
    label = "rank 1"
    assert (f"{label}: 3 entries of its trace are no event of a process (an object with an "
            f"integer pid); the merged trace lacks them.") in warnings
    names = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert f"{label}: " in names  # the process whose name was no object
    [late] = [e for e in events if e["name"] == "late"]
    assert late["ts"] == 10 ** 400  # no time a float holds: left as it was
