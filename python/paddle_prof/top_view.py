"""``python3 -m paddle_prof top PID``: a live view of a listening process, redrawn each
second with curses until q or Ctrl-C. The process keeps a flight-recorder window open
while the view's connection is (listener.py), and closes it as the connection ends,
however the view ends."""

from __future__ import annotations

import curses
import sys
from typing import Any, Dict, List, Optional

from paddle_prof import _core
from paddle_prof.on_demand import Peer, listeners

_REDRAW_S = 1


def _bytes(n: Optional[int]) -> str:
    return "-" if n is None else _core.format_bytes(n)


def _ms(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:,.2f} ms"


def _kinds(kinds: Dict[str, int]) -> str:
    return ", ".join(f"{k} {_bytes(v)}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))


def lines(status: Dict[str, Any], view: Dict[str, Any]) -> List[str]:
    """The view's text, a line each."""
    rank = status.get("rank")
    who = f"pid {status.get('pid')} on {status.get('host')}"
    if rank is not None:
        who += f", rank {rank} of {status.get('world_size')}"
    out = [f"paddle_prof top: {who}  (q to quit)"]
    if not view.get("open"):
        return out + [f"no window open; steps so far {view.get('steps_so_far')}"]
    median = view.get("step_ms_median")
    rate = f"{1000 / median:,.2f} steps/s" if median else "- steps/s"
    ips = view.get("samples_per_s")
    out.append(f"window: {view.get('window')}, {view.get('steps')} steps kept; "
               f"steps so far {view.get('steps_so_far')}")
    out.append(f"step time: last {_ms(view.get('step_ms_last'))}, median {_ms(median)}; "
               f"{rate}; ips {'-' if ips is None else f'{ips:,.1f}'} samples/s")
    out.append("")
    out.append(f"{'PLACE':<14}{'LIVE':>14}{'PEAK':>14}  KINDS (live; at the peak)")
    for p in view.get("places", []):
        kinds = _kinds(p.get("kinds_live", {}))
        at_peak = _kinds(p.get("kinds_at_peak", {}))
        if at_peak:
            kinds = f"{kinds or '-'}; {at_peak}"
        out.append(f"{p['place']:<14}{_bytes(p.get('live_bytes')):>14}"
                   f"{_bytes(p.get('peak_bytes')):>14}  {kinds}")
    out.append("")
    out.append(f"{'TOP OPS BY SELF TIME':<48}{'CALLS':>10}{'SELF':>16}")
    for e in view.get("by_self_time", []):
        out.append(f"{e['name'][:47]:<48}{e['calls']:>10,}{_ms(e['self_ms']):>16}")
    out.append("")
    out.append(f"{'TOP OPS BY PEAK MEMORY':<48}{'CALLS':>10}{'PEAK':>16}")
    for e in view.get("by_peak_memory", []):
        out.append(f"{e['name'][:47]:<48}{e['calls']:>10,}{_bytes(e['peak_bytes']):>16}")
    return out


def _draw(screen: Any, text: List[str]) -> None:
    screen.erase()
    height, width = screen.getmaxyx()
    for row, line in enumerate(text[:height]):
        try:
            screen.addnstr(row, 0, line, width - 1)
        except curses.error:  # the terminal shrank while drawing
            pass
    screen.refresh()


def _watch(screen: Any, peer: Peer, status: Dict[str, Any]) -> str:
    """Redraws until q; what to print once the terminal is back ('' for nothing)."""
    try:
        curses.curs_set(0)
    except curses.error:  # a terminal without a cursor to hide
        pass
    screen.timeout(_REDRAW_S * 1000)
    while True:
        try:
            view = peer.ask({"request": "view"})
        except (OSError, ValueError):
            return f"paddle_prof top: pid {status.get('pid')} ended"
        if not view.get("ok"):
            return f"paddle_prof top: {view.get('error')}"
        _draw(screen, lines(status, view))
        if screen.getch() in (ord("q"), ord("Q")):
            return ""


def top(pid: int) -> int:
    found, problems = listeners()
    chosen = [s for s in found if s.get("pid") == pid]
    if not chosen:
        for problem in problems:
            print(f"paddle_prof top: {problem}", file=sys.stderr)
        print(f"paddle_prof top: no process of this user listens as pid {pid} "
              f"(see 'python3 -m paddle_prof ps')", file=sys.stderr)
        return 2
    status = chosen[0]
    try:
        peer = Peer(status["path"], timeout=30)  # the window's opening may walk the heap
        answer = peer.ask({"request": "top"})
    except (OSError, ValueError) as e:
        print(f"paddle_prof top: pid {pid}: {e}", file=sys.stderr)
        return 1
    if not answer.get("ok"):
        print(f"paddle_prof top: pid {pid}: {answer.get('error')}", file=sys.stderr)
        return 1
    try:
        said = curses.wrapper(_watch, peer, status)
    except KeyboardInterrupt:
        said = ""
    finally:
        peer.close()  # the process closes the window it opened for this view
    if said:
        print(said, file=sys.stderr)
    return 0
