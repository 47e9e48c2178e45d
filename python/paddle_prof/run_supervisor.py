"""``python3 -m paddle_prof run`` never ends without a report: the program runs in a child
process that captures its window (capture_dir), and this process waits for it. When the
program ends without stopping its profiler (``os._exit``, a fatal signal, SIGKILL, the OOM
killer), the window is recovered from the capture, its report printed (and written to the
profile path) with how the program ended; then this process ends as the program did.

Signals sent to this process's pid (SIGTERM, SIGHUP, SIGUSR1, ...) are passed on to the
program; Ctrl-C reaches the program from the terminal, so SIGINT is ignored here. When
this process dies, the kernel kills the program (PR_SET_PDEATHSIG), whose capture is then
left for ``recover``.
"""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable, List, Optional

# Set in the program's environment: the capture directory this process recovers.
CAPTURE_ENV = "PADDLE_PROF_RUN_CAPTURE"

_PASSED_ON = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCONT", "SIGWINCH")
_PR_SET_PDEATHSIG = 1


def _dies_with(parent: int) -> Callable[[], None]:
    """The child's first step after fork: the kernel kills it when `parent` dies."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork

    def set_up() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)
    return set_up


def _has_capture(directory: str) -> bool:
    try:
        return any(name.startswith("pp_capture.") for name in os.listdir(directory))
    except OSError:
        return False


def how_it_ended(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the program was killed by {name} before its profiler stopped"
    return (f"the program exited with status {returncode} before its profiler stopped "
            f"(os._exit, or an exit from native code)")


def end_as(returncode: int) -> int:
    """This process's exit status for the program's `returncode`: a signal that ended the
    program ends this process too (with no core dump of its own)."""
    if returncode >= 0:
        return returncode
    signum = -returncode
    sys.stdout.flush()
    sys.stderr.flush()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        signal.signal(signum, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL, SIGSTOP: default already
        pass
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)
    return 128 + signum  # a signal whose default is not to end the process


def supervise(command: List[str], env: dict, capture_dir: Optional[str],
              recover: Callable[[str, str, int], None],
              extra_signal: Optional[int] = None) -> int:
    """Runs `command` with a capture in `capture_dir` (a temporary directory when None) and
    returns the exit status to end with; `recover(directory, how, ended_unix_ns)` reports a
    window the program left in its capture."""
    own = capture_dir is None
    directory = tempfile.mkdtemp(prefix="paddle_prof-run.") if own else capture_dir
    env = dict(env)
    env[CAPTURE_ENV] = os.path.abspath(directory)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        child = subprocess.Popen(command, env=env, preexec_fn=_dies_with(os.getpid()))
        passed_on = {getattr(signal, name) for name in _PASSED_ON}
        if extra_signal is not None:
            passed_on.add(extra_signal)
        for signum in passed_on:
            signal.signal(signum, lambda s, _frame: child.send_signal(s))
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        returncode = child.wait()
        ended_unix_ns = time.time_ns()
        for signum in passed_on:
            signal.signal(signum, signal.SIG_DFL)
        if _has_capture(directory):
            recover(directory, how_it_ended(returncode), ended_unix_ns)
    finally:
        if own:
            shutil.rmtree(directory, ignore_errors=True)
    return end_as(returncode)
