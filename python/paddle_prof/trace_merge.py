"""The Chrome traces of merged inputs as one trace: a process per input, on one clock.

Each input's trace is read from beside its summary (the path ``merged_from`` names, less
``.summary.json``). Its process is named as the merge names the input (``rank 3``, or
``node2 pid 1`` without ranks). Its events move to a pid of their own (the input's pid,
or a fresh one when two inputs share one, as ranks in containers do; a GPU's
pseudo-process gets a fresh pid), its arrows (flow events) to ids of their own, and its
times shift by where its window started on the merged clock (``start_ms``: against the
earliest input's start, each read on rank 0's clock).
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional, Set, Tuple

from paddle_prof import _core
from paddle_prof.atomic_write import write_atomically
from paddle_prof.merge import SUMMARY_SUFFIX
from paddle_prof.report import Report

_FLOW_IDS_PER_INPUT = 1 << 40


def _not_json(constant: str) -> float:
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    """A number strict JSON readers (Chrome's, Perfetto's) read back: none past a double's
    range, which Python would read as infinity and write as no JSON at all."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is out of range")
    return value


def _read_trace(label: str, path: Optional[str]) -> Tuple[Optional[dict], str]:
    """The input's trace, or None and why not."""
    if not path or not path.endswith(SUMMARY_SUFFIX):
        return None, f"{label}: no trace to merge (its summary was not read from a file " \
                     f"named <trace>{SUMMARY_SUFFIX}); the merged trace lacks it."
    trace_path = path[:-len(SUMMARY_SUFFIX)]
    try:
        with open(trace_path, encoding="utf-8") as f:
            trace = json.load(f, parse_constant=_not_json, parse_float=_finite)
    except (OSError, ValueError, RecursionError) as e:  # RecursionError: nested too deep
        return None, f"{label}: its trace {trace_path} could not be read ({e}); " \
                     f"the merged trace lacks it."
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return None, f"{label}: {trace_path} is not a Chrome trace; the merged trace lacks it."
    return trace, ""


def _shifted(ts: Any, shift_us: float) -> Any:
    """`ts` moved by `shift_us`; as it was when it is no time (a float could not hold it)."""
    if isinstance(ts, bool) or not isinstance(ts, (int, float)) or abs(ts) > 1e300:
        return ts
    return round(ts + shift_us, 3)


class _Pids:
    """Pids for the merged trace: each input's own where it is free, fresh ones else."""

    def __init__(self) -> None:
        self.used: Set[int] = set()
        self.next_fresh = _core.GPU_PID_BASE  # far above any real pid

    def take(self, wanted: Optional[int]) -> int:
        if wanted is not None and wanted not in self.used:
            self.used.add(wanted)
            return wanted
        while self.next_fresh in self.used:
            self.next_fresh += 1
        self.used.add(self.next_fresh)
        return self.next_fresh


def merge_traces(merged: Report, out_path: str) -> List[str]:
    """Writes ``out_path``, the trace of the inputs of ``merged`` (a merge of summary
    files, each trace beside its summary); returns a warning for each input whose trace is
    left out."""
    merged_summary = merged.to_dict()
    start_ns = merged_summary["clock"]["unix_ns"]
    inputs = merged_summary["merged_from"]
    pids = _Pids()
    # Each input's own pid first, so that only a clash takes a substitute.
    main_pids = [pids.take(entry["process"]["pid"]) for entry in inputs]
    events: List[Dict[str, Any]] = []
    warnings: List[str] = []
    time_unit = "ms"  # the inputs' own, which the core always writes
    for i, entry in enumerate(inputs):
        label = entry["label"]
        trace, why = _read_trace(label, entry["path"])
        if trace is None:
            warnings.append(why)
            continue
        if isinstance(trace.get("displayTimeUnit"), str):
            time_unit = trace["displayTimeUnit"]
        shift_us = entry["start_ms"] * 1000  # where its window began on the merged clock
        trace_events = [e for e in trace["traceEvents"]
                        if isinstance(e, dict) and isinstance(e.get("pid"), int)]
        left_out = len(trace["traceEvents"]) - len(trace_events)
        if left_out:
            warnings.append(f"{label}: {left_out} entries of its trace are no event of a process "
                            f"(an object with an integer pid); the merged trace lacks them.")
        # The core writes its process's name first; GPUs come after, as processes of their own.
        own_pid = trace_events[0].get("pid") if trace_events else None
        moved: Dict[Any, int] = {}
        for event in trace_events:
            old = event.get("pid")
            if old not in moved:
                moved[old] = main_pids[i] if old == own_pid else pids.take(None)
            event["pid"] = moved[old]
            if "ts" in event:
                event["ts"] = _shifted(event["ts"], shift_us)
            if event.get("ph") in ("s", "t", "f") and isinstance(event.get("id"), int):
                event["id"] += i * _FLOW_IDS_PER_INPUT
            if event.get("ph") == "M" and event.get("name") == "process_name":
                own_process = old == own_pid
                args = event.get("args")
                name = args.get("name", "") if isinstance(args, dict) else ""
                event["args"] = {"name": label if own_process else f"{label}: {name}"}
            events.append(event)
        events.append({"name": "process_sort_index", "ph": "M", "pid": main_pids[i],
                       "args": {"sort_index": i}})
    # ts 0 is the earliest start, on CLOCK_REALTIME (as Kineto's traces name theirs).
    merged_trace = {"displayTimeUnit": time_unit, "baseTimeNanoseconds": start_ns,
                    "traceEvents": events}
    write_atomically(out_path, json.dumps(merged_trace, separators=(",", ":")))
    return warnings


def write_merged(merged: Report, out_path: str) -> Report:
    """Writes the files of a merge at ``out_path``: the merged trace there (its warnings
    added to the report), the summary at ``out_path + '.summary.json'`` and the HTML page
    at ``out_path + '.html'``; returns the report as written. OSError when a file cannot
    be written."""
    native = merged._native
    for warning in merge_traces(merged, out_path):
        native.add_warning(warning)
    native.summary_path = out_path + SUMMARY_SUFFIX
    write_atomically(native.summary_path, native.to_json())
    write_atomically(out_path + ".html", native.to_html())
    return Report(native)
