"""Two runs compared: ``paddle_prof.diff()`` and ``python3 -m paddle_prof diff``.

Rows match by (name, tag), and by thread or process too when both runs are split that
way (a process known by its rank, else by its place among the merged inputs or the
children). Time is judged on each row's median call against the other run's spread of
calls, so that noise is not a regression (on its average call where a summary has no
call durations), and only where each side has 10 calls or more; memory is exact.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Dict, List, Optional, Tuple, Union

from paddle_prof.merge import PathLike, load
from paddle_prof.report import Report

# A row's statuses that are regressions.
REGRESSIONS = ("slower", "more_memory")
# A row's time is judged only where each side has this many calls: fewer give no spread
# to tell noise from a change by (the nearest-rank P90 of under 10 calls is the slowest
# one), and a row of one call measured twice differs by 40% on a quiet machine.
SPREAD_CALLS = 10
# The thresholds diff(), the CLI and the pytest plugin take when given none, as the
# percentages their options read.
TIME_THRESHOLD = "10%"
MEMORY_THRESHOLD = "0%"


def _summary(item: Union[Report, PathLike], side: str) -> Dict[str, Any]:
    if isinstance(item, Report):
        return item.to_dict()
    if isinstance(item, (str, os.PathLike)):
        return load(item).to_dict()
    raise TypeError(f"diff(): {side} is a {type(item).__name__}; give a Report or a summary "
                    f"path (str or os.PathLike)")


def threshold(value: Any, name: str) -> float:
    """A relative threshold as a fraction: from a number (0.1) or a percentage ('10%').
    A string must end in '%': '10' could mean 10% or 1000%, and neither is guessed."""
    if isinstance(value, str):
        text = value.strip()
        try:
            if not text.endswith("%"):
                raise ValueError
            number = float(text[:-1]) / 100
        except ValueError:
            raise ValueError(f"{name} must be a percentage such as '10%'; got {value!r}") from None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        raise TypeError(f"{name} must be a number (0.1) or a percentage string ('10%'); got "
                        f"{type(value).__name__}")
    if not math.isfinite(number):
        raise ValueError(f"{name} is not a finite number; got {value!r}")
    if number < 0:
        raise ValueError(f"{name} must be 0 or more; got {value!r}")
    return number


def _process_names(summary: Dict[str, Any]) -> Dict[Any, str]:
    """Each pid of a run, and each input's label in a merged run ("node2 pid 1", which
    tells apart inputs that share a pid), as the other run would know the same process:
    by rank, else by its place among the inputs, from 1 as the merge counts them."""
    names: Dict[Any, str] = {}
    for i, entry in enumerate(summary.get("merged_from") or []):
        process = entry.get("process") or {}
        rank = process.get("rank")
        names[process.get("pid")] = f"rank {rank}" if rank is not None else f"input {i + 1}"
        if entry.get("label") is not None:
            names[entry["label"]] = names[process.get("pid")]
    own = summary.get("process") or {}
    if own.get("pid") is not None:
        names.setdefault(own["pid"], f"rank {own['rank']}" if own.get("rank") is not None
                         else "main process")
    children = 0
    for child in summary.get("processes") or []:
        if child.get("role") == "worker" and child.get("worker_id") is not None:
            names.setdefault(child["pid"], f"worker {child['worker_id']}")
        else:
            names.setdefault(child["pid"], f"child {children}")
            children += 1
    return names


def _split(rows: List[Dict[str, Any]], field: str) -> bool:
    return any(row.get(field) is not None for row in rows)


def _percentile(counts: List[Tuple[int, int]], percent: int) -> Optional[float]:
    total = sum(calls for _, calls in counts)
    if total == 0:
        return None
    rank = max(1, -(-percent * total // 100))
    seen = 0
    for ns, calls in sorted(counts):
        seen += calls
        if seen >= rank:
            return ns / 1e6
    return None


def _fold(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Rows of one key (threads or processes the other run does not split) as one."""
    if len(rows) == 1:
        return rows[0]
    counts: List[Tuple[int, int]] = []
    whole = True
    for row in rows:
        durations = row.get("durations")
        if row["calls"] and not durations:
            whole = False
        elif durations:
            counts.extend(zip(durations["ns"], durations["calls"]))
    memory: Dict[str, Dict[str, int]] = {}
    for row in rows:
        for place, stats in (row.get("memory") or {}).items():
            into = memory.setdefault(place, {"peak_bytes": 0, "live_bytes": 0})
            into["peak_bytes"] = max(into["peak_bytes"], stats["peak_bytes"])
            into["live_bytes"] += stats["live_bytes"]
    folded = {"name": rows[0]["name"], "tag": rows[0].get("tag"),
              "calls": sum(row["calls"] for row in rows),
              "total_ms": sum(row["total_ms"] for row in rows), "memory": memory}
    for percent in (10, 50, 90):
        folded[f"p{percent}_ms"] = _percentile(counts, percent) if whole else None
    return folded


def _keyed_rows(summary: Dict[str, Any], by_thread: bool, by_process: bool
                ) -> Dict[tuple, Dict[str, Any]]:
    names = _process_names(summary)
    grouped: Dict[tuple, List[Dict[str, Any]]] = {}
    for row in summary.get("events") or []:
        key = (row["name"], row.get("tag"),
               row.get("thread") if by_thread else None,
               names.get(row.get("process"), f"pid {row.get('process')}")
               if by_process and row.get("process") is not None else None)
        grouped.setdefault(key, []).append(row)
    return {key: _fold(rows) for key, rows in grouped.items()}


def _side(row: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    if row is None:
        return None
    return {"calls": row["calls"], "total_ms": row["total_ms"], "p50_ms": row.get("p50_ms"),
            "memory": {place: {"peak_bytes": stats["peak_bytes"],
                               "live_bytes": stats["live_bytes"]}
                       for place, stats in (row.get("memory") or {}).items()}}


def _grew(base: int, new: int, threshold: float) -> bool:
    return new > base and new - base > threshold * base


def _memory_statuses(base: Dict[str, Any], new: Dict[str, Any], threshold: float) -> List[str]:
    statuses = []
    places = set(base.get("memory") or {}) | set(new.get("memory") or {})
    for field in ("peak_bytes", "live_bytes"):
        for place in places:
            b = ((base.get("memory") or {}).get(place) or {}).get(field, 0)
            n = ((new.get("memory") or {}).get(place) or {}).get(field, 0)
            if _grew(b, n, threshold) and "more_memory" not in statuses:
                statuses.append("more_memory")
            if _grew(n, b, threshold) and "less_memory" not in statuses:
                statuses.append("less_memory")
    return statuses


def _time_statuses(base: Dict[str, Any], new: Dict[str, Any], threshold: float
                   ) -> Tuple[List[str], Optional[str]]:
    """The row's time status, and what judged it: "median", "average", "few_calls" (not
    judged: a side has fewer than SPREAD_CALLS calls), or None where a side has none."""
    if not base["calls"] or not new["calls"]:
        return [], None
    if min(base["calls"], new["calls"]) < SPREAD_CALLS:
        return [], "few_calls"
    b50, n50 = base.get("p50_ms"), new.get("p50_ms")
    b10, b90 = base.get("p10_ms"), base.get("p90_ms")
    if None in (b50, n50, b10, b90):
        # A summary without call durations (written before them, or edited) has no
        # percentiles: the average call is judged, with no spread to tell noise by.
        b, n = _average(base), _average(new)
        return (["slower"] if n > b * (1 + threshold) else
                ["faster"] if n < b * (1 - threshold) else []), "average"
    if n50 > b50 * (1 + threshold) and n50 > b90:
        return ["slower"], "median"
    if n50 < b50 * (1 - threshold) and n50 < b10:
        return ["faster"], "median"
    return [], "median"


def _average(side: Dict[str, Any]) -> float:
    return side["total_ms"] / side["calls"]


def _place_key(place: Dict[str, Any], names: Dict[Any, str]) -> str:
    process = place.get("process")
    if process is None:
        return place["place"]
    name = names.get(place.get("input")) or names.get(process, f"pid {process}")
    return f"{place['place']} ({name})"


def _place_peaks(summary: Dict[str, Any]) -> Dict[str, int]:
    names = _process_names(summary)
    return {_place_key(p, names): p["peak_bytes"] for p in summary.get("places") or []}


_NAMED_ESCAPES = {"\0": "\\0", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                  "\u2028": "\\u2028", "\u2029": "\\u2029"}
_TO_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escaped(match: "re.Match[str]") -> str:
    c = match.group()
    if "\ud800" <= c <= "\udfff":
        return "\ufffd"  # a lone surrogate: bytes that were no UTF-8, as the table shows them
    return _NAMED_ESCAPES.get(c) or f"\\x{ord(c):02x}"


def _escape(text: str) -> str:
    """As the report's tables print names (text_escape.cc): on one line, control
    characters escaped."""
    return _TO_ESCAPE.sub(_escaped, text)


def format_bytes(n: int) -> str:
    """As the text table writes sizes: 3.91 KiB, 512 B."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def _ms(ms: float) -> str:
    return f"{ms:.6g}"


def _change(base: Any, new: Any, text) -> str:
    return f"{'-' if base is None else text(base)} -> {'-' if new is None else text(new)}"


def _change_bytes(base: Optional[int], new: Optional[int]) -> str:
    """Both sides, and the exact change: 4 bytes more of 3.91 KiB show."""
    text = _change(base, new, format_bytes)
    if base is not None and new is not None and new != base:
        text += f" ({'+' if new > base else '-'}{abs(new - base)} B)"
    return text


def _bytes_of(side: Optional[Dict[str, Any]], field: str) -> Optional[int]:
    if side is None:
        return None
    return sum(stats[field] for stats in side["memory"].values())


class Diff:
    """What changed from a base run to a new one (see paddle_prof.diff)."""

    def __init__(self, base: Dict[str, Any], new: Dict[str, Any], time_threshold: float,
                 memory_threshold: float) -> None:
        self.time_threshold = time_threshold
        self.memory_threshold = memory_threshold
        self._base, self._new = base, new
        base_rows, new_rows = base.get("events") or [], new.get("events") or []
        by_thread = _split(base_rows, "thread") and _split(new_rows, "thread")
        by_process = _split(base_rows, "process") and _split(new_rows, "process")
        before = _keyed_rows(base, by_thread, by_process)
        after = _keyed_rows(new, by_thread, by_process)
        self.rows: List[Dict[str, Any]] = []
        for key in list(before) + [k for k in after if k not in before]:
            b, n = before.get(key), after.get(key)
            time_by = None
            if b is None:
                status = ["new"]
            elif n is None:
                status = ["gone"]
            else:
                time, time_by = _time_statuses(b, n, time_threshold)
                status = (time + _memory_statuses(b, n, memory_threshold)) or ["same"]
            entry = {"name": key[0], "tag": key[1], "status": status, "time_by": time_by,
                     "base": _side(b), "new": _side(n)}
            if by_thread:
                entry["thread"] = key[2]
            if by_process:
                entry["process"] = key[3]
            self.rows.append(entry)
        base_peaks, new_peaks = _place_peaks(base), _place_peaks(new)
        self.places: List[Dict[str, Any]] = []
        for place in list(base_peaks) + [p for p in new_peaks if p not in base_peaks]:
            b, n = base_peaks.get(place), new_peaks.get(place)
            if b is None or n is None:
                status = "new" if b is None else "gone"
            elif _grew(b, n, memory_threshold):
                status = "more_memory"
            elif _grew(n, b, memory_threshold):
                status = "less_memory"
            else:
                status = "same"
            self.places.append({"place": place, "base_peak_bytes": b, "new_peak_bytes": n,
                                "status": status})
        self.regressions: List[Dict[str, Any]] = (
            [row for row in self.rows if any(s in REGRESSIONS for s in row["status"])] +
            [place for place in self.places if place["status"] == "more_memory"])

    def changed(self) -> List[Dict[str, Any]]:
        """The rows whose status is not ``same``: those with a time status first, largest
        change of total time first, then those with a memory status, largest peak change
        first."""
        def total(side: Optional[Dict[str, Any]]) -> float:
            return side["total_ms"] if side else 0.0

        def peak(side: Optional[Dict[str, Any]]) -> int:
            return sum(m["peak_bytes"] for m in (side or {}).get("memory", {}).values())

        timed = [r for r in self.rows
                 if set(r["status"]) & {"new", "gone", "slower", "faster"}]
        memory = [r for r in self.rows if r not in timed and r["status"] != ["same"]]
        timed.sort(key=lambda r: -abs(total(r["new"]) - total(r["base"])))
        memory.sort(key=lambda r: -abs(peak(r["new"]) - peak(r["base"])))
        return timed + memory

    def to_dict(self) -> Dict[str, Any]:
        return {"time_threshold": self.time_threshold,
                "memory_threshold": self.memory_threshold, "rows": self.rows,
                "places": self.places, "regressions": self.regressions}

    def table(self) -> str:
        """The changed rows and places as text, as the CLI prints them."""
        lines = [f"Compared with thresholds: time {self.time_threshold * 100:g}%, memory "
                 f"{self.memory_threshold * 100:g}%"]
        averaged = sum(row["time_by"] == "average" for row in self.rows)
        if averaged:
            lines.append(f"Time judged by the average call for {averaged} of {len(self.rows)} "
                         f"rows: a summary has no call durations (written before them, or "
                         f"edited)")
        few = sum(row["time_by"] == "few_calls" for row in self.rows)
        if few:
            lines.append(f"Time not judged for {few} of {len(self.rows)} rows: fewer than "
                         f"{SPREAD_CALLS} calls on a side give no spread to tell noise by "
                         f"(memory is judged on every row)")
        changed = self.changed()
        places = [p for p in self.places if p["status"] != "same"]
        if not changed and not places:
            lines.append("No changes: every row and place is the same within the thresholds.")
            return "\n".join(lines) + "\n"
        cells = [["Event", "Status", "Calls", "P50 (ms)", "Total (ms)", "Peak Mem.",
                  "Live Mem."]]
        for row in changed:
            label = row["name"] + (f" [{row['tag']}]" if row.get("tag") is not None else "")
            if row.get("process") is not None:
                label = f"{row['process']}::{label}"
            if row.get("thread") is not None:
                label = f"thread{row['thread']}::{label}"
            b, n = row["base"], row["new"]
            call = (f"avg {_change(_average(b), _average(n), _ms)}"
                    if row["time_by"] == "average" else
                    _change(b and b["p50_ms"], n and n["p50_ms"], _ms))
            cells.append([_escape(label), ",".join(row["status"]),
                          _change(b and b["calls"], n and n["calls"], str), call,
                          _change(b and b["total_ms"], n and n["total_ms"], _ms),
                          _change_bytes(_bytes_of(b, "peak_bytes"), _bytes_of(n, "peak_bytes")),
                          _change_bytes(_bytes_of(b, "live_bytes"), _bytes_of(n, "live_bytes"))])
        if changed:
            widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]))]
            lines.append(f"Changed rows: {len(changed)} (time first, then memory)")
            lines.extend("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip()
                         for line in cells)
        for place in places:
            lines.append(f"Peak on {_escape(place['place'])}: "
                         f"{_change_bytes(place['base_peak_bytes'], place['new_peak_bytes'])}"
                         f" ({place['status']})")
        lines.append(f"Regressions: {len(self.regressions)}")
        return "\n".join(lines) + "\n"

    def to_html(self, path: PathLike) -> None:
        """Writes a self-contained HTML page of the diff to ``path``."""
        from paddle_prof.diff_page import write_diff_page
        write_diff_page(self, self._base, self._new, path)

    def __repr__(self) -> str:
        return (f"<paddle_prof.Diff: {len(self.changed())} changed rows, "
                f"{len(self.regressions)} regressions>")


def diff(base: Union[Report, PathLike], new: Union[Report, PathLike],
         time_threshold: Union[float, str] = TIME_THRESHOLD,
         memory_threshold: Union[float, str] = MEMORY_THRESHOLD) -> Diff:
    """What changed from ``base`` to ``new`` (Reports or summary paths).

    A row is ``slower`` when its new median call is over ``time_threshold`` (relative)
    above the base median and above the base's 90th percentile, ``faster`` likewise below
    it and below the 10th; ``more_memory``/``less_memory`` when a place's peak or live
    bytes moved by more than ``memory_threshold`` (relative; 0: any byte); ``new`` or
    ``gone`` when one side lacks it; else ``same``. Where a summary has no call durations
    (one written before them) a row's average call is judged instead, by the threshold
    alone, and its ``time_by`` says ``"average"`` (else ``"median"``). A row with fewer
    than SPREAD_CALLS (10) calls on a side has no spread to judge its time by: its time is
    not judged (``time_by``: ``"few_calls"``), its memory is. Thresholds are
    numbers, fractions (0.1), or strings, percentages ('10%'); a string without '%' is
    a ValueError.

    Example::

        d = paddle_prof.diff('base.json', 'new.json')
        for row in d.regressions:
            print(row)
    """
    return Diff(_summary(base, "base"), _summary(new, "new"),
                threshold(time_threshold, "time_threshold"),
                threshold(memory_threshold, "memory_threshold"))
