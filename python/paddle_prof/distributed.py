"""Ranks of torch.distributed: who this process is in the job, and how far its clock is
from rank 0's, measured as each window opens so that merged profiles line up.

The offset is measured as NTP does: a few timestamp exchanges with rank 0 over the
process group's store, keeping the one with the smallest round trip. Rank 0 answers the
ranks that are there as its window opens itself (blocked in the store, so it answers at
once); those that are not there within FOREGROUND are answered from daemon threads, one
per rank, so a job that profiles rank 0 alone waits that long at most. A rank whose
rank 0 does not answer within TIMEOUT goes on unmeasured, with a warning in its report.
"""

from __future__ import annotations

import sys
import threading
import time
from datetime import timedelta
from typing import Any, Optional, Tuple

ROUNDS = 8  # exchanges per rank; the one with the smallest round trip is kept
TIMEOUT = timedelta(seconds=5)  # for rank 0's answer, or a rank's ping
FOREGROUND = timedelta(seconds=0.2)  # rank 0 waits this long for a rank to start pinging

_windows = 0  # distributed windows this process opened: their exchanges' keys


def initialised() -> Any:
    """torch.distributed when the program initialised it, else None (never imports torch)."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist
    except Exception:  # a half-imported or unusual build: not distributed, for us
        pass
    return None


def _key(window: int, rank: int, what: str, round_: int) -> str:
    return f"paddle_prof/clock/{window}/{rank}/{what}{round_}"


def _answer(store: Any, window: int, rank: int, first_ping: timedelta) -> bool:
    """Rank 0: answers `rank`'s pings with this process's time; False when its first ping
    did not come within `first_ping`."""
    for round_ in range(ROUNDS):
        try:
            store.wait([_key(window, rank, "ping", round_)], first_ping if round_ == 0 else TIMEOUT)
            store.set(_key(window, rank, "pong", round_), str(time.time_ns()))
        except Exception:  # that rank does not profile this window (yet), or the job ends
            return round_ > 0
    return True


def _answer_all(store: Any, window: int, world_size: int) -> None:
    """Rank 0: answers the ranks as they come; the late ones from daemon threads."""
    for rank in range(1, world_size):
        if _answer(store, window, rank, FOREGROUND):
            continue
        for late in range(rank, world_size):
            threading.Thread(target=_answer, args=(store, window, late, TIMEOUT),
                             name="paddle_prof clock", daemon=True).start()
        return


def _ask(store: Any, window: int, rank: int) -> Tuple[Optional[int], str]:
    """Any other rank: its offset to rank 0 (ns to add to its own time), or why none."""
    best_rtt, offset = None, None
    for round_ in range(ROUNDS):
        pong = _key(window, rank, "pong", round_)
        try:
            sent = time.time_ns()
            store.set(_key(window, rank, "ping", round_), "")
            store.wait([pong], TIMEOUT)
            then = int(store.get(pong))
            back = time.time_ns()
        except Exception as e:
            return None, (f"the clock offset to rank 0 was not measured: rank 0 did not answer "
                          f"within {TIMEOUT.total_seconds():g} s (does it profile this "
                          f"window?): {e}")
        if best_rtt is None or back - sent < best_rtt:
            best_rtt, offset = back - sent, then - (sent + back) // 2
        for done in (pong, _key(window, rank, "ping", round_)):
            try:
                store.delete_key(done)
            except Exception:  # stores without deletion keep a few bytes
                pass
    return offset, ""


def window_opening() -> Optional[Tuple[int, int, str, Optional[int], str]]:
    """Under torch.distributed: (rank, world_size, backend, offset_ns or None, warning),
    measured now; None when the program runs without it."""
    global _windows
    dist = initialised()
    if dist is None:
        return None
    rank, world_size = dist.get_rank(), dist.get_world_size()
    backend = str(dist.get_backend())
    window, _windows = _windows, _windows + 1
    if world_size < 2:
        return rank, world_size, backend, 0, ""
    try:
        store = dist.distributed_c10d._get_default_store()
    except Exception as e:
        return rank, world_size, backend, None, f"the clock offset to rank 0 was not measured: {e}"
    if rank == 0:
        _answer_all(store, window, world_size)
        return rank, world_size, backend, 0, ""
    offset, warning = _ask(store, window, rank)
    return rank, world_size, backend, offset, warning
