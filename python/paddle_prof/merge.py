"""Profiles read back and combined: ``paddle_prof.load()`` and ``paddle_prof.merge()``."""

from __future__ import annotations

import os
from typing import Any, Iterable, Union

from paddle_prof import _core
from paddle_prof.paths import refuse_nul
from paddle_prof.profiler import check_sorted_key
from paddle_prof.report import Report, native_report

SUMMARY_SUFFIX = _core.SUMMARY_SUFFIX  # what a trace path's summary adds to it

PathLike = Union[str, "os.PathLike[str]"]


def summary_path(path: PathLike) -> str:
    """The summary file ``path`` names: itself, or for a trace path P (what
    ``profile_path`` was), P.summary.json when that exists. TypeError for a non-path."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"a summary path must be a str or an os.PathLike; "
                        f"got {type(path).__name__} {path!r}")
    path = os.fsdecode(os.fspath(path))
    refuse_nul(path, "summary path")
    if not path.endswith(SUMMARY_SUFFIX) and os.path.isfile(path + SUMMARY_SUFFIX):
        return path + SUMMARY_SUFFIX
    return path


def load(path: PathLike) -> Report:
    """The Report a summary file holds (``<profile_path>.summary.json``, or the trace
    path beside it). ValueError naming the file when it cannot be read, is not a
    paddle_prof summary, or is a summary of another version.

    Example::

        report = paddle_prof.load('prof/rank0.json.summary.json')
        print(report.table())
    """
    return Report(_core.load_summary(summary_path(path)))


def _native(item: Any, index: int) -> Any:
    if isinstance(item, Report):
        return native_report(item)
    if isinstance(item, (str, os.PathLike)):
        return _core.load_summary(summary_path(item))
    raise TypeError(f"merge(): item {index} is a {type(item).__name__}; give Reports or "
                    f"summary paths (str or os.PathLike)")


def merge(items: Iterable[Union[Report, PathLike]], sorted_key: Union[str, None] = None) -> Report:
    """The profiles of several processes or ranks as one Report.

    ``items`` are Reports or summary paths (a trace path P stands for P.summary.json).
    Inputs go by rank when each has its own, else by host and pid ("rank 3",
    "node2 pid 1"). Rows merge by (name, tag), each with a ``spread`` of its total time
    over the inputs; steps merge by index, with each input's wall time (``wall_ms_by``);
    places stay one per input and place, with their ``process`` and ``input``, and
    ``peaks_by`` gives each input's peak per place kind; ``merged_from`` lists the inputs
    with their labels. Warnings name each straggler, in time or in memory, and two inputs
    that claim the same process (kept apart). ValueError for an empty list, or a file
    that is not a paddle_prof summary (naming it); TypeError for an item of another type.

    Example::

        merged = paddle_prof.merge(['prof/rank0.json', 'prof/rank1.json'])
        top = merged.events[0]
        print(top.name, top.spread['total_ms']['argmax'])   # the slowest rank
    """
    if isinstance(items, (str, bytes, os.PathLike, Report)):
        raise TypeError("merge() takes a list of Reports or summary paths; "
                        "put a single one in a list")
    try:
        items = list(items)
    except TypeError:
        raise TypeError(f"merge() takes a list of Reports or summary paths; "
                        f"got {type(items).__name__}") from None
    if not items:
        raise ValueError("merge(): nothing to merge; give a list of Reports or summary paths")
    key = check_sorted_key(sorted_key)
    if all(isinstance(item, (str, os.PathLike)) for item in items):
        # Read on every core and folded in as read: a thousand ranks' files in seconds.
        return Report(_core.merge_files([summary_path(item) for item in items], key))
    natives = [_native(item, i) for i, item in enumerate(items)]
    return Report(_core.merge(natives, key))
