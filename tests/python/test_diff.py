"""Two runs compared (paddle_prof.diff, python3 -m paddle_prof diff): exact memory, time
judged against the base's spread of calls, new and gone rows, the CLI's exit codes, and
the page in Chromium."""

import io
import json
import subprocess
import sys
import time

import pytest

import paddle_prof
from test_html import render

CALLS = 21


def spin(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


def run(tmp_path, name, op_ms=2.0, steady_ms=2.0, extra_bytes=0, gone=False, new=False):
    """A window of CALLS steps: `op` and `steady` spin for their planned times, `alloc`
    keeps a block of 4,000 + extra_bytes bytes."""
    path = tmp_path / name
    kept = []
    with paddle_prof.profiler("CPU", profile_path=str(path), stream=io.StringIO()) as prof:
        for _ in range(CALLS):
            with paddle_prof.record_event("op"):
                spin(op_ms)
            with paddle_prof.record_event("steady"):
                spin(steady_ms)
            with paddle_prof.record_event("alloc"):
                kept = [paddle_prof.empty((4000 + extra_bytes,), "uint8")]
            if not gone:
                with paddle_prof.record_event("only_in_base" if not new else "only_in_new"):
                    pass
            paddle_prof.mark_step()
    del kept
    return str(path)


def statuses(result):
    return {row["name"]: row["status"] for row in result.rows}


def test_a_run_against_itself_reports_nothing(tmp_path):
    path = run(tmp_path, "a.json")
    result = paddle_prof.diff(path, path)
    assert set(tuple(s) for s in statuses(result).values()) == {("same",)}
    assert result.regressions == [] and all(p["status"] == "same" for p in result.places)
    assert result.changed() == []
    assert "No changes" in result.table()


def test_four_bytes_more_are_more_memory_and_not_under_a_one_percent_threshold(tmp_path):
    base = paddle_prof.load(run(tmp_path, "base.json"))
    fatter = paddle_prof.load(run(tmp_path, "fatter.json", extra_bytes=4))
    result = paddle_prof.diff(base, fatter)
    memory = {"more_memory", "less_memory"}  # its time is a few noisy microseconds
    assert set(statuses(result)["alloc"]) & memory == {"more_memory"}
    alloc = next(r for r in result.rows if r["name"] == "alloc")
    assert alloc["base"]["memory"]["CPU"]["peak_bytes"] == 4000
    assert alloc["new"]["memory"]["CPU"]["peak_bytes"] == 4004
    assert alloc in result.regressions
    cpu = next(p for p in result.places if p["place"] == "CPU")
    # The peak holds two blocks: the new one is made before the old one goes.
    assert cpu["new_peak_bytes"] - cpu["base_peak_bytes"] == 8 and cpu["status"] == "more_memory"
    lenient = paddle_prof.diff(base, fatter, memory_threshold="1%")
    assert not set(statuses(lenient)["alloc"]) & memory
    assert all(r.get("place") or "slower" in r["status"] for r in lenient.regressions)
    assert set(statuses(paddle_prof.diff(fatter, base))["alloc"]) & memory == {"less_memory"}


def test_a_twice_slower_row_is_slower_and_identical_runs_never_are(tmp_path):
    # Spins of 2 ms, 21 calls a row: the median moves only if about half the calls are
    # delayed by over 10% (0.2 ms each), which takes sustained contention, not the odd
    # preemption; and it must pass the base's 90th percentile too. The rows of a few
    # microseconds or less (an empty scope, a small allocation) are left out: there a
    # cache miss is 10%.
    base = run(tmp_path, "base.json")
    slow = paddle_prof.diff(base, run(tmp_path, "slow.json", op_ms=4.0))
    assert statuses(slow)["op"] == ["slower"] and statuses(slow)["steady"] == ["same"]
    assert [r["name"] for r in slow.regressions if r["name"] in ("op", "steady")] == ["op"]
    assert statuses(paddle_prof.diff(run(tmp_path, "slow.json", op_ms=4.0), base))["op"] == \
        ["faster"]
    for i in range(10):
        again = paddle_prof.diff(base, run(tmp_path, f"again{i}.json"))
        assert "slower" not in statuses(again)["op"] + statuses(again)["steady"], again.table()


def test_rows_only_one_side_has_are_new_or_gone(tmp_path):
    result = paddle_prof.diff(run(tmp_path, "base.json"), run(tmp_path, "new.json", new=True))
    rows = statuses(result)
    assert rows["only_in_base"] == ["gone"] and rows["only_in_new"] == ["new"]
    gone = next(r for r in result.rows if r["name"] == "only_in_base")
    assert gone["new"] is None and gone["base"]["calls"] == CALLS
    assert {"only_in_base", "only_in_new"} <= {r["name"] for r in result.changed()}


def test_bad_arguments_are_clear_errors(tmp_path):
    path = run(tmp_path, "a.json")
    with pytest.raises(TypeError, match="give a Report or a summary path"):
        paddle_prof.diff(path, 42)
    with pytest.raises(ValueError, match="^time_threshold must be a percentage such as '10%'; "
                                         "got 'ten percent'$"):
        paddle_prof.diff(path, path, time_threshold="ten percent")
    with pytest.raises(ValueError, match="^memory_threshold must be 0 or more; got -0.5$"):
        paddle_prof.diff(path, path, memory_threshold=-0.5)
    # A bare number in a string could be a fraction or a percentage: neither is guessed.
    with pytest.raises(ValueError, match="^time_threshold must be a percentage such as '10%'"):
        paddle_prof.diff(path, path, time_threshold="10")
    for value in ("1e400%", "nan%", float("inf")):
        with pytest.raises(ValueError, match=f"^time_threshold is not a finite number; got "):
            paddle_prof.diff(path, path, time_threshold=value)
    assert paddle_prof.diff(path, path, "2.5%", 0.5).time_threshold == 0.025


def cli(*args):
    return subprocess.run([sys.executable, "-m", "paddle_prof", "diff", *args],
                          capture_output=True, text=True, timeout=120)


def test_the_cli_prints_the_changes_and_exits_by_regressions(tmp_path):
    base = run(tmp_path, "base.json")
    fatter = run(tmp_path, "fatter.json", extra_bytes=4)
    same = cli(base, base, "--fail-on-regression")
    assert same.returncode == 0 and "No changes" in same.stdout
    found = cli(base, fatter)
    assert found.returncode == 0  # a regression fails only when asked
    line = next(l for l in found.stdout.splitlines() if l.startswith("alloc"))
    assert "more_memory" in line and "3.91 KiB -> 3.91 KiB (+4 B)" in line
    assert "Peak on CPU: 7.81 KiB -> 7.82 KiB (+8 B) (more_memory)" in found.stdout
    failing = cli(base, fatter, "--fail-on-regression")
    assert failing.returncode == 1 and "Regressions: " in failing.stdout
    lenient = cli(base, fatter, "--memory-threshold", "1%", "--time-threshold", "1000%",
                  "--fail-on-regression")
    assert lenient.returncode == 0, lenient.stdout
    missing = cli(base, str(tmp_path / "missing.json"))
    assert missing.returncode == 2 and "paddle_prof diff:" in missing.stderr
    for value, why in (("fast", "must be a percentage such as '10%'; got 'fast'"),
                       ("10", "must be a percentage such as '10%'; got '10'"),
                       ("1e400%", "is not a finite number; got '1e400%'"),
                       ("-1%", "must be 0 or more; got '-1%'")):
        bad = cli(base, base, f"--time-threshold={value}")
        assert (bad.returncode, bad.stdout) == (2, "")
        assert bad.stderr == f"paddle_prof diff: --time-threshold {why}\n"
    assert cli(base, base, "--memory-threshold", "0.5").stderr == (
        "paddle_prof diff: --memory-threshold must be a percentage such as '10%'; got '0.5'\n")
    assert "time 2.5%, memory 0%" in cli(base, base, "--time-threshold", "2.5%").stdout


def test_the_cli_reads_no_directory_and_writes_the_page_over_no_input(tmp_path):
    base = run(tmp_path, "base.json")
    folder = tmp_path / "folder"
    folder.mkdir()
    result = cli(str(folder), base)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"paddle_prof diff: {folder}: cannot read it (Is a directory)\n"
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    for out, what in ((base + ".summary.json", "summary"), (base, "trace")):
        result = cli(base + ".summary.json", base, "-o", out)
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == (f"paddle_prof diff: -o {out} is the {what} of the input "
                                 f"{base}.summary.json: give another output path\n")
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def without_durations(path, scale=1.0):
    """The summary at `path` as one written before call durations were kept, its `op`
    row's times multiplied by `scale`."""
    summary = json.loads(open(path + ".summary.json").read())
    for row in summary["events"]:
        del row["durations"]
        for field in ("p10_ms", "p50_ms", "p90_ms", "p99_ms"):
            row.pop(field)
        if row["name"] == "op":
            for field in ("total_ms", "self_ms", "min_ms", "max_ms", "ave_ms"):
                row[field] *= scale
    out = f"{path}.x{scale}.summary.json"
    with open(out, "w") as f:
        json.dump(summary, f)
    return out


def test_without_call_durations_time_is_judged_by_the_average_call(tmp_path):
    base = run(tmp_path, "base.json")
    old, slow = without_durations(base), without_durations(base, 10)
    result = paddle_prof.diff(old, slow)
    assert statuses(result)["op"] == ["slower"] and statuses(result)["steady"] == ["same"]
    op = next(r for r in result.rows if r["name"] == "op")
    assert op["time_by"] == "average" and op["base"]["p50_ms"] is None
    assert op["new"]["total_ms"] == pytest.approx(10 * op["base"]["total_ms"])
    assert statuses(paddle_prof.diff(slow, old))["op"] == ["faster"]
    assert next(r for r in paddle_prof.diff(base, base).rows)["time_by"] == "median"
    failing = cli(old, slow, "--fail-on-regression")
    assert failing.returncode == 1, failing.stdout
    line = next(l for l in failing.stdout.splitlines() if l.startswith("op "))
    ave = op["base"]["total_ms"] / CALLS
    assert f"avg {ave:.6g} -> {10 * ave:.6g}" in line
    assert ("Time judged by the average call for 4 of 4 rows: a summary has no call durations "
            "(written before them, or edited)") in failing.stdout
    same = cli(old, old, "--fail-on-regression")
    assert same.returncode == 0 and "No changes" in same.stdout
    assert "Time judged by the average call for 4 of 4 rows" in same.stdout
    page = tmp_path / "diff.html"
    result.to_html(page)
    shown = render(page, tmp_path, """
        return {thresholds: document.getElementById('thresholds').textContent,
                op: Array.from(document.querySelectorAll('#rows-table tbody tr'),
                               tr => Array.from(tr.children, td => td.textContent))
                    .find(cells => cells[0] === 'op')};""")["value"]
    assert "Time judged by the average call for 4 of 4 rows" in shown["thresholds"]
    assert shown["op"][3] == f"avg {ave:.6g} \u2192 {10 * ave:.6g}"


def test_names_with_control_characters_stay_on_one_line(tmp_path):
    base = run(tmp_path, "base.json")
    path = tmp_path / "odd.json"
    with paddle_prof.profiler("CPU", profile_path=str(path), stream=io.StringIO()):
        with paddle_prof.record_event("two\nlines", "tab\there"):
            pass
    table = cli(base, str(path)).stdout
    line = next(l for l in table.splitlines() if l.startswith("two\\nlines [tab\\there] "))
    assert line.split()[2] == "new"
    assert not any(line.startswith("lines") for line in table.splitlines())


def test_the_inputs_of_merges_without_ranks_are_counted_from_1(tmp_path):
    merged = paddle_prof.merge([run(tmp_path, "a.json"), run(tmp_path, "b.json")])
    result = paddle_prof.diff(merged, merged)
    assert sorted(p["place"] for p in result.places) == ["CPU (input 1)", "CPU (input 2)"]


def test_a_negative_byte_count_is_no_summary(tmp_path):
    base = run(tmp_path, "base.json")
    summary = json.loads(open(base + ".summary.json").read())
    summary["places"][0]["peak_bytes"] = -5
    edited = tmp_path / "edited.summary.json"
    edited.write_text(json.dumps(summary))
    result = cli(base, str(edited))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"paddle_prof diff: {edited}: not a paddle_prof summary "
                             f"('peak_bytes' is -5, not an integer from 0 to "
                             f"9223372036854775807)\n")


def test_the_page_shows_changed_rows_memory_of_both_runs_and_steps(tmp_path):
    base = run(tmp_path, "base.json")
    new = run(tmp_path, "new.json", op_ms=4.0, extra_bytes=4, new=True)
    page = tmp_path / "diff.html"
    done = cli(base, new, "-o", str(page))
    assert done.returncode == 0 and f"wrote {page}" in done.stdout
    result = render(page, tmp_path, """
        const rows = Array.from(document.querySelectorAll('#rows-table tbody tr'),
                                tr => Array.from(tr.children, td => td.textContent));
        return {rows,
                verdict: document.getElementById('verdict').textContent,
                charts: Array.from(document.querySelectorAll('#memory-charts figure'),
                                   f => ({place: f.dataset.place,
                                          runs: Array.from(f.querySelectorAll('polyline'),
                                                           p => p.dataset.run)})),
                steps: document.querySelectorAll('#steps-table tbody tr').length};""")["value"]
    by_name = {row[0]: row for row in result["rows"]}
    assert by_name["op"][1].startswith("slower")
    assert "more_memory" in by_name["alloc"][1]
    assert by_name["alloc"][5] == "3.91 KiB \u2192 3.91 KiB (+4 B)"
    assert by_name["only_in_new"][1] == "new" and by_name["only_in_base"][1] == "gone"
    assert "regression" in result["verdict"]
    assert result["charts"] == [{"place": "CPU", "runs": ["base", "new"]}]
    assert result["steps"] == CALLS
    diff = paddle_prof.diff(base, new)
    assert len(result["rows"]) == len(diff.changed())


def test_a_name_cannot_end_the_pages_script(tmp_path):
    base = run(tmp_path, "base.json")
    path = tmp_path / "odd.json"
    with paddle_prof.profiler("CPU", profile_path=str(path), stream=io.StringIO()):
        with paddle_prof.record_event("</script><script>window.__errors.push('ran')</script>"):
            pass
    page = tmp_path / "odd.html"
    paddle_prof.diff(base, str(path)).to_html(page)
    result = render(page, tmp_path, """
        return Array.from(document.querySelectorAll('#rows-table tbody tr td.name'),
                          td => td.textContent);""")
    assert "</script><script>window.__errors.push('ran')</script>" in result["value"]


def threaded_window(per_thread):
    """`work` on the main thread (3 calls) and on a second thread (2 calls)."""
    import threading
    paddle_prof.start_profiler("CPU")

    def work(calls):
        for _ in range(calls):
            with paddle_prof.record_event("work"):
                spin(1.0)

    worker = threading.Thread(target=work, args=(2,))
    worker.start()
    worker.join()
    work(3)
    return paddle_prof.stop_profiler(per_thread=per_thread, print_report=False)


def test_rows_split_by_thread_match_by_thread_or_fold_against_an_unsplit_run():
    split, whole = threaded_window(True), threaded_window(False)
    by_thread = paddle_prof.diff(split, threaded_window(True))
    assert sorted(r["base"]["calls"] for r in by_thread.rows if r["name"] == "work") == [2, 3]
    assert all("thread" in r for r in by_thread.rows)
    folded = paddle_prof.diff(split, whole)
    work = [r for r in folded.rows if r["name"] == "work"]
    assert len(work) == 1 and "thread" not in work[0]
    assert work[0]["base"]["calls"] == work[0]["new"]["calls"] == 5
    assert "slower" not in work[0]["status"] and "faster" not in work[0]["status"]


def forked_window(child_ms):
    """`work` spun `child_ms` in a forked child, then 2 ms in this process, one row each:
    one after the other, so that neither slows the other's calls."""
    import os
    paddle_prof.start_profiler("CPU")
    pid = os.fork()
    if pid == 0:
        for _ in range(CALLS):
            with paddle_prof.record_event("work"):
                spin(child_ms)
        os._exit(0)  # writes the followed child's profile first
    assert os.waitpid(pid, 0)[1] == 0
    for _ in range(CALLS):
        with paddle_prof.record_event("work"):
            spin(2.0)
    return paddle_prof.stop_profiler(per_process=True, print_report=False)


def test_rows_split_by_process_match_by_the_process_not_its_pid():
    base, new = forked_window(2.0), forked_window(8.0)
    assert len({r.process for r in base.events if r.name == "work"}) == 2
    work = {r["process"]: r for r in paddle_prof.diff(base, new).rows if r["name"] == "work"}
    assert set(work) == {"main process", "child 0"}
    assert work["child 0"]["status"] == ["slower"]
    assert "slower" not in work["main process"]["status"]


def few_calls_run(tmp_path, name, ms, calls):
    """`calls` calls of `op`, spinning `ms` each, and one call of `once`, spinning `ms`."""
    path = tmp_path / name
    with paddle_prof.profiler("CPU", profile_path=str(path), stream=io.StringIO()):
        for _ in range(calls):
            with paddle_prof.record_event("op"):
                spin(ms)
        with paddle_prof.record_event("once"):
            spin(ms)
    return str(path)


def test_time_is_judged_only_where_each_side_has_ten_calls_and_memory_always(tmp_path):
    # Five times slower: a row of 10 calls is slower; a row of 9 calls, or of one, has no
    # spread to judge its time by, and the table says so.
    for calls, judged in ((10, True), (9, False)):
        base = few_calls_run(tmp_path, f"base{calls}.json", 1.0, calls)
        new = few_calls_run(tmp_path, f"new{calls}.json", 5.0, calls)
        result = paddle_prof.diff(base, new)
        rows = {row["name"]: row for row in result.rows}
        assert rows["once"]["status"] == ["same"] and rows["once"]["time_by"] == "few_calls"
        if judged:
            assert rows["op"]["status"] == ["slower"] and rows["op"]["time_by"] == "median"
            assert "Time not judged for 1 of 2 rows: fewer than 10 calls" in result.table()
        else:
            assert rows["op"]["status"] == ["same"] and rows["op"]["time_by"] == "few_calls"
            assert result.regressions == []
            assert "Time not judged for 2 of 2 rows: fewer than 10 calls" in result.table()
