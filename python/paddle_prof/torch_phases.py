"""Events that mark a training step's backward phase under paddle_prof.torch.profiler:
``torch.autograd.backward`` (which ``Tensor.backward()`` calls) and ``torch.autograd.grad``
are scoped by events of those names. The other phases come from scopes torch records
itself: ``enumerate(DataLoader)#...__next__`` (data), ``Optimizer.step#...`` and
``Optimizer.zero_grad#...`` (optimizer), and the root modules' events (forward).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, List, Tuple

import torch

from paddle_prof.record_event import record_event


def _scoped(function: Callable, name: str, then: Callable[[], None]) -> Callable:
    event = record_event(name)

    @functools.wraps(function)
    def scoped(*args: Any, **kwargs: Any) -> Any:
        with event:
            try:
                return function(*args, **kwargs)
            finally:
                then()  # what the pass left open on this thread ends with it

    return scoped


class BackwardEvents:
    """Scopes torch.autograd.backward and torch.autograd.grad while installed; ``then``
    runs as each returns (or raises)."""

    def __init__(self, then: Callable[[], None]) -> None:
        self._then = then
        self._saved: List[Tuple[str, Callable]] = []

    def install(self) -> None:
        for attribute in ("backward", "grad"):
            original = getattr(torch.autograd, attribute)
            self._saved.append((attribute, original))
            setattr(torch.autograd, attribute,
                    _scoped(original, "torch.autograd." + attribute, self._then))

    def remove(self) -> None:
        for attribute, original in self._saved:
            setattr(torch.autograd, attribute, original)
        self._saved = []
