"""Memory kinds under paddle_prof.paddle.profiler: the blocks of the parameters of the
layers called in the window (their roots') and of the optimizers stepped in it, of their
gradients, and of those optimizers' state (moments, beta powers, velocity, master
weights), told to the core by address: a Paddle tensor's data pointer is where its
allocation starts, which the bridge tracked. They are told after each optimizer step, at
each step's end and at the stop; a block keeps what it was told for its whole life. A
static program's parameters and optimizer state are variables of its scope, told by
name as each run is fed (static.py) and again with the rest; its gradients live
only inside a run and are not told. The
report derives input, temporary, activation and other from when each block lived
(src/analysis/memory_categories.h), as for PyTorch.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any, Dict, Iterable, List, Set, Tuple

from paddle_prof import _core


def _addresses(tensors: Iterable[Any]) -> List[int]:
    found = []
    for tensor in tensors:
        try:
            if tensor is not None and tensor._is_initialized():
                found.append(tensor.data_ptr())
        except (AttributeError, RuntimeError, ValueError):  # not a dense tensor with data
            continue
    return found


def _scope_addresses(scope: Any, names: Iterable[str]) -> List[int]:
    """The data pointers of the dense tensors `names` hold in a static program's scope."""
    found = []
    for name in names:
        variable = scope.find_var(name)
        if variable is None:
            continue
        tensor = variable.get_tensor()
        if tensor._is_initialized():
            found.append(tensor._ptr())
    return found


def _gradients(params: Iterable[Any]) -> List[Any]:
    return [getattr(p, "grad", None) for p in params]


def _parameters(optimizer: Any) -> List[Any]:
    """An optimizer's parameters, its groups' too (a list of dicts, each with "params")."""
    found: List[Any] = []
    for entry in getattr(optimizer, "_parameter_list", None) or []:
        found.extend(entry.get("params", []) if isinstance(entry, dict) else [entry])
    return found


def _optimizer_state(optimizer: Any) -> List[Any]:
    """An optimizer's accumulators (moments, beta powers, velocity) and master weights."""
    state: List[Any] = []
    for by_param in (getattr(optimizer, "_accumulators", None) or {}).values():
        state.extend(by_param.values())
    state.extend((getattr(optimizer, "_master_weights", None) or {}).values())
    return state


class MemoryKinds:
    """The root layers and optimizers of one window, whose blocks scan() tells, and
    scan_step() after each optimizer step: that step's gradients and new state, the
    parameters being known already (updated in place) unless a root or an optimizer is
    new."""

    def __init__(self) -> None:
        self._roots: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._optimizers: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._params: Dict[int, Any] = {}  # as the last scan() read them, each once
        self._state: Dict[int, Any] = {}   # optimizer state told, held so ids stay its
        self._stale = True  # a root or optimizer noted since the last scan()
        # Static programs' scopes: the names of the parameters and optimizer state in each.
        self._scopes: Dict[int, Tuple[Any, Set[str], Set[str]]] = {}
        self._warned = False

    def warn(self, error: Exception) -> None:
        """A model or optimizer it cannot read is a warning, once, and the program goes
        on (its step is not the profiler's to fail)."""
        if not self._warned:
            self._warned = True
            warnings.warn(f"paddle_prof.paddle: the memory of parameters, gradients and "
                          f"optimizer state is not told apart: {error!r}", RuntimeWarning)

    def note_root(self, layer: Any) -> None:
        if layer not in self._roots:
            self._roots.add(layer)
            self._stale = True

    def note_optimizer(self, optimizer: Any) -> None:
        if optimizer not in self._optimizers:
            self._optimizers.add(optimizer)
            self._stale = True

    def note_scope(self, scope: Any, parameters: List[str], state: List[str]) -> None:
        """Tells the blocks of a static program's `parameters` and optimizer `state`, by
        name in `scope`, now and at each scan."""
        _, known_parameters, known_state = self._scopes.setdefault(
            id(scope), (scope, set(), set()))
        known_parameters.update(parameters)
        known_state.update(state)
        self._scan_scope(scope, parameters, state)

    def _scan_scope(self, scope: Any, parameters: Iterable[str], state: Iterable[str]) -> None:
        try:
            _core.mark_blocks(_scope_addresses(scope, parameters), _core.PARAMETER)
            _core.mark_blocks(_scope_addresses(scope, state), _core.OPTIMIZER_STATE)
        except Exception as e:  # noqa: BLE001 (any scope's oddity)
            self.warn(e)

    def scan(self) -> None:
        """Tells the blocks; what it cannot read is a warning, once (warn)."""
        for scope, parameters, state in list(self._scopes.values()):
            self._scan_scope(scope, parameters, state)
        try:
            # Each parameter once: a model's are most often its optimizer's too.
            params = {id(p): p for root in list(self._roots) for p in root.parameters()}
            state = []
            for optimizer in list(self._optimizers):
                params.update((id(p), p) for p in _parameters(optimizer))
                state.extend(_optimizer_state(optimizer))
            self._params, self._stale = params, False
            self._state = {id(t): t for t in state}
            _core.mark_blocks(_addresses(params.values()), _core.PARAMETER)
            _core.mark_blocks(_addresses(_gradients(params.values())), _core.GRADIENT)
            _core.mark_blocks(_addresses(state), _core.OPTIMIZER_STATE)
        except Exception as e:  # noqa: BLE001 (any model's oddity)
            self.warn(e)

    def scan_step(self, optimizer: Any) -> None:
        """After `optimizer` stepped: the gradients, before they may be cleared, and the
        state the step made."""
        if self._stale:
            self.scan()
            return
        try:
            new = [t for t in _optimizer_state(optimizer) if id(t) not in self._state]
            self._state.update((id(t), t) for t in new)
            _core.mark_blocks(_addresses(_gradients(self._params.values())), _core.GRADIENT)
            if new:
                _core.mark_blocks(_addresses(new), _core.OPTIMIZER_STATE)
        except Exception as e:  # noqa: BLE001 (any model's oddity)
            self.warn(e)
