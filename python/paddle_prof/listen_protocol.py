"""What a listening process and ``ps``, ``trigger`` and ``top`` say to each other: where
the sockets are, and the requests and replies, each one JSON object on one line.

A listener owns ``<dir>/<host>-<pid>.sock`` in a directory of its user alone (mode
0700, PADDLE_PROF_LISTEN_DIR or /tmp/paddle_prof-<uid>); it also checks each peer's
uid. A request is read whole before anything is done: at most MAX_LINE bytes, strict
JSON, an object whose fields have the types below. Anything else is a RequestError,
whose text is the error reply.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from typing import Any, Dict, Optional, Tuple

MAX_LINE = 64 << 10  # a request, or a reply other than a view, is far smaller
MAX_STEPS = 1_000_000
MAX_WAIT_S = 86400  # a day: a trigger waits at most this long for its windows
REQUESTS = ("status", "trigger", "top", "view")


class RequestError(ValueError):
    """A request that is not one: its text is what the reply says."""


def socket_dir() -> str:
    return os.environ.get("PADDLE_PROF_LISTEN_DIR") or f"/tmp/paddle_prof-{os.getuid()}"


def own_socket_dir(create: bool) -> Tuple[Optional[str], str]:
    """The socket directory, made if `create` and missing: (path, '') when it is this
    user's alone, else (None, why not)."""
    path = socket_dir()
    if create:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError as e:
            return None, f"cannot make {path}: {e.strerror}"
    try:
        info = os.lstat(path)
    except OSError as e:
        return None, f"cannot read {path}: {e.strerror}"
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return None, f"{path} is not a directory of this user's (uid {os.getuid()})"
    if info.st_mode & 0o077:
        return None, (f"{path} is open to other users (mode {stat.S_IMODE(info.st_mode):o}): "
                      "it must be 0700")
    return path, ""


def socket_name(host: str, pid: int) -> str:
    # A host name has no '/', but a pid namespace's pid 1 may run on two hosts.
    return f"{host.replace(os.sep, '_')}-{pid}.sock"


def peer_uid(connection: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket, as the kernel saw it
    connect (SO_PEERCRED)."""
    import struct

    creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _refuse_constant(name: str) -> Any:
    raise RequestError(f"{name} is not JSON")


def _field(request: Dict[str, Any], name: str, kind: type, default: Any) -> Any:
    value = request.get(name, default)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise RequestError(f"'{name}' must be an integer; got {value!r:.80}")
    if kind is not int and not isinstance(value, kind):
        raise RequestError(f"'{name}' must be a {kind.__name__}; got {value!r:.80}")
    return value


def parse_request(line: bytes) -> Dict[str, Any]:
    """The request a line holds, its fields checked and defaulted; RequestError if it is
    none."""
    if len(line) > MAX_LINE:
        raise RequestError(f"a request is at most {MAX_LINE} bytes; got {len(line)}")
    try:
        request = json.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        raise RequestError("a request is UTF-8") from None
    except RecursionError:
        raise RequestError("a request nests too deeply") from None
    except ValueError as e:
        raise RequestError(f"a request is one JSON object on one line: {e}") from None
    if not isinstance(request, dict):
        raise RequestError("a request is a JSON object")
    kind = request.get("request")
    if kind not in REQUESTS:
        raise RequestError(f"'request' must be one of {', '.join(REQUESTS)}; got {kind!r:.80}")
    checked: Dict[str, Any] = {"request": kind}
    if kind == "trigger":
        steps = _field(request, "steps", int, 5)
        if not 1 <= steps <= MAX_STEPS:
            raise RequestError(f"'steps' must be 1 to {MAX_STEPS}; got {steps}")
        out = _field(request, "out", str, "")
        if not os.path.isabs(out) or "\0" in out:
            raise RequestError(f"'out' must be an absolute path; got {out!r:.200}")
        checked.update(steps=steps, out=out,
                       record_shapes=_field(request, "record_shapes", bool, False),
                       modules=_field(request, "modules", bool, False),
                       native=_field(request, "native", bool, False),
                       job=_field(request, "job", bool, False))
        wait = request.get("wait", 300)
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 < wait <= MAX_WAIT_S:
            raise RequestError(f"'wait' must be more than 0 and at most {MAX_WAIT_S} seconds; "
                               f"got {wait!r:.80}")
        checked["wait"] = wait
    return checked


def encode(message: Dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"


class LineReader:
    """Lines from a socket, each at most `limit` bytes (a longer one: RequestError)."""

    def __init__(self, connection: socket.socket, limit: int = MAX_LINE) -> None:
        self.connection = connection
        self.limit = limit
        self.buffer = b""

    def line(self) -> Optional[bytes]:
        """The next line without its newline; None at the end of the stream."""
        while b"\n" not in self.buffer:
            if len(self.buffer) > self.limit:
                raise RequestError(f"a line is at most {self.limit} bytes")
            chunk = self.connection.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        if len(line) > self.limit:
            raise RequestError(f"a line is at most {self.limit} bytes")
        return line


def reply(line: Optional[bytes]) -> Dict[str, Any]:
    """A listener's reply, read by ps, trigger and top; ValueError if it is none."""
    if line is None:
        raise ValueError("the process closed the connection")
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    except RecursionError:
        raise ValueError("the reply nests too deeply") from None
    if not isinstance(message, dict):
        raise ValueError("the reply is not a JSON object")
    return message
