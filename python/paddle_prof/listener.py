"""``paddle_prof.listen()``: a process that can be asked from outside to profile itself.

A daemon thread waits in ``accept()`` on a Unix socket (listen_protocol.py) and does
nothing else until a request comes: listening adds no work per op or step beyond the
step count (step_boundaries.py). Each connection gets a thread of its own:

- ``status``: pid, host, rank, job, command line, steps so far, the window open.
- ``trigger``: a window opens at the next step boundary, in the program's own thread,
  records that many steps and writes its files (trace, summary, and a capture while it
  records, left behind if the process dies); the reply comes as it is written. With
  ``job``, the request goes to every rank of the job first (job_requests.py).
- ``top``: a flight-recorder window (the last few steps) opens at once and stays open
  while the connection does; each ``view`` gets what ``top`` draws.

A window the program opens of its own ends the one asked for (a trigger's is written
with the steps it has); while the program's is open, a trigger is answered busy.
"""

from __future__ import annotations

import atexit
import io
import os
import socket
import statistics
import sys
import threading
from typing import Any, Callable, Dict, Optional

from paddle_prof import _core
from paddle_prof import job_requests
from paddle_prof import listen_protocol as protocol
from paddle_prof import step_boundaries
from paddle_prof.report import Report

FLIGHT_RECORDER_STEPS = 5  # what top's window keeps
TOP_OPS = 10
_FIRST_REQUEST_S = 10  # a peer that connects and says nothing is let go after this


def _rank() -> Any:
    """(rank, world size): torch.distributed's or paddle.distributed's once initialised,
    else the environment's as a window reads it (RANK and WORLD_SIZE, or Paddle's
    launcher's), else (None, None)."""
    dist = job_requests.initialised()
    if dist is not None:
        return dist.get_rank(), dist.get_world_size()
    return _core.environment_rank()


def _job_from_environment() -> Optional[str]:
    for name in ("TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "PADDLE_JOB_ID"):
        if os.environ.get(name):
            return os.environ[name]
    return None


def _window_profiler(request: Dict[str, Any], **options: Any) -> Any:
    """The profiler of the framework the program uses (torch's, Paddle's, or the plain
    one), with the request's options."""
    from paddle_prof.profiler import profiler

    native = request.get("native", False)
    frameworks = [name for name in ("torch", "paddle") if name in sys.modules]
    for name in frameworks:
        try:
            if name == "torch":
                from paddle_prof import torch as bridge
            else:
                from paddle_prof import paddle as bridge
        except ImportError:  # built without it: the plain window still records
            continue
        state = "CPU"
        if name == "torch":
            if sys.modules["torch"].cuda.is_initialized():
                state = "All"
            options["record_shapes"] = request.get("record_shapes", False)
        # (Paddle's ops carry no shapes: a request for them records the rest.)
        return bridge.profiler(state, modules=request.get("modules", False), native=native,
                               **options)
    return profiler("CPU", native=native, **options)


class _Window:
    """A window asked for from outside: waits for a step boundary, then records."""

    def __init__(self, kind: str, steps: int = 0) -> None:
        self.kind = kind            # 'trigger' or 'top'
        self.steps = steps          # a trigger's: how many to record
        self.request: Dict[str, Any] = {}  # a trigger's: what was asked
        self.state = "pending"      # pending, open, done
        self.counted = 0
        self.by_optimizer = False   # steps are optimizer steps (the program marks none)
        self.profiler: Any = None
        self.result: Dict[str, Any] = {}
        self.finished = threading.Event()
        self.path = self.capture = ""


class _Listener:
    def __init__(self, job: Optional[str]) -> None:
        self.job = job
        self.pid = os.getpid()
        self.host = socket.gethostname()
        self.lock = threading.RLock()
        self.window: Optional[_Window] = None
        self.opening = False  # a window asked for is being opened, by this thread
        directory, why = protocol.own_socket_dir(create=True)
        if directory is None:
            raise RuntimeError(f"paddle_prof.listen: {why}")
        self.path = os.path.join(directory, protocol.socket_name(self.host, self.pid))
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if os.path.exists(self.path):
                os.unlink(self.path)  # a process of this pid and host that died listening
            self.socket.bind(self.path)
            os.chmod(self.path, 0o600)
            self.socket.listen(16)
        except OSError as e:
            self.socket.close()
            raise RuntimeError(f"paddle_prof.listen: cannot listen on {self.path}: "
                               f"{e.strerror}") from None
        self.thread = threading.Thread(target=self._accept, name="paddle_prof listener",
                                       daemon=True)
        self.thread.start()

    # --- the connections -------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:  # closed: the process ends, or a forked child forgets it
                return
            threading.Thread(target=self._serve, args=(connection,),
                             name="paddle_prof request", daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                self._answer(connection)
            except (OSError, protocol.RequestError) as e:
                _send(connection, {"ok": False, "error": str(e)})
            except Exception as e:  # never the program's problem: said to the peer
                _send(connection, {"ok": False, "error": f"the request failed: {e!r}"})

    def _answer(self, connection: socket.socket) -> None:
        uid = protocol.peer_uid(connection)
        if uid != os.getuid():
            _send(connection, {"ok": False, "error": f"refused: uid {uid} is not this "
                                                     f"process's user (uid {os.getuid()})"})
            return
        connection.settimeout(_FIRST_REQUEST_S)
        reader = protocol.LineReader(connection)
        line = reader.line()
        if line is None:
            return
        request = protocol.parse_request(line)
        kind = request["request"]
        if kind == "status":
            _send(connection, self.status())
        elif kind == "trigger":
            self._trigger(connection, request)
        elif kind == "top":
            connection.settimeout(None)  # top asks for a view each second, for as long as it runs
            self._top(connection, reader)
        else:
            _send(connection, {"ok": False, "error": "'view' comes after 'top'"})

    def status(self) -> Dict[str, Any]:
        rank, world_size = _rank()
        return {"ok": True, "pid": self.pid, "host": self.host, "rank": rank,
                "world_size": world_size, "job": self.job or _job_from_environment(),
                "argv": list(sys.argv), "steps": step_boundaries.steps(),
                "window": self._window_kind()}

    def _window_kind(self) -> str:
        window = self.window
        if window is not None:
            return f"{window.kind} ({window.state})"
        if _core.implicit_profiler_running():
            return "run's"
        return "program's" if _core.is_enabled() else "none"

    # --- trigger ---------------------------------------------------------------------

    def _trigger(self, connection: socket.socket, request: Dict[str, Any]) -> None:
        if request["job"]:
            self._trigger_job(connection, request)
            return
        _send(connection, self._run(request, accepted=lambda window: _send(
            connection, {"ok": True, "accepted": True, "pid": self.pid, "host": self.host,
                         "path": window.path, "capture": window.capture})))

    def _result_of(self, window: _Window, wait: float) -> Dict[str, Any]:
        """What the window asked for came to, waiting `wait` seconds at most."""
        if not window.finished.wait(wait):
            with self.lock:
                if window.state == "pending":  # no step came: nothing opens for no one
                    self._end(window, {"ok": False, "error": f"no step boundary came within "
                                                            f"{wait:g} s"})
        if window.finished.wait(0):
            return dict(window.result, capture=window.capture)
        return {"ok": False, "error": f"still recording after {wait:g} s",
                "capture": window.capture}

    def _run(self, request: Dict[str, Any],
             accepted: Optional[Callable[[_Window], Any]] = None) -> Dict[str, Any]:
        """What a trigger's window came to, or why there is none (busy); `accepted` is
        told of the window as it is made, before its steps come."""
        window = self.ask(request)
        if isinstance(window, str):
            return {"ok": False, "busy": True, "error": window}
        if accepted is not None:
            accepted(window)
        return self._result_of(window, request["wait"])

    def _trigger_job(self, connection: socket.socket, request: Dict[str, Any]) -> None:
        try:
            store = job_requests.job_store()
        except Exception as e:
            store, why = None, f": {e}"
        else:
            why = ""
        if store is None:
            _send(connection, {"ok": False, "error": f"not a rank of a distributed job "
                                                     f"reachable through its store{why}"})
            return
        _, world_size = _rank()
        _send(connection, {"ok": True, "accepted": True, "job": True,
                           "world_size": world_size})
        _send(connection, {"ok": True, "done": True,
                           "results": job_requests.ask_job(store, world_size, request)})

    def join_job(self, optimizer: bool) -> None:
        """At a step boundary, until the job's distributed module (torch's or Paddle's) is
        initialised: then a watcher thread waits in the job's store for requests to every
        rank."""
        dist = job_requests.initialised()
        if dist is None:
            return
        step_boundaries.waiting.remove(self.join_job)
        if dist.get_world_size() > 1:
            threading.Thread(target=self._watch_job, args=(dist.get_rank(),),
                             name="paddle_prof job requests", daemon=True).start()

    def _watch_job(self, rank: int) -> None:
        try:
            store = job_requests.job_store()
        except Exception:  # a store other than TCPStore: the job's ranks are reached one by one
            return
        if store is not None:
            job_requests.watch(store, rank, self._run)

    def ask(self, request: Dict[str, Any]) -> Any:
        """A trigger's window, waiting for the next step boundary; or why there is none
        (busy)."""
        rank, _ = _rank()
        name = f"rank{rank}" if rank is not None else f"{self.host}-{self.pid}"
        with self.lock:
            busy = self._busy()
            if busy:
                return busy
            try:
                os.makedirs(request["out"], exist_ok=True)
            except OSError as e:
                return f"cannot make {request['out']}: {e.strerror}"
            window = _Window("trigger", request["steps"])
            window.request = request
            window.path = os.path.join(request["out"], name)
            window.capture = window.path + ".capture"
            self.window = window
            step_boundaries.waiting.append(self._boundary)
        return window

    def _busy(self) -> str:
        if self.window is not None:
            return f"busy: a window asked for by {self.window.kind} is {self.window.state}"
        if _core.is_enabled():
            return f"busy: a window is open ({self._window_kind()})"
        return ""

    def _boundary(self, optimizer: bool) -> None:
        """At a step boundary, in the program's thread."""
        with self.lock:
            window = self.window
            if window is None or (optimizer and step_boundaries.marks):
                return  # a program that marks its steps: an optimizer step is not one
            if window.state == "pending" and window.kind == "trigger":
                if _core.is_enabled():
                    self._end(window, {"ok": False, "busy": True,
                                       "error": "busy: the program opened a window of its own"})
                    return
                window.by_optimizer = optimizer
                self._open(window)
            elif window.state == "open" and optimizer == window.by_optimizer:
                if optimizer:
                    _core.mark_step()
                window.counted += 1
                if window.kind == "trigger" and window.counted >= window.steps:
                    self._close(window)

    def _open(self, window: _Window) -> None:
        request = window.request
        try:
            window.profiler = _window_profiler(
                request, sorted_key="total", profile_path=window.path, stream=io.StringIO(),
                capture_dir=window.capture)
            self._enter(window.profiler)
        except Exception as e:
            self._end(window, {"ok": False, "error": f"the window did not open: {e!r}"})
            return
        window.state = "open"

    def _enter(self, profiler: Any) -> None:
        self.opening = True  # not the program's own window
        try:
            profiler.__enter__()
        finally:
            self.opening = False

    def _close(self, window: _Window, why: str = "") -> None:
        """Stops the window and writes its files; `why` it stopped early, if it did."""
        try:
            window.profiler.__exit__(None, None, None)
            report = window.profiler.report
        except Exception as e:
            self._end(window, {"ok": False, "error": f"the window did not stop: {e!r}"})
            return
        if window.capture:
            try:
                os.rmdir(window.capture)  # emptied as the window stopped
            except OSError:
                pass
        result = {"ok": True, "done": True, "pid": self.pid, "host": self.host,
                  "path": window.path, "steps": window.counted}
        if window.kind == "trigger":
            result["summary"] = report._native.summary_path or ""
            result["warnings"] = ([why] if why else []) + list(report.warnings)[:20]
        self._end(window, result)

    def _end(self, window: _Window, result: Dict[str, Any]) -> None:
        window.state = "done"
        window.result = result
        if self.window is window:
            self.window = None
        if self._boundary in step_boundaries.waiting:
            step_boundaries.waiting.remove(self._boundary)
        window.finished.set()

    def program_opens_window(self) -> None:
        """The program opens a window of its own: the one asked for ends first (a
        trigger's written with the steps it has)."""
        with self.lock:
            window = self.window
            if window is None or self.opening:
                return
            if window.state == "open":
                self._close(window, f"the program opened a window of its own after "
                                    f"{window.counted} of {window.steps} steps")
            else:
                self._end(window, {"ok": False, "busy": True,
                                   "error": "busy: the program opened a window of its own"})

    # --- top -------------------------------------------------------------------------

    def _top(self, connection: socket.socket, reader: protocol.LineReader) -> None:
        window = None
        with self.lock:
            if self.window is None and not _core.is_enabled():
                window = _Window("top")
                window.by_optimizer = step_boundaries.marks == 0  # its steps, if it marks none
                window.profiler = _window_profiler(
                    {"modules": True}, keep_last_steps=FLIGHT_RECORDER_STEPS,
                    stream=io.StringIO())
                self._enter(window.profiler)
                window.state = "open"
                self.window = window
                step_boundaries.waiting.append(self._boundary)
        _send(connection, {"ok": True, "pid": self.pid, "host": self.host,
                           "window": "flight recorder" if window else self._window_kind()})
        try:
            while True:
                try:
                    line = reader.line()
                except (OSError, protocol.RequestError):
                    return
                if line is None:
                    return
                request = protocol.parse_request(line)
                if request["request"] != "view":
                    _send(connection, {"ok": False, "error": "after 'top', only 'view'"})
                    return
                if not _send(connection, self.view()):
                    return
        finally:
            if window is not None:
                with self.lock:
                    if window.state == "open":
                        self._close(window)

    def view(self) -> Dict[str, Any]:
        """What top draws, from a snapshot of the window open now."""
        if not _core.is_enabled():
            return {"ok": True, "open": False, "steps_so_far": step_boundaries.steps()}
        summary = Report(_core.snapshot_profiler("total", "", False)).to_dict()
        return dict(view_of(summary), ok=True, open=True, window=self._window_kind(),
                    steps_so_far=step_boundaries.steps())

    # --- the end ---------------------------------------------------------------------

    def close(self, unlink: bool = True) -> None:
        try:
            self.socket.close()
        finally:
            if unlink and os.getpid() == self.pid:
                try:
                    os.unlink(self.path)
                except OSError:
                    pass


def view_of(summary: Dict[str, Any]) -> Dict[str, Any]:
    """top's figures from a summary: step times, throughput, each place's live and peak
    bytes with their kinds, and the ops of the window by self time and by peak memory."""
    walls = [s["wall_ms"] for s in summary.get("steps", []) if s.get("wall_ms") is not None]
    places = [{"place": p["place"], "live_bytes": p.get("end_bytes", 0),
               "peak_bytes": p.get("peak_bytes", 0),
               "kinds_live": {k: v for k, v in (p.get("categories_end") or {}).items() if v},
               "kinds_at_peak": {k: v for k, v in (p.get("categories_at_peak") or {}).items()
                                 if v}}
              for p in summary.get("places", [])]
    events = summary.get("events", [])

    def peak(event: Dict[str, Any]) -> int:
        return max((m.get("peak_bytes", 0) for m in (event.get("memory") or {}).values()),
                   default=0)

    by_time = sorted(events, key=lambda e: -e.get("self_ms", 0))[:TOP_OPS]
    by_memory = sorted((e for e in events if peak(e) > 0), key=peak, reverse=True)[:TOP_OPS]
    return {
        "steps": len(walls),
        "step_ms_last": walls[-1] if walls else None,
        "step_ms_median": statistics.median(walls) if walls else None,
        "samples_per_s": (summary.get("throughput") or {}).get("samples_per_s"),
        "places": places,
        "by_self_time": [{"name": e["name"], "calls": e["calls"], "self_ms": e["self_ms"]}
                         for e in by_time],
        "by_peak_memory": [{"name": e["name"], "calls": e["calls"], "peak_bytes": peak(e)}
                           for e in by_memory],
    }


def _send(connection: socket.socket, message: Dict[str, Any]) -> bool:
    try:
        connection.sendall(protocol.encode(message))
        return True
    except OSError:  # the peer left: nothing the program needs to know
        return False


_listener: Optional[_Listener] = None


def _forget_in_child() -> None:
    """A forked child does not answer for its parent: its copy of the socket closes,
    leaving the parent's file where it is."""
    global _listener
    if _listener is not None:
        _listener.close(unlink=False)
        _listener = None


def _at_exit() -> None:
    if _listener is not None:
        _listener.close()


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(_at_exit)


def listen(job: Optional[str] = None) -> str:
    """Has this process answer profiling requests from ``python3 -m paddle_prof ps``,
    ``trigger`` and ``top`` (run by the same user on this host, or, with ``trigger
    --job``, on any host of the job); returns the socket's path.

    ``job`` names the job for ``trigger --job`` (default: TORCHELASTIC_RUN_ID,
    SLURM_JOB_ID or PADDLE_JOB_ID). Listening costs nothing while no request comes: a
    thread waits on the socket, and steps are counted. A second call keeps the socket
    (and sets the job if given). RuntimeError when the socket directory is not this
    user's alone or cannot be made.

    Example::

        import paddle_prof
        paddle_prof.listen()
        train()   # python3 -m paddle_prof trigger --pid <pid> --steps 5
    """
    global _listener
    if job is not None and not isinstance(job, str):
        raise TypeError(f"job must be a str or None; got {job!r}")
    if _listener is None:
        _listener = _Listener(job)
        step_boundaries.watch_optimizers()
        step_boundaries.waiting.append(_listener.join_job)
    elif job is not None:
        _listener.job = job
    return _listener.path


def program_opens_window() -> None:
    if _listener is not None:
        _listener.program_opens_window()
