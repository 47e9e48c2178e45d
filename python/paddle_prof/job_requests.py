"""``trigger --job``: a request passed to every rank of a torch.distributed or
paddle.distributed job through the job's own store, so that no daemon runs on any host.

The rank ``trigger`` reaches adds the request under ``paddle_prof/on_demand/<n>``; each
listening rank's watcher thread looks for that key once a second, in a store client of
its own, and opens its window as a local trigger would. (A thread blocked in the store's
wait instead would be in torch's C++ code as the process exits, which aborts it; the exit
stops the watchers first, for the same reason.) Each rank
then sets ``<n>/rank<r>`` to its result with its summary and trace, and the rank that
was asked writes the files of ranks on other hosts beside its own and answers.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time
from datetime import timedelta
from typing import Any, Callable, Dict, List, Optional, Tuple

from paddle_prof import distributed as _distributed
from paddle_prof import listen_protocol as protocol

COUNT = "paddle_prof/on_demand/count"
POLL_S = 1.0
# How long the exit waits for a watcher's store call in flight: a round trip, or c10d's
# 5 s poll when the store's host is gone.
STORE_CALL_S = 6.0

# A thread still in a store call when the interpreter finalizes aborts the process (the
# call's C++ frames meet the thread's forced exit): the exit stops the watchers first.
_exiting = threading.Event()
_watchers: List[threading.Thread] = []


def _key(n: int, rank: Optional[int] = None) -> str:
    return f"paddle_prof/on_demand/{n}" + ("" if rank is None else f"/rank{rank}")


def _publish(store: Any, key: str, value: str) -> None:
    store.set(key, value.encode())  # bytes: Paddle's store takes no str
    store.add(key + "/set", 1)  # what _published() reads: torch 1.13's store has no check()


def _published(store: Any, key: str) -> bool:
    """Whether `key` was published, without waiting (adding 0 to a counter never blocks)."""
    return int(store.add(key + "/set", 0)) > 0


def _paddle_initialised() -> Any:
    """paddle.distributed when the program initialised it, else None (never imports Paddle)."""
    dist = sys.modules.get("paddle.distributed")
    try:
        if dist is not None and dist.is_initialized():
            return dist
    except Exception:  # a half-imported or unusual build: not distributed, for us
        pass
    return None


def initialised() -> Any:
    """The distributed module of the job this process is a rank of, torch's or Paddle's,
    once the program initialised it; else None."""
    return _distributed.initialised() or _paddle_initialised()


def job_store() -> Any:
    """A client of its own to the job's TCPStore (its socket, so that waiting in it never
    holds up the program's own use of the store); None outside a distributed job.
    RuntimeError for a job whose store cannot be reached so."""
    dist = _distributed.initialised()
    if dist is not None:
        return _torch_store(dist)
    dist = _paddle_initialised()
    if dist is not None:
        return _paddle_store(dist)
    return None


def _torch_store(dist: Any) -> Any:
    store = dist.distributed_c10d._get_default_store()
    while hasattr(store, "underlying_store"):
        store = store.underlying_store
    try:
        host, port = store.host, store.port
    except AttributeError:
        raise RuntimeError(f"the job's store is a {type(store).__name__}, not a TCPStore") from None
    return dist.TCPStore(host, port, None, False, timedelta(seconds=30))


def _paddle_store(dist: Any) -> Any:
    """Paddle's store does not tell its address: it is found as Paddle finds it, from
    PADDLE_MASTER, else the first of PADDLE_TRAINER_ENDPOINTS."""
    endpoint = (os.environ.get("PADDLE_MASTER")
                or os.environ.get("PADDLE_TRAINER_ENDPOINTS", "").split(",")[0])
    host, _, port = endpoint.rpartition(":")
    if not host or not port.isdigit():
        raise RuntimeError("the job's store has no address: neither PADDLE_MASTER nor "
                           "PADDLE_TRAINER_ENDPOINTS is set")
    from paddle.base import core
    return core.TCPStore(host, int(port), False, dist.get_world_size(), 30)


def _stop_watchers() -> None:
    """At the interpreter's exit: no watcher starts another store call, and one in a
    call is waited for (one running a window as long, then left: it is in Python)."""
    _exiting.set()
    for thread in list(_watchers):
        thread.join(timeout=STORE_CALL_S)


atexit.register(_stop_watchers)


def watch(store: Any, rank: int, run: Callable[[Dict[str, Any]], Dict[str, Any]]) -> None:
    """A rank's watcher: runs each request of the job as it comes (`run` returns the
    result), until the job's store goes away or the interpreter exits."""
    _watchers.append(threading.current_thread())
    try:
        _watch(store, rank, run)
    finally:
        _watchers.remove(threading.current_thread())


def _watch(store: Any, rank: int, run: Callable[[Dict[str, Any]], Dict[str, Any]]) -> None:
    n = int(store.add(COUNT, 0))
    while True:
        n += 1
        while True:
            if _exiting.is_set():
                return
            try:
                if _published(store, _key(n)):
                    break
            except Exception:  # the job's store is gone: the job ended
                return
            _exiting.wait(POLL_S)
        try:
            request = protocol.parse_request(bytes(store.get(_key(n))))
        except Exception:  # not a request (RequestError), or the store failed: skipped
            continue
        result = run(request)
        payload: Dict[str, Any] = {"result": result}
        if result.get("ok") and result.get("summary"):
            for name, path in _files(result):
                try:
                    with open(path, encoding="utf-8") as f:
                        payload[name] = f.read()
                except (OSError, TypeError, ValueError):
                    pass
        if _exiting.is_set():
            return
        try:
            _publish(store, _key(n, rank), json.dumps(payload))
        except Exception:
            return


def ask_job(store: Any, world_size: int, request: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Passes `request` to every rank and gathers their results, writing here the files of
    ranks whose own are not here (another host)."""
    n = int(store.add(COUNT, 1))
    _publish(store, _key(n), json.dumps(dict(request, job=False)))
    deadline = time.monotonic() + request["wait"]
    results = []
    for rank in range(world_size):
        try:
            while not _published(store, _key(n, rank)):
                if time.monotonic() > deadline:
                    raise TimeoutError
                time.sleep(0.05)
            payload = json.loads(bytes(store.get(_key(n, rank))))
            result = payload["result"]
        except Exception:
            results.append({"ok": False, "rank": rank,
                            "error": f"did not answer within {request['wait']:g} s"})
            continue
        result["rank"] = rank
        if result.get("ok") and result.get("summary"):
            _write_missing(result, payload)
        results.append(result)
    return results


def _files(result: Dict[str, Any]) -> List[Tuple[str, Optional[str]]]:
    """A written window's files, by the name its payload gives each."""
    return [("summary", result["summary"]), ("trace", result.get("path"))]


def _write_missing(result: Dict[str, Any], payload: Dict[str, Any]) -> None:
    for name, path in _files(result):
        if path and name in payload and not os.path.exists(path):
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(payload[name])
            except OSError as e:
                result["ok"] = False
                result["error"] = f"its {name} could not be written to {path}: {e.strerror}"
                return
