"""Child processes of a window that follows them (``follow_children=True``).

A forked child profiles itself from the fork on (the C++ fork handler makes the window
its own). Children of ``multiprocessing`` end in ``os._exit``, which skips atexit and the
C++ exit handlers, so a followed child finishes its profile first. A child started as a
fresh program (multiprocessing's spawn and forkserver, DataLoader with
``multiprocessing_context='spawn'``) learns about the window from its pickled process
object: unpickled before its target runs, it starts the child's profile there. Nothing
here may raise into the child or hold its exit up.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import os
import sys
from typing import Any, Callable, Dict, Optional, Tuple

from paddle_prof import _core

_os_exit = os._exit  # the real one, which the followed child's wrapper ends in

# Set by a framework's window while it is open (paddle_prof.torch's): what a spawned
# child calls before its target runs, to profile the framework's ops as its parent does,
# as (function, argument); the function is called with the argument and the window's
# state, and is a module's own, so that it pickles by name and the child imports its
# module. None: no such window is open.
framework_child_start: Optional[Tuple[Callable[[Any, str], None], Any]] = None

# Under `python3 -m paddle_prof run --native`: the preload library, which a spawned child
# needs in its environment to track its native memory too (the library takes itself out
# of LD_PRELOAD as it loads, so that programs the profiled one runs stay plain).
native_library: Optional[str] = None


def _say(problem: BaseException) -> None:
    try:
        print(f"paddle_prof: this child's profile is lost: {problem!r}", file=sys.stderr)
    except Exception:  # stderr may be closed: the child goes on regardless
        pass


def finish() -> None:
    """Stops this child's profile and writes its files (a DataLoader worker's with role
    'worker' and its id). Does nothing when no child profile runs; never raises."""
    try:
        if not _core.child_profile_running():
            return
        data = sys.modules.get("torch.utils.data")
        info = data.get_worker_info() if data is not None else None
        if info is not None:
            _core.set_child_role("worker", int(info.id))
        _core.finish_child_profile()
    except Exception as e:
        _say(e)


def _exit_after_finishing(status: int) -> None:
    try:
        finish()
    finally:  # a KeyboardInterrupt in the middle must not let the child run on
        _os_exit(status)


def _follow() -> None:
    """In a followed child: its profile is finished whichever way it ends, SIGTERM
    included (multiprocessing's Pool.terminate())."""
    os._exit = _exit_after_finishing  # multiprocessing looks it up as it calls it
    atexit.unregister(finish)  # once, though a parent that was a child registered it too
    atexit.register(finish)
    _core.finish_child_profile_on_termination()


def _after_fork_in_child() -> None:
    try:
        if _core.child_profile_running():
            _follow()
            # Under run --native: the preload stopped tracking as the child began; its
            # profile is its own, so it tracks as its parent did.
            _core.resume_native_tracking()
    except Exception as e:
        _say(e)


def start_in_child(setup: Dict[str, Any]) -> None:
    """Unpickled in a spawned or forkserver child, before its target runs: the child's
    profile, as its parent's window asked. Warns on stderr, never raises."""
    try:
        if setup["framework"] is not None:
            start, argument = setup["framework"]
            start(argument, setup["state"])
        if _core.start_child_profile(setup["state"], setup["children_dir"], setup["parent_pid"],
                                     setup["parent_start_unix_ns"]):
            _follow()
    except Exception as e:
        _say(e)


class _ChildStart:
    """Set on a process object while it is pickled for a spawned child: unpickling it
    there calls start_in_child()."""

    def __init__(self, setup: Dict[str, Any]) -> None:
        self.setup = setup

    def __reduce__(self) -> Any:
        return (start_in_child, (self.setup,))


def _setup_for_child() -> Optional[Dict[str, Any]]:
    window = _core.followed_window()
    if window is None:
        return None
    state, children_dir, parent_pid, parent_start_unix_ns = window
    return {"state": state, "children_dir": children_dir, "parent_pid": parent_pid,
            "parent_start_unix_ns": parent_start_unix_ns,
            "framework": framework_child_start}


class _Preloaded:
    """LD_PRELOAD with the native library while a spawned child starts (`run --native`)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and native_library is not None
        self.before: Optional[str] = None

    def __enter__(self) -> None:
        if self.enabled:
            # The resource tracker, started on first use by the launch, stays plain.
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
            self.before = os.environ.get("LD_PRELOAD")
            os.environ["LD_PRELOAD"] = ":".join(filter(None, [native_library, self.before]))

    def __exit__(self, *exc_info: object) -> None:
        if not self.enabled:
            return
        if self.before is None:
            os.environ.pop("LD_PRELOAD", None)
        else:
            os.environ["LD_PRELOAD"] = self.before


def _following(launch: Callable[..., Any], native: bool) -> Callable[..., Any]:
    """multiprocessing's Popen._launch, which pickles the process object for the child,
    with the window's setup on it while a window that follows children is open."""

    @functools.wraps(launch)
    def launch_followed(self: Any, process_obj: Any) -> Any:
        setup = _setup_for_child()
        if setup is None:
            return launch(self, process_obj)
        process_obj._paddle_prof_child = _ChildStart(setup)
        try:
            with _Preloaded(native):
                return launch(self, process_obj)
        finally:
            process_obj.__dict__.pop("_paddle_prof_child", None)
            if getattr(self, "pid", None):  # named at the stop even before it runs
                _core.note_child_launched(int(self.pid))

    launch_followed._paddle_prof_following = True  # type: ignore[attr-defined]
    return launch_followed


def _install() -> None:
    os.register_at_fork(after_in_child=_after_fork_in_child)
    # The forkserver's children are forked from it, so they cannot inherit native tracking.
    for name, native in (("popen_spawn_posix", True), ("popen_forkserver", False)):
        try:
            popen = importlib.import_module("multiprocessing." + name).Popen
        except ImportError:  # a platform without it
            continue
        if not getattr(popen._launch, "_paddle_prof_following", False):
            popen._launch = _following(popen._launch, native)


_install()
