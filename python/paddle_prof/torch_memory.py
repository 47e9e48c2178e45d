"""Memory categories under paddle_prof.torch.profiler: what the blocks are, told to the
bridge by their storage. The parameters of the modules called in the window, their
gradients and the state of the optimizers stepped in it are marked after each optimizer
step, at each step's end and at the stop (a block keeps what it was told for its whole
life); the tensors handed to a root module's forward are marked as they go in. The
report derives the other categories from when each block lived
(src/report/memory_categories.h).
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Iterable, List, Tuple

import torch

from paddle_prof import _torch_bridge


def _storage_pointer(tensor: torch.Tensor) -> int:
    """Where the tensor's storage starts: its block, for a view too."""
    storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else tensor.storage()
    return storage.data_ptr()


def mark(tensors: List[torch.Tensor], kind: int) -> None:
    """Tells the bridge what the blocks of ``tensors`` are. Their own pointers first, one
    call for all; a view's (its pointer inside its block) again by its storage's."""
    if not tensors:
        return
    missing = _torch_bridge.mark_blocks([t.data_ptr() for t in tensors], kind)
    again = [i for i in missing if tensors[i].storage_offset() != 0]
    if again:
        _torch_bridge.mark_blocks([_storage_pointer(tensors[i]) for i in again], kind)


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
    mark([t for t in tensors if t.device.type != "meta"], _torch_bridge.HANDED_TO_MODULE)


class MemoryKinds:
    """The models and optimizers of one window, whose blocks it marks (scan)."""

    def __init__(self) -> None:
        self._roots: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        self._optimizers: "weakref.WeakSet[torch.optim.Optimizer]" = weakref.WeakSet()

    def note_root(self, module: torch.nn.Module) -> None:
        self._roots.add(module)

    def note_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        self._optimizers.add(optimizer)
        self.scan_optimizer(optimizer)

    def scan_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        """The optimizer's parameters, their gradients and its state, just stepped."""
        params = [p for group in optimizer.param_groups for p in group["params"]]
        mark(params, _torch_bridge.PARAMETER)
        mark([p.grad for p in params if p.grad is not None], _torch_bridge.GRADIENT)
        state = [v for s in optimizer.state.values() for v in s.values()
                 if isinstance(v, torch.Tensor)]
        mark(state, _torch_bridge.OPTIMIZER_STATE)

    def scan(self) -> None:
        """Every known model's parameters and gradients, every known optimizer's state."""
        for root in list(self._roots):
            params = list(root.parameters())
            mark(params, _torch_bridge.PARAMETER)
            mark([p.grad for p in params if p.grad is not None], _torch_bridge.GRADIENT)
        for optimizer in list(self._optimizers):
            self.scan_optimizer(optimizer)


def noting_optimizer(step: Callable, kinds: MemoryKinds) -> Callable:
    """An optimizer class's step() that has ``kinds`` note the optimizer after it."""

    @functools.wraps(step)
    def noted_step(self: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        result = step(self, *args, **kwargs)
        kinds.note_optimizer(self)
        return result

    return noted_step
