"""Profiling windows: the profiler context manager and start/stop/reset/mark_step."""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import signal
import sys
import threading
import warnings
from typing import Any, Callable, List, Optional, Sequence, TextIO

from paddle_prof import _core
from paddle_prof import distributed as _distributed
from paddle_prof import listener as _listener
from paddle_prof import schedule as _schedule
from paddle_prof import step_boundaries as _step_boundaries
from paddle_prof.paths import PathArg, check_path
from paddle_prof.report import ROW_LIMIT, Report, checked_row_limit

STATES = tuple(_core.STATES)
SORTED_KEYS = (None,) + tuple(_core.SORTED_KEYS)


def _source_exclusions() -> List[str]:
    """Where frames are never a call's source (record_stacks): the profiler's and torch's
    directories (torch found without importing it), and contextlib, whose wrapper runs a
    record_event used as a decorator."""
    directories = [os.path.dirname(os.path.abspath(__file__))]
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        directories.append(os.path.dirname(os.path.abspath(spec.origin)))
    return [d + os.sep for d in directories] + [contextlib.__file__]


_core.set_source_exclusions(_source_exclusions())
# No stack is taken once the interpreter exits: a thread taking the GIL then could be
# stopped by the finalization inside a call.
atexit.register(_core.stop_stack_capture_at_exit)


def _checked(check: Callable[[str], None], value: Any, what: str, names: Sequence[str]) -> None:
    """Raises ValueError unless the core's `check` accepts `value`: with the core's own
    message, or, for what is not a str it can read, naming the valid values."""
    try:
        if not isinstance(value, str):  # the binding would take bytes too
            raise TypeError
        check(value)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    except TypeError:  # not a str, or one that is not valid Unicode
        valid = ", ".join(map(repr, names))
        raise ValueError(f"{what} must be one of {valid}; got {value!r}") from None


def _check_state(state: str) -> str:
    _checked(_core.check_state, state, "state", STATES)
    return state


def check_sorted_key(sorted_key: Optional[str]) -> str:
    if sorted_key is None:
        return "total"
    _checked(_core.check_sorted_key, sorted_key, "sorted_key", SORTED_KEYS)
    return sorted_key


def _check_path(path: PathArg, name: str = "profile_path") -> str:
    """The path as a str ('' for None); see paths.check_path."""
    return "" if path is None else check_path(path, name)


class _DeferredInterrupt:
    """Holds SIGINT back while a finished window's report is built, so that Ctrl-C
    cannot lose it: the signal is raised again, to the program's own handler, once the
    report is safe. Only the main thread can swap Python's signal handlers; elsewhere
    this does nothing."""

    def __init__(self) -> None:
        self.swapped = False
        self.interrupted = False
        self.previous: Any = None
        if threading.current_thread() is threading.main_thread():
            try:
                self.previous = signal.signal(signal.SIGINT, self._note)
                self.swapped = True
            except ValueError:  # not the main interpreter
                pass

    def _note(self, signum: int, frame: Any) -> None:
        self.interrupted = True

    def restore(self) -> None:
        """Puts the program's handler back and delivers a held SIGINT to it."""
        if not self.swapped:
            return
        self.swapped = False
        signal.signal(signal.SIGINT, signal.SIG_DFL if self.previous is None else self.previous)
        if self.interrupted:
            signal.raise_signal(signal.SIGINT)


_last_report: Optional[Report] = None  # what the latest stop returned
_stops = 0  # stops so far: tells whether _last_report is of a given window


def _stop(sorted_key: Optional[str], profile_path: PathArg, per_thread: bool,
          cycle: Optional[int] = None, per_process: bool = False) -> Report:
    global _last_report, _stops
    key = check_sorted_key(sorted_key)
    path = _check_path(profile_path)
    if not _core.is_enabled():
        raise RuntimeError("no profiler is running: call paddle_prof.start_profiler() first")
    try:
        _last_report = Report(_core.stop_profiler(key, path, bool(per_thread), cycle,
                                                  bool(per_process)))
    finally:
        _core.stop_native_tracking()  # a native=True window's, once its report is built
    _stops += 1
    return _last_report


def _track_native() -> None:
    """native=True: every malloc of the process tracked from now on, on the place
    'native', with no preload library (a RuntimeWarning when it cannot be)."""
    problem = _core.start_native_tracking()
    if problem and "preload library" not in problem:  # run --native tracks already
        warnings.warn(f"paddle_prof: native memory is not tracked: {problem}", RuntimeWarning,
                      stacklevel=4)


def start_profiler(state: str = "CPU", *, follow_children: bool = True) -> None:
    """Opens a profiling window. ``state``: 'CPU', 'GPU' or 'All'.

    With ``follow_children``, each process the program starts in the window (os.fork,
    multiprocessing with fork, spawn or forkserver, DataLoader workers) profiles itself
    quietly, and its profile is merged into the window's report when it stops, if the
    child has exited by then (a warning names each child still running).

    Raises ValueError for another state, RuntimeError when a profiler is already running
    or when 'GPU'/'All' is asked for without a usable GPU.

    Under torch.distributed (initialised), the window takes its rank from it and
    measures this process's clock offset to rank 0's: every rank of a job opens its
    window at the same point of the program, as training code does.

    Example::

        paddle_prof.start_profiler('CPU')
        train()
        report = paddle_prof.stop_profiler('total')
    """
    _check_state(state)
    _listener.program_opens_window()  # a window asked for from outside ends first
    if _core.is_enabled() and not _core.implicit_profiler_running():
        if window_opened_by:
            raise RuntimeError(f"a profiler is already running: {window_opened_by}")
        raise RuntimeError("a profiler is already running: stop it first "
                           "(paddle_prof.stop_profiler(), or leave its with-block)")
    if _core.implicit_profiler_running():
        end_implicit_window(stopping=False)  # the program's own profiler takes over
    distributed = _distributed.window_opening()  # before the window: its exchanges are ours
    if distributed is not None:
        _core.set_distributed(*distributed)  # for the window, its paths and its capture
    for opening in list(window_opening):
        opening()
    _core.enable_profiler(state)
    _core.set_follow_children(bool(follow_children))


# Who opened the running window, when not the program itself (the pytest plugin): said
# to a program whose own profiler cannot start beside it.
window_opened_by = ""

# What run's implicit window installed beside it (a framework bridge's hooks): each is
# called with stopping=True as the window is about to stop, False as the program's own
# profiler takes over, and takes itself off this list.
implicit_window_ending: List[Callable[[bool], None]] = []

# Called just before each window opens (paddle_prof.torch adopts the CPU tensors the
# program holds, which it does not track between windows): what they tell the tracker
# is the window's start, not its allocations.
window_opening: List[Callable[[], None]] = []


def end_implicit_window(stopping: bool) -> None:
    for end in list(implicit_window_ending):
        end(stopping)


def stop_profiler(sorted_key: Optional[str] = None, profile_path: PathArg = None, *,
                  per_thread: bool = False, per_process: bool = False,
                  stream: Optional[TextIO] = None, print_report: bool = True,
                  row_limit: Optional[int] = ROW_LIMIT) -> Report:
    """Closes the window and returns its Report, printing the table to ``stream``
    (default: sys.stdout).

    With ``profile_path`` (a str or os.PathLike), writes a Chrome trace there and the
    summary JSON at ``profile_path + '.summary.json'``, each whole or not at all; a file
    that cannot be written is a warning of the report (and a line on stderr), and the
    report is still returned. ``per_thread`` gives one row per thread. A Ctrl-C while the
    report is built is held back until the report is printed and its files written, then
    delivered (use ``with profiler()`` to keep the report itself as ``prof.report``).
    The printed table shows ``row_limit`` rows (None or 0: all); the Report and the
    summary hold every row. Children's rows merge with the window's own, as threads'
    do; ``per_process`` gives one row per process instead. In a followed child, the
    window is the child's own profile: it is written where its parent collects it, and
    nothing is printed.
    """
    checked_row_limit(row_limit)
    deferred = _DeferredInterrupt()
    try:
        quiet = _core.child_profile_running()
        report = _stop(sorted_key, profile_path, per_thread, per_process=per_process)
        if print_report and not quiet:
            print(report.table(row_limit=row_limit), file=stream if stream is not None else sys.stdout,
                  end="")
    finally:
        deferred.restore()
    return report


def set_capture_dir(directory: PathArg, every_window: bool = False) -> None:
    """Gives the open window a capture in ``directory`` (with ``every_window``, later
    windows too: FLAGS_paddle_prof_capture_dir); a RuntimeWarning when it cannot have
    one there (it is then profiled in memory only)."""
    problem = _core.set_capture_dir(_check_path(directory, "capture_dir"), every_window)
    if problem:
        warnings.warn(f"paddle_prof: {problem}", RuntimeWarning, stacklevel=3)


def recover(directory: PathArg, sorted_key: Optional[str] = None,
            profile_path: PathArg = None, *, per_thread: bool = False) -> Report:
    """The Report of a process that ended without stopping its profiler (SIGKILL, the
    OOM killer), built from the capture its window left in ``directory``
    (``profiler(capture_dir=...)``, FLAGS_paddle_prof_capture_dir, ``run --capture``).
    It holds every call that ended before the process did, and a warning that says the
    process ended without stopping its profiler. With ``profile_path``, the trace and the
    summary are written as stop_profiler() writes them. Nothing is printed. ValueError
    when ``directory`` holds no capture.

    Example::

        report = paddle_prof.recover('/tmp/capture')
        print(report.table())
    """
    key = check_sorted_key(sorted_key)
    return Report(_core.recover(_check_path(directory, "directory"), key,
                                _check_path(profile_path), bool(per_thread)))


def snapshot(sorted_key: Optional[str] = None, profile_path: PathArg = None, *,
             per_thread: bool = False) -> Report:
    """The Report of the running window so far; recording goes on.

    Calls still open are left out and counted in a warning; GPU work is reported when
    the window stops. With ``profile_path``, the trace and the summary are written as
    stop_profiler() writes them. Nothing is printed. RuntimeError when no profiler runs.

    Example::

        with paddle_prof.profiler('CPU'):
            for step in range(10_000):
                train_step()
                if step % 1000 == 999:
                    print(paddle_prof.snapshot('total').table())
    """
    key = check_sorted_key(sorted_key)
    path = _check_path(profile_path)
    if not _core.is_enabled():
        raise RuntimeError("no profiler is running: call paddle_prof.start_profiler() first")
    return Report(_core.snapshot_profiler(key, path, bool(per_thread)))


def reset_profiler() -> None:
    """Drops everything recorded so far in the running window (events, steps).

    Calls still open are left out of the report and counted in a warning. Does nothing
    when no profiler runs.
    """
    _core.reset_profiler()


def _check_samples(num_samples: Optional[int]) -> Optional[int]:
    if num_samples is None:
        return None
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples < 0:
        raise ValueError(f"num_samples must be None or an int >= 0; got {num_samples!r}")
    return num_samples


def mark_step(num_samples: Optional[int] = None) -> None:
    """Marks the end of a training step (iteration); the report keeps one entry per step.
    ``num_samples``, the step's batch size, gives the report's throughput (samples/s)."""
    _core.mark_step(_check_samples(num_samples))
    _step_boundaries.marked()  # a window asked for from outside opens or ends at steps


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

    With a ``schedule`` (paddle_prof.schedule), ``prof.step()`` ends each step: only the
    schedule's warm-up and active steps are recorded, and each cycle's active steps make
    one Report, in ``prof.reports``, handed to ``on_trace_ready(report)`` (default: print
    its table) as its last active step ends. ``profile_path`` may then hold ``{cycle}``;
    without it each cycle's files get ``.cycle<N>`` before the extension.

    ``keep_last_steps=N`` makes the window a flight recorder: only the last N steps'
    calls are kept, so it can stay open for days in bounded memory, and the report covers
    those steps (``steps`` keep their index from the window's start).

    ``capture_dir=DIR`` sends the window's records to memory-mapped files in DIR as they
    are made, so that a process killed by SIGKILL or the OOM killer loses nothing it
    recorded: ``paddle_prof.recover(DIR)`` (or ``python3 -m paddle_prof recover DIR``)
    then builds its report. A window that stops normally leaves no capture behind; a
    DIR that cannot hold one is a RuntimeWarning, and the window is profiled in memory.

    An allocation that fails in the window (the tracking allocator, PyTorch's CPU
    allocator) first writes a dump of it to ``oom_path`` (default
    ``<profile_path>.oom.json``, else ``./paddle_prof.oom.<pid>.json``); the program's own
    error then goes on unchanged.

    ``native=True`` tracks every allocation of the process (every malloc, numpy's
    arrays, C extensions' buffers) from the window's start on the place ``native``, as
    ``python3 -m paddle_prof run --native`` does, with no preload library and no restart:
    in a notebook, a pytest session, any running interpreter. Blocks allocated before
    the window and freed in it are counted as untracked frees.

    ``record_stacks=True`` keeps the Python stack of each top-level call (one with no
    event open on its thread): each row's ``sources`` name the lines its calls came from,
    the memory held at the peak and the growth holders name the line that allocated it
    (``source``), and the trace's events carry ``args.stack``.

    ``follow_children`` (default True): each process the program starts in the window
    (os.fork, multiprocessing with fork, spawn or forkserver, DataLoader workers)
    profiles itself quietly, and when the window stops, the children that have exited
    are merged into its report: rows merge as threads' do (``per_process=True``: one
    row per process, printed ``pid1234::name``), ``report.places`` gain each child's
    places, and ``report.processes`` lists the children. A warning names each child
    still running and where its profile will be written.
    """

    def __init__(self, state: str = "CPU", sorted_key: Optional[str] = None,
                 profile_path: PathArg = None, *, per_thread: bool = False,
                 stream: Optional[TextIO] = None, row_limit: Optional[int] = ROW_LIMIT,
                 schedule: Optional[_schedule.schedule] = None,
                 on_trace_ready: Optional[Callable[[Report], Any]] = None,
                 oom_path: PathArg = None, keep_last_steps: Optional[int] = None,
                 capture_dir: PathArg = None, follow_children: bool = True,
                 per_process: bool = False, record_stacks: bool = False,
                 native: bool = False) -> None:
        self.state = _check_state(state)
        checked_row_limit(row_limit)
        self.row_limit = row_limit
        self.sorted_key = check_sorted_key(sorted_key)
        _check_path(profile_path)
        if schedule is not None and not isinstance(schedule, _schedule.schedule):
            raise TypeError(f"schedule must be a paddle_prof.schedule; got {schedule!r}")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError(f"on_trace_ready must be callable; got {on_trace_ready!r}")
        _check_path(oom_path, "oom_path")
        if keep_last_steps is not None and (isinstance(keep_last_steps, bool) or
                                            not isinstance(keep_last_steps, int) or
                                            keep_last_steps < 1):
            raise ValueError(f"keep_last_steps must be None or an int >= 1; got {keep_last_steps!r}")
        self.keep_last_steps = keep_last_steps
        if capture_dir is not None and not _check_path(capture_dir, "capture_dir"):
            raise ValueError("capture_dir must be None or a directory; got ''")
        self.capture_dir = capture_dir
        self.profile_path = profile_path
        self.oom_path = oom_path
        self.per_thread = per_thread
        self.follow_children = bool(follow_children)
        self.per_process = bool(per_process)
        self.record_stacks = bool(record_stacks)
        self.native = bool(native)
        self.stream = stream
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.report: Optional[Report] = None
        self.reports: List[Report] = []  # one per finished cycle of the schedule
        self._stops_at_enter = 0
        self._step = 0          # the schedule's step now running
        self._recording = False  # this profiler's window is open

    def _window_path(self, cycle: Optional[int], ending: bool = False) -> PathArg:
        """Where the window's files go: the profile path, or the cycle's (`ending`: as the
        cycle ends and its files are written)."""
        if cycle is None:
            return self.profile_path
        saving = getattr(self.on_trace_ready, "profile_path", None)
        if callable(saving):
            return saving(cycle, ending)
        if self.profile_path is None:
            return None
        return _schedule.cycle_path(_check_path(self.profile_path), cycle)

    def _start(self) -> None:
        start_profiler(self.state, follow_children=self.follow_children)
        cycle = self.schedule.cycle(self._step) if self.schedule is not None else None
        # The snapshot signal (FLAGS_paddle_prof_snapshot_signal) writes beside this path.
        _core.set_snapshot_path(_check_path(self._window_path(cycle)))
        # An allocation that fails in the window writes its dump here (default: beside the
        # profile path).
        _core.set_oom_path(_check_path(self.oom_path, "oom_path"))
        if self.keep_last_steps is not None:
            _core.set_keep_last_steps(self.keep_last_steps)
        if self.record_stacks:
            _core.set_record_stacks(True)
        if self.native:
            _track_native()
        if self.capture_dir is not None:  # last: it restarts the window's records
            set_capture_dir(self.capture_dir)
        self._stops_at_enter = _stops
        self._recording = True

    def __enter__(self) -> "profiler":
        # run's implicit window hands over its hooks (a framework bridge's) now, not at
        # this window's first active step (a schedule may wait): the window's own would
        # wrap them, and put them back as it closed.
        if _core.implicit_profiler_running():
            end_implicit_window(stopping=False)
        if self.schedule is None:
            self._start()
        else:
            self._step = 0
            if self.schedule.action(0) in (_schedule.WARMUP, _schedule.ACTIVE):
                self._start()
        return self

    def _print(self, report: Report) -> None:
        if report._native.role != "main":  # without parsing the summary
            return  # a followed child's own profile: its parent reports it
        print(report.table(row_limit=self.row_limit),
              file=self.stream if self.stream is not None else sys.stdout, end="")

    def _before_stop(self) -> None:
        """Runs as the window is about to stop, while its program's objects are there to
        look at (paddle_prof.torch's memory kinds)."""

    def _finish_cycle(self, cycle: int) -> None:
        """Stops the window and hands the cycle's report on."""
        self._before_stop()
        self._recording = False
        path = self._window_path(cycle, ending=True)
        report = _stop(self.sorted_key, path, self.per_thread, cycle, self.per_process)
        self.reports.append(report)
        self.report = report
        if self.on_trace_ready is None:
            self._print(report)
        else:
            self.on_trace_ready(report)

    def step(self, num_samples: Optional[int] = None) -> None:
        """Ends a training step: mark_step(num_samples), and with a schedule, its next
        phase."""
        _check_samples(num_samples)
        if self.schedule is None:
            mark_step(num_samples)
            return
        ended = self._step
        if self._recording:
            mark_step(num_samples)
            if self.schedule.last_active(ended):
                self._finish_cycle(self.schedule.cycle(ended))
        self._step += 1
        now = self.schedule.action(self._step)
        if now in (_schedule.WARMUP, _schedule.ACTIVE) and not self._recording:
            self._start()
        elif now == _schedule.ACTIVE and self.schedule.action(ended) == _schedule.WARMUP:
            reset_profiler()  # the warm-up is recorded, then dropped

    def __exit__(self, exc_type: Optional[type], *exc_info: object) -> bool:
        # The report is kept before anything can fail (the stream, a Ctrl-C), and nothing
        # raised here hides an exception of the block's own.
        deferred = _DeferredInterrupt()
        try:
            if self.schedule is not None:
                self._exit_schedule()
                return False
            if not _core.is_enabled():
                # The report of this window, if stop_profiler() took it; None otherwise.
                stopped_here = _stops == self._stops_at_enter + 1
                self.report = _last_report if stopped_here else None
                warnings.warn("paddle_prof.profiler: the profiler was stopped inside the "
                              "block; prof.report is the report stop_profiler() returned, "
                              "if it was that call", RuntimeWarning, stacklevel=2)
                return False
            self._before_stop()
            self._recording = False
            self.report = _stop(self.sorted_key, self.profile_path, self.per_thread,
                                per_process=self.per_process)
            self._print(self.report)
        except Exception as e:
            if exc_type is None:
                raise
            warnings.warn(f"paddle_prof.profiler: could not finish the report ({e!r}); the "
                          "block's own exception follows", RuntimeWarning, stacklevel=2)
        finally:
            deferred.restore()
        return False

    def _exit_schedule(self) -> None:
        """A block that ends inside an active phase reports the steps done; one that ends
        in a warm-up drops it."""
        if not self._recording or not _core.is_enabled():
            self._recording = False
            return
        if self.schedule.action(self._step) == _schedule.ACTIVE:
            self._finish_cycle(self.schedule.cycle(self._step))
        else:
            self._before_stop()
            self._recording = False
            _stop(self.sorted_key, None, self.per_thread)
