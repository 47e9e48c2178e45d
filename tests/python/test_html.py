"""The HTML report, rendered by Debian's headless Chromium.

No DevTools library: each test copies a written page, puts a probe script first in its
<head> (it records errors) and another at the end of its <body> (it clicks, reads the DOM
and writes what it saw as JSON into <pre id="test-result">), then reads the DOM Chromium
dumps. A machine without chromium fails these tests: install it with
scripts/install_deps.sh.
"""

import html
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys

import pytest

import paddle_prof
from paddle_prof import _core
from paddle_prof._core import format_bytes

REPO = pathlib.Path(__file__).resolve().parents[2]
# build/python/paddle_prof -> build: the screenshot lands in the build tree.
BUILD_DIR = pathlib.Path(paddle_prof.__file__).resolve().parents[2]

HEAD_PROBE = """<script>
window.__errors = [];
window.__start = performance.now();
window.onerror = function (message) { window.__errors.push('onerror: ' + message); };
(function () {
  const original = console.error;
  console.error = function (...args) {
    window.__errors.push('console.error: ' + args.join(' '));
    original.apply(console, args);
  };
})();
</script>"""

TAIL_PROBE = """<script>
(function () {
  const result = {render_ms: performance.now() - window.__start};
  const texts = selector => Array.from(document.querySelectorAll(selector), e => e.textContent);
  const names = () => texts('#events-table tbody tr td:first-child');
  const click = key => document.querySelector(`th[data-key="${key}"]`).click();
  try {
    result.value = (function () { %s })();
  } catch (e) {
    window.__errors.push('probe: ' + e);
  }
  result.errors = window.__errors;
  result.resources = performance.getEntriesByType('resource').map(r => r.name);
  const pre = document.createElement('pre');
  pre.id = 'test-result';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
})();
</script>"""


def chromium():
    path = shutil.which("chromium")
    assert path, ("chromium is not installed: DEBIAN_FRONTEND=noninteractive apt-get install "
                  "-y chromium (scripts/install_deps.sh does)")
    return path


def chromium_args(tmp_path):
    # No network at all: every host name resolves to nothing.
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={tmp_path / 'chromium'}"]


def render(page_path, tmp_path, probe="return null;"):
    """What the probe returned once the page rendered, with the errors and requests."""
    page = pathlib.Path(page_path).read_text(encoding="utf-8")
    assert page.count("<head>") == 1 and "</body>" in page
    page = page.replace("<head>", "<head>" + HEAD_PROBE, 1)
    end = page.rindex("</body>")
    page = page[:end] + TAIL_PROBE % probe + page[end:]
    probed = tmp_path / "probed.html"
    probed.write_text(page, encoding="utf-8")
    done = subprocess.run(chromium_args(tmp_path) + ["--dump-dom", probed.as_uri()],
                          capture_output=True, text=True, timeout=120)
    match = re.search(r'<pre id="test-result">(.*?)</pre>', done.stdout, re.S)
    assert match, f"no result in the dumped DOM; chromium said: {done.stderr[-2000:]}"
    result = json.loads(html.unescape(match.group(1)))
    assert result["errors"] == []
    assert result["resources"] == []  # nothing loaded from any address
    return result


def label(row):
    """A row's label, as the text table prints it."""
    text = row["name"]
    if row["tag"] is not None:
        text += " " + row["tag"] if row["tag"][:1] in ("[", "(") else " [" + row["tag"] + "]"
    return text


def profile(tmp_path, name="profile.json"):
    """A real window: rows with different call counts, tags, memory, a [no event] row."""
    path = str(tmp_path / name)
    with paddle_prof.profiler("CPU", "total", path, stream=open(os.devnull, "w")) as prof:
        kept = []
        for step in range(4):
            for _ in range(step + 1):
                with paddle_prof.record_event("fill_constant"):
                    kept.append(paddle_prof.empty((1000, 2008), "float32"))  # 7.66 MiB
            for _ in range(3):
                with paddle_prof.record_event("matmul", "[64, 128]"):
                    pass
            with paddle_prof.record_event("relu"):
                pass
            kept.pop()  # freed with no event open: the [no event] row
            paddle_prof.mark_step()
    return path, prof.report


def with_timeline(summary, points=50):
    """The summary with a timeline for each place whose highest point is the place's peak
    (until the core writes one itself)."""
    summary = json.loads(json.dumps(summary))
    timeline = {}
    for place in summary["places"]:
        key = place["place"]
        if "process" in place:
            key += f" (pid {place['process']})"
        t = [summary["wall_ms"] * i / (points - 1) for i in range(points)]
        peak_at = points * 2 // 3
        peak = place["peak_bytes"]
        b = [min(peak * i // peak_at, peak - 1) for i in range(points)]
        b[peak_at] = peak
        timeline[key] = {"t_ms": t, "bytes": b}
    summary["timeline"] = timeline
    return summary


def write_page(summary, path):
    path.write_text(_core.html_page(json.dumps(summary)), encoding="utf-8")
    return path


def test_every_written_profile_gets_a_page_with_every_row_sortable(tmp_path):
    path, report = profile(tmp_path)
    assert os.path.isfile(path + ".html")
    summary = report.to_dict()
    result = render(path + ".html", tmp_path, """
        const rows = () => Array.from(document.querySelectorAll('#events-table tbody tr'),
                                      tr => Array.from(tr.children, td => td.textContent));
        const out = {headers: Array.from(document.querySelectorAll('th'), th => th.dataset.key),
                     rows: rows(),
                     state: document.querySelector('[data-field=state]').textContent,
                     steps: document.querySelector('[data-field=steps]').textContent};
        click('calls'); out.by_calls = names();
        click('calls'); out.by_calls_reversed = names();
        click('name'); out.by_name = names();
        const filter = document.getElementById('filter');
        filter.value = 'MATMUL';
        filter.dispatchEvent(new Event('input'));
        out.filtered = Array.from(document.querySelectorAll('#events-table tbody tr'))
            .filter(tr => !tr.hidden).map(tr => tr.children[0].textContent);
        return out;""")["value"]
    events = summary["events"]
    assert [r[0] for r in result["rows"]] == [label(e) for e in events]
    assert result["headers"] == ["name", "calls", "total_ms", "self_ms", "min_ms", "max_ms",
                                 "ave_ms", "p50_ms", "p99_ms", "ratio", "peak_bytes",
                                 "live_bytes"]  # no GPU columns
    assert result["state"] == "CPU" and result["steps"] == "4"
    cells = {r[0]: r for r in result["rows"]}
    assert cells["fill_constant"][1] == "10" and cells["fill_constant"][10] == "7.66 MiB"
    assert cells["[no event]"][1] == "0" and cells["[no event]"][2:9] == ["-"] * 7
    low, high, p50, p99 = (float(cells["fill_constant"][i]) for i in (4, 5, 7, 8))
    assert low <= p50 <= p99 <= high  # Min. <= P50 <= P99 <= Max.
    assert cells["matmul [64, 128]"][1] == "12"
    # Largest first, ties in the summary's order; then reversed; then names A to Z.
    by_calls = [label(e) for e in sorted(events, key=lambda e: -e["calls"])]
    assert result["by_calls"] == by_calls
    by_calls_reversed = [label(e) for e in sorted(events, key=lambda e: e["calls"])]
    assert result["by_calls_reversed"] == by_calls_reversed
    assert result["by_name"] == sorted(label(e) for e in events)
    assert result["filtered"] == ["matmul [64, 128]"]


def test_a_summary_without_a_timeline_renders_with_a_note(tmp_path):
    _, report = profile(tmp_path)
    summary = report.to_dict()
    summary.pop("timeline", None)  # as summaries written before it was added
    page = write_page(summary, tmp_path / "old.html")
    value = render(page, tmp_path, """
        return {note: document.getElementById('memory').textContent,
                charts: document.querySelectorAll('svg.memory-chart').length,
                rows: names().length};""")["value"]
    assert "no timeline" in value["note"] and value["charts"] == 0
    assert value["rows"] == len(summary["events"])


def test_each_places_chart_has_its_timeline_and_marks_its_peak(tmp_path):
    _, report = profile(tmp_path)
    summary = with_timeline(report.to_dict(), points=77)
    page = write_page(summary, tmp_path / "timeline.html")
    charts = render(page, tmp_path, """
        return Array.from(document.querySelectorAll('svg.memory-chart'), svg => ({
          place: svg.dataset.place, points: +svg.dataset.points,
          peak: +svg.dataset.peakBytes, marked: +svg.querySelector('.peak').dataset.bytes,
          boundaries: svg.querySelectorAll('.step-boundary').length,
          label: svg.querySelector('.peak-label').textContent}));""")["value"]
    assert [c["place"] for c in charts] == [p["place"] for p in summary["places"]]
    for chart, place in zip(charts, summary["places"]):
        assert chart["points"] == len(summary["timeline"][place["place"]]["t_ms"]) == 77
        assert chart["marked"] == chart["peak"] == place["peak_bytes"]
        assert chart["boundaries"] == len(summary["steps"])
        assert "fill_constant" in chart["label"]  # the holder named at the peak


def test_a_name_cannot_end_the_summary_script(tmp_path):
    name = "</script><script>window.__errors.push('injected')</script><!--"
    path = str(tmp_path / "odd.json")
    with paddle_prof.profiler("CPU", "total", path, stream=open(os.devnull, "w")):
        with paddle_prof.record_event(name):
            pass
    page = pathlib.Path(path + ".html").read_text(encoding="utf-8")
    assert "</script><script>window" not in page
    names = render(path + ".html", tmp_path, "return names();")["value"]
    assert name in names


def run_rank(tmp_path, rank, slow_ms):
    """A profile of a separate process with RANK/WORLD_SIZE set, as torchrun starts it."""
    path = tmp_path / f"rank{rank}.json"
    script = f"""
import os, time, paddle_prof
with paddle_prof.profiler('CPU', 'total', {str(path)!r}, stream=open(os.devnull, 'w')):
    for _ in range(3):
        with paddle_prof.record_event('slow_op'):
            block = paddle_prof.empty((256,), dtype='float32')  # a place to chart
            time.sleep({slow_ms} / 1000)
        with paddle_prof.record_event('fast_op'):
            pass
        paddle_prof.mark_step()
"""
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2")
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=120)
    return str(path)


def test_a_merged_profile_shows_every_rank(tmp_path):
    merged = paddle_prof.merge([run_rank(tmp_path, 0, 1), run_rank(tmp_path, 1, 100)])
    merged.to_html(tmp_path / "merged.html")
    result = render(tmp_path / "merged.html", tmp_path, """
        const wall = document.querySelector('svg[data-chart=wall]');
        return {inputs: Array.from(document.querySelectorAll('#inputs li'), li => li.dataset.input),
                series: Array.from(wall.querySelectorAll('path.series'), p => p.dataset.name),
                ranks: document.querySelector('[data-field=processes]').textContent,
                spread: Array.from(document.querySelectorAll('svg.spread-chart g[data-row]'),
                                   g => [g.dataset.row, g.dataset.argmax]),
                stragglers: texts('#warnings li.straggler'),
                advice: texts('#advice li.straggler'),
                first_section: document.querySelector('section:not([hidden])').id,
                first_step_ends: Array.from(document.querySelectorAll('svg.memory-chart'),
                    s => +s.querySelector('line.step-boundary').dataset.tMs),
                per_input: Array.from(document.querySelectorAll('#per-input-table tbody tr'),
                    tr => [tr.dataset.input, Array.from(tr.cells, td => td.textContent),
                           Array.from(tr.cells, td => td.classList.contains('straggler'))]),
                per_input_head: texts('#per-input-table th')};""")["value"]
    assert result["inputs"] == ["rank 0", "rank 1"]
    # Time and peak per rank, side by side; rank 1's steps are the straggler's.
    summary = merged.to_dict()
    assert result["per_input_head"] == ["Rank", "Wall time", "Median step", "Peak on CPU"]
    for (name, cells, marked), m in zip(result["per_input"], summary["merged_from"]):
        rank = m["process"]["rank"]
        assert name == f"rank {rank}"
        assert cells[3] == format_bytes(summary["peaks_by"]["CPU"][str(rank)])
        assert marked == [False, False, rank == 1, False]
    # Each rank's steps are drawn on the merged clock, from where its own window began.
    expected = [m["start_ms"] + summary["steps"][0]["wall_ms_by"][str(m["process"]["rank"])]
                for m in summary["merged_from"]]
    assert result["first_step_ends"] == pytest.approx(expected)
    assert summary["merged_from"][1]["start_ms"] > 0  # rank 1 ran after rank 0
    assert result["series"] == ["rank 0", "rank 1"]
    assert result["ranks"] == "2"
    assert result["spread"][0] == ["slow_op", "1"]
    assert any("rank 1 is a straggler in slow_op" in w for w in result["stragglers"])
    # The advice comes first: the rank to look at, and the fix.
    assert result["first_section"] == "advice-section"
    assert len(result["advice"]) == 1 and "rank 1 is behind the others in 3 of 3 steps" in \
        result["advice"][0] and "Fix:Look at rank 1 first" in result["advice"][0], result["advice"]


def synthetic_summary(rows, steps, places, ranks=None, points=2000):
    """A summary as large as the contract bounds: long aten:: shape tags, memory on every
    place, a full timeline; with `ranks`, merged over that many ranks."""
    shape = "[" + ", ".join(["[64, 3, 224, 224]", "[64, 3, 7, 7]", "[64]", "[2, 2]", "[3, 3]",
                             "[1, 1]", "[]", "[]"]) + "]"
    names = [f"place{p}" if p else "CPU" for p in range(places)]
    events = []
    for i in range(rows):
        ms = 1000.0 / (i + 1)
        memory = {n: {"peak_bytes": 1 << 20 + i % 7, "alloc_bytes": 3 << 20, "alloc_count": 9,
                      "free_bytes": 3 << 20, "free_count": 9, "live_bytes": i * 512}
                  for n in names}
        event = {"name": f"aten::op_{i}", "tag": shape, "thread": None, "calls": 10 + i,
                 "total_ms": ms, "self_ms": ms / 2, "min_ms": ms / 20, "max_ms": ms / 5,
                 "ave_ms": ms / (10 + i), "ratio": 1 / rows, "gpu_total_ms": None,
                 "gpu_min_ms": None, "gpu_max_ms": None, "gpu_ave_ms": None, "memory": memory}
        if ranks:
            event["spread"] = {"by": "rank", "total_ms": {"min": ms / 2, "median": ms,
                                                          "max": ms * 1.5, "argmax": i % ranks}}
        events.append(event)
    step_list = []
    for s in range(steps):
        step = {"step": s, "wall_ms": 100.0, "peak_bytes": {n: 1 << 30 for n in names},
                "end_bytes": {n: 1 << 29 for n in names}}
        if ranks:
            step["wall_ms_by"] = {str(r): 100.0 + r + s % 5 for r in range(ranks)}
        step_list.append(step)
    wall = 100.0 * steps
    summary = {
        "version": 1, "state": "CPU", "sorted_by": "total", "wall_ms": wall, "cycle": None,
        "places": [{"place": n, "peak_bytes": 1 << 30, "start_bytes": 0, "end_bytes": 1 << 29,
                    "untracked_frees": 0,
                    "at_peak": [{"name": "aten::op_1", "tag": shape, "bytes": 1 << 29}]}
                   for n in names],
        "events": events, "steps": step_list, "dropped_events": 0,
        "warnings": ["live memory grew over 10 steps, from 0 bytes to 1,024 bytes at step ends"],
        "process": {"pid": 1, "host": "node1", "rank": None, "world_size": None,
                    "parent_pid": None, "role": "main"},
        "processes": [], "clock": {"unix_ns": 0, "offset_ns": 0},
        "timeline": {n: {"t_ms": [wall * i / (points - 1) for i in range(points)],
                         "bytes": [(1 << 30) - abs(i - points // 2) * 1000 for i in range(points)]}
                     for n in names},
    }
    if ranks:
        summary["merged_from"] = [{"path": f"rank{r}.json.summary.json",
                                   "process": dict(summary["process"], pid=100 + r, rank=r,
                                                   world_size=ranks)} for r in range(ranks)]
    return summary


def test_the_memory_straggler_is_marked_beside_each_ranks_time(tmp_path):
    summary = synthetic_summary(rows=20, steps=3, places=1, ranks=4, points=20)
    summary["peaks_by"] = {"CUDA": {"0": 500 << 20, "1": 480 << 20, "2": 490 << 20,
                                    "3": 612 << 20}}
    summary["warnings"] = [
        "rank 3 is a memory straggler on CUDA: peak 612.0 MiB against a median of 490.0 MiB "
        "over 4 ranks",
        "rank 2 is a straggler in aten::op_0: 9.0 ms there against a median of 2.0 ms over 4 "
        "ranks"]  # an op's straggler: not the steps'
    page = write_page(summary, tmp_path / "ranks.html")
    rows = render(page, tmp_path, """
        return Array.from(document.querySelectorAll('#per-input-table tbody tr'),
            tr => [tr.dataset.input, Array.from(tr.cells, td => td.textContent),
                   Array.from(tr.cells, td => td.classList.contains('straggler'))]);""")["value"]
    assert [name for name, _, _ in rows] == ["rank 0", "rank 1", "rank 2", "rank 3"]
    assert [cells[3] for _, cells, _ in rows] == ["500.00 MiB", "480.00 MiB", "490.00 MiB",
                                                  "612.00 MiB"]
    assert [marked for _, _, marked in rows] == [[False] * 4] * 3 + [[False, False, False, True]]


def test_a_thousand_rows_stay_small(tmp_path):
    page = write_page(synthetic_summary(rows=1000, steps=10, places=2), tmp_path / "big.html")
    size = page.stat().st_size
    print(f"1,000 rows, 10 steps, 2 places: {size:,} bytes")
    assert size < 3_000_000
    result = render(page, tmp_path, """
        return {rows: document.querySelectorAll('#events-table tbody tr').length,
                charts: Array.from(document.querySelectorAll('svg.memory-chart'),
                                   s => +s.querySelector('.peak').dataset.bytes)};""")
    # How fast it opens is measured by benchmarks/html_open.py, never asserted here.
    assert result["value"] == {"rows": 1000, "charts": [1 << 30, 1 << 30]}


def test_a_thousand_steps_over_eight_ranks_stay_readable(tmp_path):
    summary = synthetic_summary(rows=150, steps=1000, places=1, ranks=8, points=2000)
    page = write_page(summary, tmp_path / "ranks.html")
    value = render(page, tmp_path, """
        const wall = document.querySelector('svg[data-chart=wall]');
        const labels = Array.from(wall.querySelectorAll('.axis text'), t => t.textContent)
            .filter(t => t !== '' && !t.endsWith('ms'));
        return {series: wall.querySelectorAll('path.series').length, labels: labels.length,
                inputs: document.querySelectorAll('#inputs li').length,
                spread: document.querySelectorAll('svg.spread-chart g[data-row]').length,
                long: document.querySelector('#events-table tbody td.name').title};""")["value"]
    assert value["series"] == 8 and value["inputs"] == 8
    assert 2 <= value["labels"] <= 12  # step labels, not a thousand of them
    assert value["spread"] == 20
    assert value["long"] == label(summary["events"][0])  # the full text on hover


def test_gpu_columns_and_per_thread_and_per_process_labels(tmp_path):
    summary = synthetic_summary(rows=3, steps=2, places=1)
    summary["state"] = "All"
    first, second, third = summary["events"]
    first.update(thread=0, tag=None, gpu_total_ms=1.5, gpu_min_ms=0.5, gpu_max_ms=1.0,
                 gpu_ave_ms=0.75)
    second.update(process=1234, thread=1, tag="x")
    third.update(calls=0)
    page = write_page(summary, tmp_path / "gpu.html")
    value = render(page, tmp_path, """
        return {headers: Array.from(document.querySelectorAll('th'), th => th.dataset.key),
                rows: Array.from(document.querySelectorAll('#events-table tbody tr'),
                                 tr => Array.from(tr.children, td => td.textContent))};""")["value"]
    assert value["headers"][10:14] == ["gpu_total_ms", "gpu_min_ms", "gpu_max_ms", "gpu_ave_ms"]
    assert [r[0] for r in value["rows"]] == [
        "thread0::aten::op_0", "pid1234::thread1::aten::op_1 [x]", label(third)]
    assert value["rows"][0][10:14] == ["1.5", "0.5", "1", "0.75"]
    assert value["rows"][1][10:14] == ["-"] * 4  # no GPU time: null
    assert value["rows"][2][2:9] == ["-"] * 7 and value["rows"][2][10:14] == ["-"] * 4


def test_the_cli_writes_a_page_of_one_or_several_profiles(tmp_path):
    path, _ = profile(tmp_path)
    cli = [sys.executable, "-m", "paddle_prof", "html"]
    done = subprocess.run(cli + [path, "-o", str(tmp_path / "one.html")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "one.html").read_text(encoding="utf-8") == \
        pathlib.Path(path + ".html").read_text(encoding="utf-8")
    ranks = [run_rank(tmp_path, 0, 1), run_rank(tmp_path, 1, 1)]
    done = subprocess.run(cli + ranks + ["-o", str(tmp_path / "two.html")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "two.html").read_text(encoding="utf-8")
    assert "merged_from" in page
    done = subprocess.run(cli + [path, "-o", str(tmp_path / "missing" / "x.html")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "cannot write" in done.stderr
    done = subprocess.run(cli + [str(tmp_path / "nothing.json"), "-o", str(tmp_path / "y.html")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "nothing.json" in done.stderr


def test_the_cli_refuses_to_write_the_page_over_an_input(tmp_path):
    path, _ = profile(tmp_path)
    summary = path + ".summary.json"
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    for given, out, what in ((summary, summary, "summary"), (path, path, "trace"),
                             (path, summary, "summary")):
        done = subprocess.run([sys.executable, "-m", "paddle_prof", "html", given, "-o", out],
                              capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (f"paddle_prof html: -o {out} is the {what} of the input "
                               f"{given}: give another output path\n")
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_page_that_cannot_be_written_is_a_warning_and_no_half_file(tmp_path):
    (tmp_path / "p.json.html").mkdir()  # a directory where the page would go
    path = str(tmp_path / "p.json")
    with paddle_prof.profiler("CPU", "total", path, stream=open(os.devnull, "w")) as prof:
        with paddle_prof.record_event("op"):
            pass
    assert any("cannot write the HTML report" in w for w in prof.report.warnings)
    assert os.path.isfile(path) and os.path.isfile(path + ".summary.json")
    with pytest.raises(OSError):
        prof.report.to_html(tmp_path / "missing" / "r.html")
    assert not (tmp_path / "missing").exists()


def test_save_to_writes_each_cycles_page(tmp_path):
    with paddle_prof.profiler("CPU", schedule=paddle_prof.schedule(active=1, repeat=2),
                              on_trace_ready=paddle_prof.save_to(str(tmp_path), "job")) as prof:
        for _ in range(2):
            with paddle_prof.record_event("op"):
                pass
            prof.step()
    assert sorted(p.name for p in tmp_path.glob("*.html")) == ["job.cycle0.json.html",
                                                              "job.cycle1.json.html"]


def png_size(path):
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])


def test_screenshot_of_the_cnn_example(tmp_path):
    pytest.importorskip("torch", reason="PyTorch (python3-torch) is not installed")
    pytest.importorskip("paddle_prof._torch_bridge",
                        reason="paddle_prof was built without Torch (libtorch-dev)")
    path = tmp_path / "profile.json"
    done = subprocess.run([sys.executable, str(REPO / "examples" / "train_cnn.py"),
                           "--iterations", "4", "--profile-path", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{path}.html" in done.stdout
    assert not list(tmp_path.glob("profile.json.children/*.html"))  # workers' are not for eyes
    page = pathlib.Path(f"{path}.html")
    render(page, tmp_path)  # renders without an error
    shot = BUILD_DIR / "html_report.png"
    shot.unlink(missing_ok=True)
    subprocess.run(chromium_args(tmp_path) + [f"--screenshot={shot}", "--window-size=1400,1800",
                                              "--hide-scrollbars", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert png_size(shot) == (1400, 1800)


@pytest.mark.torch
def test_the_model_view_a_module_tree_sorted_level_by_level_and_the_step_phases(tmp_path):
    import torch

    import paddle_prof.torch

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(64, 32)  # 2,080 parameters
            self.fc2 = torch.nn.Linear(32, 16)  # 528

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 4, 3)  # 40
            self.block = Block()                  # 2,608
            self.head = torch.nn.Linear(16, 10)   # 170

        def forward(self, x):
            return self.head(self.block(self.conv(x).flatten(1)[:, :64]))

    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 1, 10, 10), torch.randint(0, 10, (4,))
    path = str(tmp_path / "model.json")
    with paddle_prof.torch.profiler("CPU", "total", path, stream=open(os.devnull, "w")) as prof:
        for _ in range(3):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step(num_samples=4)
    summary = prof.report.to_dict()
    value = render(path + ".html", tmp_path, """
        const shown = () => Array.from(document.querySelectorAll('#modules-table tbody tr'))
            .filter(tr => !tr.hidden).map(tr => tr.dataset.path);
        const cells = Object.fromEntries(Array.from(
            document.querySelectorAll('#modules-table tbody tr'),
            tr => [tr.dataset.path, Array.from(tr.children, td => td.textContent)]));
        const sort = key => document.querySelector(`#modules-table th[data-key="${key}"]`).click();
        const out = {first: shown(), cells,
                     indent: Array.from(document.querySelectorAll('#modules-table td.module'),
                                        td => td.style.paddingLeft)};
        sort('params'); out.by_params = shown();
        sort('params'); out.by_params_reversed = shown();
        document.querySelector('#modules-table tr[data-path="Net.block"] button').click();
        out.folded = shown();
        out.phases = Array.from(document.querySelectorAll('#phases-table tbody tr'),
                                tr => Array.from(tr.children, td => td.textContent));
        out.ips = document.querySelector('[data-field=ips]').textContent;
        return out;""")["value"]
    assert value["first"] == [m["path"] for m in summary["modules"]] == [
        "Net", "Net.conv", "Net.block", "Net.block.fc1", "Net.block.fc2", "Net.head"]
    assert value["indent"] == ["8px", "26px", "26px", "44px", "44px", "26px"]
    fc1 = value["cells"]["Net.block.fc1"]
    assert fc1[0].endswith("fc1") and not fc1[0].endswith(".fc1")  # the name under its parent
    assert fc1[1:3] == ["Linear", "3"] and fc1[5] == "2,080"
    assert value["cells"]["Net"][5] == "2,818"
    # Each level sorted on its own, children kept under their parent.
    assert value["by_params"] == ["Net", "Net.block", "Net.block.fc1", "Net.block.fc2",
                                  "Net.head", "Net.conv"]
    assert value["by_params_reversed"] == ["Net", "Net.conv", "Net.head", "Net.block",
                                           "Net.block.fc2", "Net.block.fc1"]
    assert value["folded"] == ["Net", "Net.conv", "Net.head", "Net.block"]
    phases = {row[0]: row for row in value["phases"]}
    assert list(phases) == ["Dataloader", "Forward", "Backward", "Optimization", "Other"]
    for name in ("Forward", "Backward", "Optimization"):
        assert phases[name][1] == "3", phases[name]
    assert phases["Dataloader"][1:3] == ["0", "0"]
    ratios = [float(row[6].rstrip("%")) for row in value["phases"]]
    assert abs(sum(ratios) - 100) < 0.05, ratios
    rate = summary["throughput"]["samples_per_s"]
    assert value["ips"].startswith(f"{rate:,.1f} samples/s, reader "), value["ips"]


@pytest.mark.torch
def test_memory_is_drawn_by_kind_with_the_modules_holding_the_activations(tmp_path):
    import torch

    import paddle_prof.torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(512, 64)
    path = str(tmp_path / "kinds.json")
    with paddle_prof.torch.profiler("CPU", "total", path, stream=open(os.devnull, "w")) as prof:
        model(x).sum().backward()
        optimizer.step()
        prof.step()
    place = prof.report.to_dict()["places"][0]
    value = render(path + ".html", tmp_path, """
        const chart = document.querySelector('svg.memory-chart');
        const card = chart.closest('.place');
        return {bands: Array.from(chart.querySelectorAll('path.category'),
                                  p => p.dataset.category),
                legend: Array.from(card.querySelectorAll('[data-field=categories] span'),
                                   s => s.textContent),
                activations: card.querySelector('[data-field=activations]').textContent};""")["value"]
    held = [k for k in ("parameter", "gradient", "optimizer_state", "input", "activation",
                        "temporary", "other")
            if any(b > 0 for b in prof.report.to_dict()["timeline"]["CPU"]["by_category"][k])]
    assert value["bands"] == held and {"parameter", "activation", "input"} <= set(held)
    assert value["legend"][0] == f"parameter {4 * (64 * 256 + 256 + 256 * 10 + 10) / 1024:.2f} KiB at the peak"
    # The ReLU's output, saved for the second Linear's backward, is its module's.
    assert place["activations_at_peak"][0] == {"module": "Sequential.1", "bytes": 512 * 256 * 4}
    assert value["activations"].endswith(": Sequential.1 512.00 KiB")
