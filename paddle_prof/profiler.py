"""Profiling windows: the profiler context manager and start/stop/reset/mark_step."""

from __future__ import annotations

import sys
from typing import Optional, TextIO

from paddle_prof import _core
from paddle_prof.report import Report

STATES = ("CPU", "GPU", "All")
SORTED_KEYS = (None, "calls", "total", "self", "max", "min", "ave", "peak_memory", "live_memory")


def _check_state(state: str) -> str:
    if state not in STATES:
        raise ValueError(f"state must be one of {', '.join(map(repr, STATES))}; got {state!r}")
    return state


def _check_sorted_key(sorted_key: Optional[str]) -> str:
    if sorted_key not in SORTED_KEYS:
        valid = ", ".join(map(repr, SORTED_KEYS))
        raise ValueError(f"sorted_key must be one of {valid}; got {sorted_key!r}")
    return sorted_key or "total"


def start_profiler(state: str = "CPU") -> None:
    """Opens a profiling window. ``state``: 'CPU', 'GPU' or 'All'.

    Raises ValueError for another state, RuntimeError when a profiler is already running
    or when 'GPU'/'All' is asked for without a usable GPU.

    Example::

        paddle_prof.start_profiler('CPU')
        train()
        report = paddle_prof.stop_profiler('total')
    """
    _check_state(state)
    if _core.is_enabled() and not _core.implicit_profiler_running():
        raise RuntimeError("a profiler is already running: stop it first "
                           "(paddle_prof.stop_profiler(), or leave its with-block)")
    _core.enable_profiler(state)


def stop_profiler(sorted_key: Optional[str] = None, profile_path: Optional[str] = None, *,
                  per_thread: bool = False, stream: Optional[TextIO] = None,
                  print_report: bool = True) -> Report:
    """Closes the window and returns its Report, printing the table to ``stream``
    (default: sys.stdout).

    With ``profile_path``, writes a Chrome trace there and the summary JSON at
    ``profile_path + '.summary.json'``; a path that cannot be written is reported on
    stderr and the report is still returned. ``per_thread`` gives one row per thread.
    """
    key = _check_sorted_key(sorted_key)
    if not _core.is_enabled():
        raise RuntimeError("no profiler is running: call paddle_prof.start_profiler() first")
    report = Report(_core.stop_profiler(key, str(profile_path or ""), bool(per_thread)))
    if print_report:
        print(report.table(), file=stream if stream is not None else sys.stdout, end="")
    return report


def reset_profiler() -> None:
    """Drops everything recorded so far in the running window (events, steps).

    Calls still open are left out of the report and counted in a warning. Does nothing
    when no profiler runs.
    """
    _core.reset_profiler()


def mark_step() -> None:
    """Marks the end of a training step (iteration); the report keeps one entry per step."""
    _core.mark_step()


class profiler:  # noqa: N801 (the API's name, as in Paddle)
    """Profiles the enclosed block and prints the report when it exits.

    Example::

        with paddle_prof.profiler('CPU', 'total', profile_path='/tmp/p.json') as prof:
            for it in range(10):
                if it == 2:
                    paddle_prof.reset_profiler()
                train_step()
                paddle_prof.mark_step()
        print(prof.report.wall_ms)

    An exception inside the block still stops the profiler and prints the report; the
    exception then propagates. The table goes to ``stream`` (default: sys.stdout, looked
    up at exit, so contextlib.redirect_stdout and Jupyter see it).
    """

    def __init__(self, state: str = "CPU", sorted_key: Optional[str] = None,
                 profile_path: Optional[str] = None, *, per_thread: bool = False,
                 stream: Optional[TextIO] = None) -> None:
        self.state = _check_state(state)
        self.sorted_key = _check_sorted_key(sorted_key)
        self.profile_path = profile_path
        self.per_thread = per_thread
        self.stream = stream
        self.report: Optional[Report] = None

    def __enter__(self) -> "profiler":
        start_profiler(self.state)
        return self

    def __exit__(self, *exc_info: object) -> bool:
        self.report = stop_profiler(self.sorted_key, self.profile_path,
                                    per_thread=self.per_thread, stream=self.stream)
        return False
