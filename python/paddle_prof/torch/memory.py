"""Memory categories under paddle_prof.torch.profiler: what the blocks are, told to the
bridge by their storage. The parameters of the modules called in the window, their
gradients, the state of the optimizers stepped in it and a DistributedDataParallel's
gradient buckets are marked after each optimizer step, at each step's end and at the
stop (a block keeps what it was told for its whole life); the tensors handed to a root module's forward are marked as they go in. The
bridge keeps each list of tensors in C++ (TensorMarks, torch_memory_marks.cc), made
again at the stop and when an optimizer's state grows, and tells only the storages that
changed since its last scan. The report derives the other categories from when each
block lived (src/analysis/memory_categories.h).
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any, Iterable, List, Tuple

import torch

from paddle_prof import _torch_bridge

# What the bridge takes for a tensor: every tensor's C base class.
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


_buckets_unreadable = False  # warned once a process


def _mark_gradient_buckets(module: torch.nn.Module) -> None:
    """A DistributedDataParallel's Reducer keeps the gradients of each bucket in a flat
    tensor of its own, copied into the parameters' ``.grad`` after the all-reduce (or
    their storage, with ``gradient_as_bucket_view``): gradient memory, which only the
    Reducer holds."""
    reducer = getattr(module, "reducer", None)
    if reducer is None or not isinstance(module, torch.nn.parallel.DistributedDataParallel):
        return
    global _buckets_unreadable
    if _torch_bridge.mark_ddp_buckets(reducer, _torch_bridge.GRADIENT) < 0 \
            and not _buckets_unreadable:
        _buckets_unreadable = True
        warnings.warn("paddle_prof.torch: DistributedDataParallel's gradient buckets cannot "
                      "be read from this torch build; they count as activation or other",
                      stacklevel=3)


class MemoryKinds:
    """The models and optimizers of one window, whose blocks it marks (scan)."""

    def __init__(self) -> None:
        # Each known root's parameters (and their gradients) that no known optimizer
        # holds: those an optimizer holds are its to tell, once. Each known optimizer's
        # parameters, its state's tensors, the number of parameters that had state then
        # and the ids of its parameters.
        self._roots: "weakref.WeakKeyDictionary[torch.nn.Module, Any]" = \
            weakref.WeakKeyDictionary()
        self._optimizers: "weakref.WeakKeyDictionary[torch.optim.Optimizer, list]" = \
            weakref.WeakKeyDictionary()

    def note_root(self, module: torch.nn.Module) -> None:
        held = set().union(*(marks[3] for marks in self._optimizers.values()))
        self._roots[module] = _torch_bridge.TensorMarks(
            [p for p in module.parameters() if id(p) not in held],
            _torch_bridge.PARAMETER, _torch_bridge.GRADIENT)
        _mark_gradient_buckets(module)

    def note_gradients(self, module: torch.nn.Module) -> None:
        """``module.zero_grad()`` is about to free or zero these: its parameters and
        their gradients, told while they live."""
        _torch_bridge.TensorMarks(list(module.parameters()), _torch_bridge.PARAMETER,
                                  _torch_bridge.GRADIENT).mark()

    def note_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        if optimizer not in self._optimizers:
            self._optimizers[optimizer] = self._marks_of(optimizer)
            for root in list(self._roots.keys()):
                self.note_root(root)  # without the parameters the optimizer tells
        self.scan_optimizer(optimizer)

    @staticmethod
    def _marks_of(optimizer: torch.optim.Optimizer) -> list:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        state = [v for s in optimizer.state.values() for v in s.values()
                 if isinstance(v, torch.Tensor)]
        return [_torch_bridge.TensorMarks(params, _torch_bridge.PARAMETER,
                                          _torch_bridge.GRADIENT),
                _torch_bridge.TensorMarks(state, _torch_bridge.OPTIMIZER_STATE),
                len(optimizer.state), {id(p) for p in params}]

    def scan_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        """The optimizer's parameters, their gradients and its state, just stepped."""
        marks = self._optimizers[optimizer]
        if marks[2] != len(optimizer.state):  # state for more parameters: made again
            marks[:] = self._marks_of(optimizer)
        if marks[0].mark() + marks[1].mark():  # tensors it let go of: state loaded anew
            marks[:] = self._marks_of(optimizer)
            marks[0].mark()
            marks[1].mark()

    def scan(self, fresh: bool = False) -> None:
        """Every known model's parameters and gradients, every known optimizer's state;
        ``fresh`` makes each list again first (a parameter or state added since)."""
        if fresh:
            for optimizer in list(self._optimizers.keys()):
                self._optimizers[optimizer] = self._marks_of(optimizer)
        for root in list(self._roots.keys()):
            if fresh or self._roots[root].mark():  # or parameters it let go of: replaced
                self.note_root(root)
                self._roots[root].mark()
            _mark_gradient_buckets(root)  # rebuilt at the second forward
        for optimizer in list(self._optimizers.keys()):
            self.scan_optimizer(optimizer)
