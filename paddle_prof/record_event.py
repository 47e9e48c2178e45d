"""record_event: a named scope around Python code, as a context manager or decorator."""

from __future__ import annotations

import contextlib
import threading
from typing import Optional

from paddle_prof import _core


class record_event(contextlib.ContextDecorator):  # noqa: N801 (the API's name)
    """Records the enclosed code as one call of event ``name`` (and ``tag``).

    Example::

        with paddle_prof.record_event('data_loader'):
            batch = next(loader)

        @paddle_prof.record_event('forward')
        def forward(x): ...

    One object may be entered again, recursively or from several threads: each entry
    is its own call, recorded on the thread that runs it.
    """

    def __init__(self, name: str, tag: Optional[str] = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_event name must be a str, got {type(name).__name__}")
        if tag is not None and not isinstance(tag, str):
            raise TypeError(f"record_event tag must be a str or None, got {type(tag).__name__}")
        self.name = name
        self.tag = tag
        self._local = threading.local()

    def __enter__(self) -> "record_event":
        stack = getattr(self._local, "scopes", None)
        if stack is None:
            stack = self._local.scopes = []
        stack.append(_core.Scope(self.name, self.tag))
        return self

    def __exit__(self, *exc_info: object) -> bool:
        stack = getattr(self._local, "scopes", None)
        if stack:
            stack.pop().end()
        return False
