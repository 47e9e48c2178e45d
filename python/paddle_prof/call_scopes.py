"""What the framework bridges (paddle_prof.torch, paddle_prof.paddle) share to make a
framework's Python calls events: a function wrapped so that each call is one event
(``scoped``), and the wrappers a window installs on a framework's classes and modules
and takes back as it ends (``Patches``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, List, Optional, Tuple

from paddle_prof.record_event import record_event


def scoped(function: Callable[..., Any], name: str,
           then: Optional[Callable[[], None]] = None) -> Callable[..., Any]:
    """`function` with each call recorded as the event `name`; `then()` runs as the call
    returns or raises, inside the event (what the call left open on its thread ends with
    it)."""
    event = record_event(name)  # one object, entered by each call

    @functools.wraps(function)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        with event:
            if then is None:
                return function(*args, **kwargs)
            try:
                return function(*args, **kwargs)
            finally:
                then()

    return recorded


class Patches:
    """Attributes of classes and modules replaced for a window, restored by restore() in
    the reverse order."""

    def __init__(self) -> None:
        self._saved: List[Tuple[Any, str, Any]] = []  # (owner, name, original)

    def patch(self, owner: Any, name: str, replacement: Any) -> None:
        """Replaces `owner.name`, as defined on `owner` itself (a class's own function,
        not an inherited or bound one)."""
        self._saved.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, replacement)

    def restore(self) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()
