"""The pytest plugin that installing paddle_prof registers (entry point ``pytest11``):
memory limits on tests and profiles compared against a saved baseline.

    @pytest.mark.limit_peak_memory("24 MiB")      # all the test allocates on the host
    def test_preprocess(): ...

    @pytest.mark.limit_peak_memory("24 MiB", place="CPU")
    def test_training_step(): ...

    @pytest.mark.limit_op_memory("aten::conv2d", "4 MiB")
    def test_conv(): ...

    pytest --paddle-prof-save baseline/        # each profiled test's summary
    pytest --paddle-prof-compare baseline/     # fails the tests that regressed

A test is profiled when it carries one of the markers, and every test is with
``--paddle-prof-save`` or ``--paddle-prof-compare``: with paddle_prof.torch.profiler when
torch is imported, else paddle_prof.profiler. ``limit_peak_memory`` without ``place``
limits the test's host memory: what it allocates on every host place (every malloc,
tracked in-process with ``native=True``, and framework tensors on ``CPU`` and
``CUDA_PINNED``), each place's peak above where it started added up (the peak of the
sum when one place moves, above it when several do); with ``place``, that place's peak
above its start. A marker whose place saw no allocation at all, or whose op never ran,
fails the test, saying so. Only one profiler runs at a time: a
profiled test cannot open one itself (leave such a test unmarked and out of the
baseline runs). Sizes are bytes (an int) or text: "24 MiB", "24MB", "1.5 GiB" (KB, MB, GB
and TB are powers of 1,024, as KiB ... TiB).
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import io
import os
import re
import sys
from typing import Any, Dict, List, Optional, Union

import pytest

from paddle_prof import _core
from paddle_prof.diff import MEMORY_THRESHOLD, SPREAD_CALLS, TIME_THRESHOLD
from paddle_prof.merge import SUMMARY_SUFFIX

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
          "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
          "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


def parse_size(size: Union[int, str]) -> int:
    """Bytes from an int or a text such as "24 MiB", "24MB" or "1.5 GiB"."""
    if isinstance(size, int) and not isinstance(size, bool):
        if size < 0:
            raise ValueError(f"a memory limit cannot be negative: {size}")
        return size
    if not isinstance(size, str):
        raise TypeError(f"a memory limit is an int of bytes or a text such as '24 MiB'; got "
                        f"{type(size).__name__}")
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*", size)
    if not match or match.group(2).upper() not in _UNITS:
        raise ValueError(f"not a memory size: {size!r} (give bytes, or a number and a unit: "
                         f"B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("paddle_prof", "paddle_prof: memory limits and baselines")
    group.addoption("--paddle-prof-save", metavar="DIR", default=None,
                    help="profile every test and write its summary to DIR/<test id>.summary.json")
    group.addoption("--paddle-prof-compare", metavar="DIR", default=None,
                    help="profile every test and fail those that regressed against the "
                         "summaries in DIR (paddle_prof.diff)")
    group.addoption("--paddle-prof-time-threshold", metavar="PCT", default=TIME_THRESHOLD,
                    help="with --paddle-prof-compare: a row's median call slower by more "
                         f"than this (and than the baseline's P90) is a regression, on rows of "
                         f"{SPREAD_CALLS} calls or more ({TIME_THRESHOLD}%)")
    group.addoption("--paddle-prof-memory-threshold", metavar="PCT", default=MEMORY_THRESHOLD,
                    help="with --paddle-prof-compare: peak or live bytes grown by more than "
                         f"this are a regression ({MEMORY_THRESHOLD}%: any byte)")


def pytest_configure(config: Any) -> None:
    # A wrong directory is one usage error, not a failure (or a silent pass) per test.
    compare, save = config.option.paddle_prof_compare, config.option.paddle_prof_save
    if compare and not os.path.isdir(compare):
        raise pytest.UsageError(f"--paddle-prof-compare {compare}: no such directory (save "
                                f"a baseline there first with --paddle-prof-save)")
    if save and os.path.exists(save) and not os.path.isdir(save):
        raise pytest.UsageError(f"--paddle-prof-save {save}: exists and is not a directory")
    config._paddle_prof_unbaselined = []  # profiled tests with no baseline to compare to
    config.addinivalue_line(
        "markers", "limit_peak_memory(limit, place=None): fail the test when what it "
                   "allocates on the host (every malloc and tensor), or the place's peak "
                   "memory, is over `limit` (paddle_prof)")
    config.addinivalue_line(
        "markers", "limit_op_memory(name, limit, place=None): fail the test when a call of "
                   "the op `name` peaks over `limit` (paddle_prof)")


# Longest readable part of a baseline's file name: with the digest and ".summary.json",
# well under the 255 bytes a file name may take.
_NAME_LIMIT = 160


def summary_file_name(nodeid: str) -> str:
    """A file name for a test id, one per id: the id with '::' as '.', when every other
    character may stand in a file name; else with those characters as '_' (a path's '/'
    too), cut to a readable length, and a digest of the whole id, so that ids that differ
    only there (a/b, a_b, a:b) never share a file."""
    readable = nodeid.replace("::", ".")
    name = re.sub(r"[^A-Za-z0-9_.\-\[\]=,]", "_", readable)
    if name == readable and len(name) <= _NAME_LIMIT:
        return name
    digest = hashlib.sha1(nodeid.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{name[:_NAME_LIMIT]}-{digest}"


def _wanted(item: Any) -> bool:
    options = item.config.option
    return bool(options.paddle_prof_save or options.paddle_prof_compare or
                item.get_closest_marker("limit_peak_memory") or
                item.get_closest_marker("limit_op_memory"))


# The places a test's host memory is on (limit_peak_memory without place=).
HOST_PLACES = ("native", "CPU", "CUDA_PINNED")


def _needs_native(item: Any) -> bool:
    return any(_marker_place(marker) is None
               for marker in item.iter_markers("limit_peak_memory"))


def _profiler(native: bool) -> Any:
    import paddle_prof
    if "torch" in sys.modules:
        try:
            import paddle_prof.torch
            return paddle_prof.torch.profiler("CPU", stream=io.StringIO(), native=native)
        except ImportError:  # a build without the torch bridge: ops unnamed, memory kept
            pass
    if "paddle" in sys.modules:
        try:
            import paddle_prof.paddle
            return paddle_prof.paddle.profiler("CPU", stream=io.StringIO(), native=native)
        except ImportError:  # a Paddle the bridge cannot serve: as for any program
            pass
    return paddle_prof.profiler("CPU", stream=io.StringIO(), native=native)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any):
    if not _wanted(item):
        yield
        return
    profiler = _profiler(_needs_native(item))
    try:
        profiler.__enter__()
    except RuntimeError as e:  # a profiler already runs: one a fixture opened, say
        item._paddle_prof_error = f"not profiled: {e}"
        yield
        return
    windows = importlib.import_module("paddle_prof.profiler")
    windows.window_opened_by = (
        "paddle_prof's pytest plugin profiles this test (a limit_peak_memory or "
        "limit_op_memory marker, or --paddle-prof-save/--paddle-prof-compare), and a "
        "profiled test cannot open a profiler of its own: leave it unmarked and out of "
        "those runs")
    try:
        yield
    finally:
        windows.window_opened_by = ""
        profiler.__exit__(None, None, None)
        item._paddle_prof_report = profiler.report


def _marker_place(marker: Any) -> Optional[str]:
    return marker.kwargs.get("place", marker.args[1] if len(marker.args) > 1 else None)


def _saw_nothing(summary: Dict[str, Any], places: List[str]) -> bool:
    """No allocation or free on any of `places` in the test."""
    for row in summary["events"]:
        for place, stats in (row.get("memory") or {}).items():
            if place in places and (stats["alloc_count"] or stats["free_count"]):
                return False
    return True


def _holder_line(holder: Dict[str, Any]) -> str:
    """One holder at a peak: its bytes, then its call path (or name) and tag."""
    path = " > ".join(holder.get("path") or []) or holder["name"]
    tag = f" {holder['tag']}" if holder.get("tag") else ""
    return f"  {_core.format_bytes(holder['bytes'])}  {path}{tag}"


def _peak_failure(summary: Dict[str, Any], marker: Any) -> Optional[str]:
    limit = parse_size(marker.kwargs.get("limit", marker.args[0] if marker.args else None))
    place = _marker_place(marker)
    if place is None:
        return _host_failure(summary, limit)
    places = [p for p in summary["places"] if p["place"] == place]
    if not places or _saw_nothing(summary, [place]):
        seen = ", ".join(sorted({p["place"] for p in summary["places"]})) or "none"
        return (f"limit_peak_memory: the place {place!r} saw no allocation in this test, so "
                f"its limit checks nothing (places seen: {seen})")
    # What the test allocated: the memory live as it started (a cache an earlier test
    # filled) is not its own.
    peak = max(p["peak_bytes"] - p["start_bytes"] for p in places)
    if peak <= limit:
        return None
    holders = [_holder_line(h) for p in places for h in p.get("at_peak") or []
               if h["name"] != "[before profiling]"]
    return (f"peak memory on {place} was {_core.format_bytes(peak)} ({peak:,} bytes) above the "
            f"test's start, over the limit of {_core.format_bytes(limit)} ({limit:,} bytes); at "
            f"the peak held by:\n" + "\n".join(holders[:10]))


def _host_failure(summary: Dict[str, Any], limit: int) -> Optional[str]:
    places = [p for p in summary["places"] if p["place"] in HOST_PLACES]
    if not places or _saw_nothing(summary, list(HOST_PLACES)):
        return ("limit_peak_memory: no host memory was tracked in this test, so its limit "
                "checks nothing")
    grew = {p["place"]: p["peak_bytes"] - p["start_bytes"] for p in places}
    peak = sum(max(0, b) for b in grew.values())
    if peak <= limit:
        return None
    holders = [f"{_holder_line(h)} on {p['place']}"
               for p in sorted(places, key=lambda p: -grew[p["place"]])
               for h in p.get("at_peak") or [] if h["name"] != "[before profiling]"]
    each = ", ".join(f"{place} {_core.format_bytes(b)}" for place, b in grew.items() if b > 0)
    return (f"the test's host memory peaked at {_core.format_bytes(peak)} ({peak:,} bytes: {each}), "
            f"over the limit of {_core.format_bytes(limit)} ({limit:,} bytes); at the peak held "
            f"by:\n" + "\n".join(holders[:10]))


def _op_failure(summary: Dict[str, Any], marker: Any) -> Optional[str]:
    name = marker.kwargs.get("name", marker.args[0] if marker.args else None)
    limit = parse_size(marker.kwargs.get("limit", marker.args[1] if len(marker.args) > 1 else None))
    place = marker.kwargs.get("place", marker.args[2] if len(marker.args) > 2 else None)
    rows = [row for row in summary["events"] if row["name"] == name]
    if not rows:
        ran = sorted({row["name"] for row in summary["events"]})
        close = difflib.get_close_matches(name, ran, n=3)
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        return (f"limit_op_memory: no op named {name!r} ran in this test, so its limit "
                f"checks nothing{hint}")
    if place is not None and not any(place in (row.get("memory") or {}) for row in rows):
        return (f"limit_op_memory: {name} allocated nothing on the place {place!r} in this "
                f"test, so its limit checks nothing")
    over = []
    for row in rows:
        for row_place, stats in (row.get("memory") or {}).items():
            if (place is None or row_place == place) and stats["peak_bytes"] > limit:
                tag = f" {row['tag']}" if row.get("tag") else ""
                over.append(f"  {name}{tag} on {row_place}: {_core.format_bytes(stats['peak_bytes'])} "
                            f"({stats['peak_bytes']:,} bytes) in its largest call")
    if not over:
        return None
    return (f"{name} peaked over the limit of {_core.format_bytes(limit)} ({limit:,} bytes):\n" +
            "\n".join(over))


def _checks(item: Any) -> List[str]:
    """What fails the test, each a message; saves and compares its profile."""
    report = getattr(item, "_paddle_prof_report", None)
    if report is None:
        return []
    summary = report.to_dict()
    failures = []
    for marker in item.iter_markers("limit_peak_memory"):
        failures.append(_peak_failure(summary, marker))
    for marker in item.iter_markers("limit_op_memory"):
        failures.append(_op_failure(summary, marker))
    options = item.config.option
    name = summary_file_name(item.nodeid) + SUMMARY_SUFFIX
    if options.paddle_prof_save:
        from paddle_prof.atomic_write import write_atomically
        os.makedirs(options.paddle_prof_save, exist_ok=True)
        write_atomically(os.path.join(options.paddle_prof_save, name), report._native.to_json())
    if options.paddle_prof_compare:
        baseline = os.path.join(options.paddle_prof_compare, name)
        if not os.path.isfile(baseline):
            item.config._paddle_prof_unbaselined.append(item.nodeid)
        else:
            import paddle_prof
            result = paddle_prof.diff(baseline, report, options.paddle_prof_time_threshold,
                                      options.paddle_prof_memory_threshold)
            if result.regressions:
                failures.append(f"regressed against {baseline}:\n{result.table()}")
    return [f for f in failures if f]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any):
    outcome = yield
    if call.when != "call":
        return
    report = outcome.get_result()
    try:
        failures = _checks(item)
    except (OSError, ValueError, TypeError) as e:  # a bad marker or file: said, not raised
        failures = [str(e)]  # the report says "paddle_prof: " once, before them all
    if failures and report.outcome == "passed":
        report.outcome = "failed"
        report.longrepr = "paddle_prof: " + "\n".join(failures)
    elif failures:
        report.sections.append(("paddle_prof", "\n".join(failures)))
    error = getattr(item, "_paddle_prof_error", None)
    if error:
        report.sections.append(("paddle_prof", error))


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
    missing = getattr(config, "_paddle_prof_unbaselined", [])
    if missing:
        terminalreporter.section("paddle_prof")
        terminalreporter.write_line(
            f"{len(missing)} profiled test(s) not compared: no baseline in "
            f"{config.option.paddle_prof_compare} (save one with --paddle-prof-save):")
        for nodeid in missing:
            terminalreporter.write_line(f"  {nodeid}")
