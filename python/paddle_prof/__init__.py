"""paddle_prof: an operator profiler with exact per-operator memory.

Example::

    import paddle_prof

    with paddle_prof.profiler('CPU', 'total', profile_path='/tmp/profile.json') as prof:
        for it in range(10):
            if it == 2:
                paddle_prof.reset_profiler()   # leave the warm-up out
            with paddle_prof.record_event('train_step'):
                x = paddle_prof.empty((1000, 784), dtype='float32')
            paddle_prof.mark_step()
    print(prof.report.events[0].calls)
"""

from paddle_prof import children as _children  # noqa: F401 (follows child processes)
import os as _os

from paddle_prof.diff import Diff, diff
from paddle_prof.listener import listen
from paddle_prof.memory import empty
from paddle_prof.merge import load, merge
from paddle_prof.profiler import (
    SORTED_KEYS,
    STATES,
    mark_step,
    profiler,
    recover,
    reset_profiler,
    snapshot,
    start_profiler,
    stop_profiler,
)
from paddle_prof.record_event import record_event
from paddle_prof.schedule import save_to, schedule
from paddle_prof.report import Report

__all__ = [
    "Diff",
    "Report",
    "SORTED_KEYS",
    "STATES",
    "diff",
    "empty",
    "listen",
    "load",
    "mark_step",
    "merge",
    "profiler",
    "record_event",
    "recover",
    "reset_profiler",
    "save_to",
    "schedule",
    "snapshot",
    "start_profiler",
    "stop_profiler",
]

# A process started with PADDLE_PROF_LISTEN=1 can be profiled from outside (ps, trigger,
# top) with no change to its code.
if _os.environ.get("PADDLE_PROF_LISTEN", "0") not in ("", "0"):
    try:
        listen()
    except RuntimeError as _e:  # the program runs on, not listening
        import warnings as _warnings

        _warnings.warn(str(_e), RuntimeWarning)
