"""``python3 -m paddle_prof ps`` and ``trigger``: the listening processes of this user,
and windows asked of them (listener.py), their profiles merged as ``merge`` merges."""

from __future__ import annotations

import os
import selectors
import socket
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

from paddle_prof import listen_protocol as protocol
from paddle_prof.merge import SUMMARY_SUFFIX, merge
from paddle_prof.trace_merge import write_merged

_ASK_S = 5  # for a listener's first reply


class Peer:
    """A connection to one listener."""

    def __init__(self, path: str, timeout: float = _ASK_S) -> None:
        self.path = path
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.settimeout(timeout)
        try:
            self.socket.connect(path)
        except OSError:
            self.socket.close()
            raise
        self.reader = protocol.LineReader(self.socket, limit=64 << 20)

    def ask(self, message: Dict[str, Any]) -> Dict[str, Any]:
        self.socket.sendall(protocol.encode(message))
        return self.next()

    def next(self) -> Dict[str, Any]:
        return protocol.reply(self.reader.line())

    def close(self) -> None:
        self.socket.close()


def listeners() -> Tuple[List[Dict[str, Any]], List[str]]:
    """Each listening process's status (with its socket's `path`), and what could not be
    read. A socket whose process is gone is removed."""
    directory = protocol.socket_dir()
    if not os.path.exists(directory):
        return [], []
    checked, why = protocol.own_socket_dir(create=False)
    if checked is None:
        return [], [why]
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".sock"))
    except OSError as e:
        return [], [f"cannot list {directory}: {e.strerror}"]
    found, problems = [], []
    for name in names:
        path = os.path.join(directory, name)
        try:
            peer = Peer(path)
        except (ConnectionRefusedError, FileNotFoundError):
            try:
                os.unlink(path)  # its process ended without removing it (SIGKILL)
            except OSError:
                pass
            continue
        except OSError as e:
            problems.append(f"{path}: {e.strerror or e}")
            continue
        try:
            status = peer.ask({"request": "status"})
        except (OSError, ValueError) as e:
            problems.append(f"{path}: {e}")
            continue
        finally:
            peer.close()
        if not status.get("ok"):
            problems.append(f"{path}: {status.get('error')}")
            continue
        status["path"] = path
        found.append(status)
    return found, problems


def _label(status: Dict[str, Any]) -> str:
    rank = status.get("rank")
    who = f"pid {status.get('pid')} on {status.get('host')}"
    return who if rank is None else f"rank {rank} ({who})"


def ps() -> int:
    found, problems = listeners()
    for problem in problems:
        print(f"paddle_prof ps: {problem}", file=sys.stderr)
    rows = [("PID", "HOST", "RANK", "JOB", "STEPS", "WINDOW", "COMMAND")]
    for s in found:
        rank = "-" if s.get("rank") is None else f"{s['rank']}/{s.get('world_size')}"
        rows.append((str(s.get("pid")), str(s.get("host")), rank, str(s.get("job") or "-"),
                     str(s.get("steps")), str(s.get("window")), " ".join(s.get("argv") or [])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])
    return 0


def _choose(found: List[Dict[str, Any]], pids: Optional[List[int]], job: Optional[str]
            ) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The listeners asked for, and the ones asked for that are not listening."""
    if pids:
        chosen = [s for s in found if s.get("pid") in pids]
        missing = [f"pid {p}" for p in pids if p not in {s.get("pid") for s in chosen}]
        return chosen, missing
    if job is not None:
        chosen = [s for s in found if s.get("job") == job]
        return chosen, ([] if chosen else [f"job {job}"])
    return found, []


def default_out() -> str:
    return os.path.abspath(time.strftime("paddle_prof-trigger-%Y%m%d-%H%M%S"))


def trigger(pids: Optional[List[int]], job: Optional[str], steps: int, out: Optional[str],
            wait: float, record_shapes: bool = False, modules: bool = False,
            native: bool = False) -> int:
    """Asks the chosen listeners for a window of `steps` steps and merges their profiles;
    0 when every one was written, 1 when one was not (named), 2 for no listener."""
    found, problems = listeners()
    for problem in problems:
        print(f"paddle_prof trigger: {problem}", file=sys.stderr)
    chosen, missing = _choose(found, pids, job)
    for who in missing:
        print(f"paddle_prof trigger: no process of this user listens as {who} "
              f"(see 'python3 -m paddle_prof ps')", file=sys.stderr)
    if not chosen:
        if not missing:
            print("paddle_prof trigger: no process of this user listens on this host",
                  file=sys.stderr)
        return 2
    out = os.path.abspath(out or default_out())
    request = {"request": "trigger", "steps": steps, "out": out, "wait": wait,
               "record_shapes": record_shapes, "modules": modules, "native": native,
               "job": job is not None}
    if job is not None:  # one rank passes it on to all, on every host: rank 0 if it is here
        chosen = sorted(chosen, key=lambda s: (s.get("rank") is None, s.get("rank")))[:1]
    started = time.monotonic()
    waiting: Dict[socket.socket, Tuple[Peer, Dict[str, Any], Dict[str, Any]]] = {}
    failed = bool(missing)
    for status in chosen:
        try:
            peer = Peer(status["path"])
            answer = peer.ask(request)
        except (OSError, ValueError) as e:
            print(f"paddle_prof trigger: {_label(status)}: {e}", file=sys.stderr)
            failed = True
            continue
        if not answer.get("ok"):
            print(f"paddle_prof trigger: {_label(status)}: {answer.get('error')}",
                  file=sys.stderr)
            peer.close()
            failed = True
            continue
        waiting[peer.socket] = (peer, status, answer)
    written: List[str] = []
    with selectors.DefaultSelector() as selector:
        for sock in waiting:
            selector.register(sock, selectors.EVENT_READ)
        while waiting:
            left = wait - (time.monotonic() - started)
            ready = selector.select(timeout=max(left, 0)) if left > 0 else []
            if not ready:
                break
            for key, _ in ready:
                peer, status, accepted = waiting.pop(key.fileobj)
                selector.unregister(key.fileobj)
                peer.socket.settimeout(_ASK_S)
                try:
                    result = peer.next()
                except (OSError, ValueError):
                    result = {"ok": False, "error": (
                        f"ended before its window was written; what it recorded is in "
                        f"{accepted.get('capture')} (python3 -m paddle_prof recover "
                        f"{accepted.get('capture')})")}
                finally:
                    peer.close()
                for one, label in _results(result, status):
                    if one.get("ok") and one.get("summary"):
                        written.append(one["summary"])
                        continue
                    failed = True
                    error = one.get("error")
                    if not one.get("busy") and one.get("capture"):
                        error += f"; what it recorded is in {one['capture']}"
                    print(f"paddle_prof trigger: {label}: {error}", file=sys.stderr)
    for peer, status, _ in waiting.values():
        failed = True
        peer.close()
        print(f"paddle_prof trigger: {_label(status)} did not answer within {wait:g} s",
              file=sys.stderr)
    if not written:
        return 1
    merged_path = os.path.join(out, "merged")
    try:
        report = write_merged(merge(written), merged_path)
    except (OSError, ValueError, RuntimeError) as e:
        print(f"paddle_prof trigger: the profiles could not be merged: {e}", file=sys.stderr)
        return 1
    print(header(report.table()), end="")
    print(f"\n{len(written)} profile(s) in {out}: " +
          ", ".join(os.path.basename(p)[:-len(SUMMARY_SUFFIX)] for p in sorted(written)))
    print(f"merged: {merged_path} (trace), {merged_path}{SUMMARY_SUFFIX}, {merged_path}.html")
    return 1 if failed else 0


def _results(result: Dict[str, Any], status: Dict[str, Any]) -> List[Tuple[Dict[str, Any], str]]:
    """Each process's result with its label: the one asked, or each rank of its job."""
    if "results" not in result:
        return [(result, _label(status))]
    return [(r, f"rank {r.get('rank')}" + (f" ({r['host']} pid {r['pid']})" if "pid" in r else ""))
            for r in result["results"]]


def header(table: str) -> str:
    """A report table's lines before its column titles."""
    lines = table.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("Event "):
            return "".join(lines[:i])
    return table
