"""Events that mark a training step's backward phase under paddle_prof.torch.profiler:
``torch.autograd.backward`` (which ``Tensor.backward()`` calls) and ``torch.autograd.grad``
are scoped by events of those names. The other phases come from scopes torch records
itself: ``enumerate(DataLoader)#...__next__`` (data), ``Optimizer.step#...`` and
``Optimizer.zero_grad#...`` (optimizer), and the root modules' events (forward).
"""

from __future__ import annotations

from typing import Callable

import torch

from paddle_prof.call_scopes import Patches, scoped


class BackwardEvents:
    """Scopes torch.autograd.backward and torch.autograd.grad while installed; ``then``
    runs as each returns (or raises)."""

    def __init__(self, then: Callable[[], None]) -> None:
        self._then = then
        self._patches = Patches()

    def install(self) -> None:
        for attribute in ("backward", "grad"):
            self._patches.patch(torch.autograd, attribute,
                                scoped(torch.autograd.__dict__[attribute],
                                       "torch.autograd." + attribute, self._then))

    def remove(self) -> None:
        self._patches.restore()
