"""The report a profiling window produces, as Python data."""

from __future__ import annotations

import copy
import json
import os
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Union

from paddle_prof import _core
from paddle_prof.atomic_write import write_atomically


ROW_LIMIT = _core.ROW_LIMIT  # rows a printed table shows unless told otherwise
TABLE_WIDTH = _core.TABLE_WIDTH  # the terminal columns a printed table fits by default


def checked_row_limit(row_limit: Optional[int]) -> int:
    """The limit as the core takes it (0: all); ValueError for a negative or non-int one."""
    if row_limit is None:
        return 0
    if isinstance(row_limit, bool) or not isinstance(row_limit, int) or row_limit < 0:
        raise ValueError(f"row_limit must be None or an int >= 0; got {row_limit!r}")
    return row_limit


def _width(width: Optional[int]) -> int:
    """The width as the core takes it (0: no limit); ValueError for a negative or non-int one."""
    if width is None:
        return 0
    if isinstance(width, bool) or not isinstance(width, int) or width < 0:
        raise ValueError(f"width must be None or an int >= 0; got {width!r}")
    return width


def _namespace(entry: Dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(**entry)


class Report:
    """What one profiling window measured.

    ``events`` are rows with the attributes of the summary JSON's ``events`` entries
    (``name``, ``tag``, ``calls``, ``total_ms``, ``self_ms``, ``min_ms``, ``max_ms``,
    ``ave_ms``, ``ratio``, ``memory`` ...), sorted by the window's sort key. ``process``
    is the process that recorded it and ``processes`` the child processes merged into it
    (``pid``, ``role``, ``worker_id``, ``calls``, ``wall_ms``, ``summary_path``).

    Example::

        report = paddle_prof.stop_profiler('self')
        slowest = report.events[0]
        print(slowest.name, slowest.self_ms, report.to_dict()['wall_ms'])
    """

    # Read from the summary on first use: a with-block that only prints its table never
    # pays for turning every row into Python objects.
    _FIELDS = frozenset({"events", "places", "steps", "warnings", "wall_ms", "state",
                         "sorted_by", "dropped_events", "cycle", "process", "processes",
                         "clock", "timeline", "merged_from", "modules", "phases_ms",
                         "throughput", "advice", "notes", "peaks_by"})

    def __init__(self, native: Any) -> None:
        self._native = native  # the core's report (native_report)
        self._parsed: Optional[Dict[str, Any]] = None

    @property
    def _summary(self) -> Dict[str, Any]:
        if self._parsed is None:
            self._parsed = json.loads(self._native.to_json())
        return self._parsed

    def __getattr__(self, name: str) -> Any:
        if name not in Report._FIELDS:
            raise AttributeError(f"'Report' object has no attribute {name!r}")
        self._load()
        return self.__dict__[name]

    def _load(self) -> None:
        summary = self._summary
        # A row's `sources` ([{"frame", "calls"}], with record_stacks) is [] when it has none.
        self.events: List[SimpleNamespace] = [
            _namespace({"sources": [], **e}) for e in summary["events"]]
        self.places: List[SimpleNamespace] = [_namespace(p) for p in summary["places"]]
        self.steps: List[SimpleNamespace] = [_namespace(s) for s in summary["steps"]]
        self.warnings: List[str] = list(summary["warnings"])
        # What to change ({kind, message, fix, bytes, ms}), and caveats on the figures.
        self.advice: List[SimpleNamespace] = [_namespace(a) for a in summary.get("advice", [])]
        self.notes: List[str] = list(summary.get("notes", []))
        self.wall_ms: float = summary["wall_ms"]
        self.state: str = summary["state"]
        self.sorted_by: str = summary["sorted_by"]
        self.dropped_events: int = summary["dropped_events"]
        self.cycle: Optional[int] = summary["cycle"]  # of a schedule, else None
        # Who recorded it (pid, host, rank, role ...), and the children merged into it.
        self.process = _namespace(summary["process"])
        self.processes: List[SimpleNamespace] = [_namespace(p) for p in summary["processes"]]
        # When its window opened (unix_ns) and this clock's offset to rank 0's; a merge's
        # inputs (path, process, label, key, wall_ms), empty unless merged.
        self.clock = _namespace(summary["clock"])
        # Live bytes over the window per place label: {"CPU": {"t_ms": [...], "bytes": [...]}}.
        self.timeline: Dict[str, Dict[str, list]] = summary.get("timeline", {})
        self.merged_from: List[SimpleNamespace] = [
            _namespace(m) for m in summary.get("merged_from", [])]
        # A merge's peak per place kind and input: {"CUDA:0": {"<rank or pid>": bytes}}.
        self.peaks_by: Dict[str, Dict[str, int]] = summary.get("peaks_by", {})
        # paddle_prof.torch's model view: modules by path, step phases, throughput.
        self.modules: List[SimpleNamespace] = [_namespace(m) for m in summary.get("modules", [])]
        self.phases_ms: Dict[str, float] = summary.get("phases_ms", {})
        throughput = summary.get("throughput")
        self.throughput: Optional[SimpleNamespace] = (
            _namespace(throughput) if throughput is not None else None)

    def table(self, detailed: bool = False, row_limit: Optional[int] = ROW_LIMIT,
              view: str = "events", width: Optional[int] = TABLE_WIDTH) -> str:
        """The text report; ``detailed`` adds the P50 and P99 of the calls and allocated and
        freed bytes per place.

        In order: the header and memory lines, the first ``row_limit`` rows in sort order
        (None or 0: all) and a line saying how many more there are and the summary file
        (or this Report) that has them all, the warnings, why memory grew, the advice and
        the notes. Lines fit ``width`` columns (None or 0: no limit): shape tags are
        shortened to what tells the rows apart, text wraps; the files keep full names.
        ``view='modules'`` prints the modules as a tree instead (paddle_prof.torch), and
        ``view='phases'`` the steps' phases as Paddle's model summary.
        """
        if view == "events":
            return self._native.table(bool(detailed), checked_row_limit(row_limit), _width(width))
        if view == "modules":
            return self._native.module_table()
        if view == "phases":
            return self._native.phase_table()
        raise ValueError(f"view must be 'events', 'modules' or 'phases'; got {view!r}")

    def to_html(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the HTML report to ``path``, whole or not at all: one self-contained
        page (it loads nothing, opens from file://) with the header, the warnings, memory
        over time, the steps and the sortable table of every row. OSError naming the
        file when it cannot be written.
        """
        write_atomically(os.fsdecode(os.fspath(path)), self._native.to_html())

    def to_dict(self) -> Dict[str, Any]:
        """The summary JSON (version 1) as Python data: equal to the summary file."""
        return copy.deepcopy(self._summary)

    def __repr__(self) -> str:
        return (f"<paddle_prof.Report {len(self.events)} events, wall {self.wall_ms:.3f} ms, "
                f"sorted by {self.sorted_by}>")


def native_report(report: Report) -> Any:
    """The core's report behind `report`, for the package's functions that hand it back to
    the core (merge, diff)."""
    return report._native
