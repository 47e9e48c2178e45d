"""Two runs compared: ``paddle_prof.diff()`` and ``paddle-prof diff``.

Rows match by (name, tag), and by thread or process too when both runs are split that
way (a process known by its rank, else by its place among the merged inputs or the
children). Time is judged on each row's median call against the other run's spread of
calls, so that noise is not a regression (on its average call where a summary has no
call durations), and only where each side has 10 calls or more; memory is exact. The
core compares (src/report/report_diff.cc) and writes the text and the page.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Union

from paddle_prof import _core
from paddle_prof.atomic_write import write_atomically
from paddle_prof.merge import PathLike, load
from paddle_prof.report import Report, native_report

# A row's time is judged only where each side has this many calls.
SPREAD_CALLS = _core.SPREAD_CALLS
# The thresholds diff(), the CLI and the pytest plugin take when given none, as the
# percentages their options read.
TIME_THRESHOLD = "10%"
MEMORY_THRESHOLD = "0%"


def _report(item: Union[Report, PathLike], side: str) -> Report:
    if isinstance(item, Report):
        return item
    if isinstance(item, (str, os.PathLike)):
        return load(item)
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


class Diff:
    """What changed from a base run to a new one (see paddle_prof.diff)."""

    def __init__(self, base: Report, new: Report, time_threshold: float,
                 memory_threshold: float) -> None:
        self._base, self._new = native_report(base), native_report(new)
        self._native = _core.diff(self._base, self._new, time_threshold, memory_threshold)
        found = json.loads(self._native.to_json())
        self.time_threshold = time_threshold  # as given: JSON would write 0.0 as 0
        self.memory_threshold = memory_threshold
        # {name, tag, status, time_by, base, new} (and thread, process where both runs
        # are split that way); base/new: {calls, total_ms, p50_ms, memory}.
        self.rows: List[Dict[str, Any]] = found["rows"]
        # {place, base_peak_bytes, new_peak_bytes, status}
        self.places: List[Dict[str, Any]] = found["places"]
        # The rows that are slower or hold more memory, then the places with more.
        self.regressions: List[Dict[str, Any]] = found["regressions"]
        self._changed: List[int] = found["changed"]

    def changed(self) -> List[Dict[str, Any]]:
        """The rows whose status is not ``same``: those with a time status first, largest
        change of total time first, then those with a memory status, largest peak change
        first."""
        return [self.rows[i] for i in self._changed]

    def to_dict(self) -> Dict[str, Any]:
        return {"time_threshold": self.time_threshold,
                "memory_threshold": self.memory_threshold, "rows": self.rows,
                "places": self.places, "regressions": self.regressions}

    def table(self) -> str:
        """The changed rows and places as text, as the CLI prints them."""
        return self._native.table()

    def to_html(self, path: PathLike) -> None:
        """Writes a self-contained HTML page of the diff to ``path``: the changed rows,
        each place's memory over time in both runs overlaid, the steps side by side."""
        write_atomically(os.fspath(path), self._native.to_html(self._base, self._new))

    def __repr__(self) -> str:
        return (f"<paddle_prof.Diff: {len(self._changed)} changed rows, "
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
    return Diff(_report(base, "base"), _report(new, "new"),
                threshold(time_threshold, "time_threshold"),
                threshold(memory_threshold, "memory_threshold"))
