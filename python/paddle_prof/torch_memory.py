"""Memory categories under paddle_prof.torch.profiler: what the blocks are, told to the
bridge by their storage. The parameters of the modules called in the window, their
gradients and the state of the optimizers stepped in it are marked after each optimizer
step, at each step's end and at the stop (a block keeps what it was told for its whole
life); the tensors handed to a root module's forward are marked as they go in. The
bridge reads each list of tensors in C++ (torch_memory_marks.cc); the lists are kept
between scans, and made again at the stop and when an optimizer's state grows. The
report derives the other categories from when each block lived
(src/report/memory_categories.h).
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable, List, Tuple

import torch

from paddle_prof import _torch_bridge

# What mark_tensors accepts: every tensor's C base class.
_torch_bridge.set_tensor_type(getattr(torch._C, "TensorBase", None) or torch._C._TensorBase)


def _tensors_in(values: Iterable[Any]) -> List[torch.Tensor]:
    """The tensors among ``values`` and one level into the lists, tuples and dicts there."""
    found = []
    for value in values:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, torch.Tensor))
        elif isinstance(value, dict):
            found.extend(v for v in value.values() if isinstance(v, torch.Tensor))
    return found


def mark_inputs(args: Tuple[Any, ...], kwargs: dict) -> None:
    """A root module's forward takes these: their blocks are handed to the model."""
    tensors = _tensors_in(args)
    if kwargs:
        tensors.extend(_tensors_in(kwargs.values()))
    if tensors:
        _torch_bridge.mark_tensors(tensors, _torch_bridge.HANDED_TO_MODULE)


class MemoryKinds:
    """The models and optimizers of one window, whose blocks it marks (scan)."""

    def __init__(self) -> None:
        # Each known root's parameters; each known optimizer's parameters, and its state's
        # tensors with the number of parameters that had state then.
        self._roots: "weakref.WeakKeyDictionary[torch.nn.Module, list]" = \
            weakref.WeakKeyDictionary()
        self._optimizers: "weakref.WeakKeyDictionary[torch.optim.Optimizer, list]" = \
            weakref.WeakKeyDictionary()

    def note_root(self, module: torch.nn.Module) -> None:
        self._roots[module] = list(module.parameters())

    def note_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        if optimizer not in self._optimizers:
            self._optimizers[optimizer] = self._lists_of(optimizer)
        self.scan_optimizer(optimizer)

    @staticmethod
    def _lists_of(optimizer: torch.optim.Optimizer) -> list:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        state = [v for s in optimizer.state.values() for v in s.values()
                 if isinstance(v, torch.Tensor)]
        return [params, state, len(optimizer.state)]

    def scan_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        """The optimizer's parameters, their gradients and its state, just stepped."""
        lists = self._optimizers[optimizer]
        if lists[2] != len(optimizer.state):  # state for more parameters: made again
            lists[:] = self._lists_of(optimizer)
        params, state, _ = lists
        _torch_bridge.mark_tensors(params, _torch_bridge.PARAMETER, _torch_bridge.GRADIENT)
        _torch_bridge.mark_tensors(state, _torch_bridge.OPTIMIZER_STATE)

    def scan(self, fresh: bool = False) -> None:
        """Every known model's parameters and gradients, every known optimizer's state;
        ``fresh`` makes each list again first (a parameter or state added since)."""
        for root in list(self._roots.keys()):
            if fresh:
                self.note_root(root)
            _torch_bridge.mark_tensors(self._roots[root], _torch_bridge.PARAMETER,
                                       _torch_bridge.GRADIENT)
        for optimizer in list(self._optimizers.keys()):
            if fresh:
                self._optimizers[optimizer] = self._lists_of(optimizer)
            self.scan_optimizer(optimizer)

