"""PaddlePaddle's model view and step phases under paddle_prof.paddle.profiler: each
``paddle.nn.Layer`` call is an event ``nn.Layer: <path>`` (named as PyTorch's modules
are: module_paths.py), each backward pass ``paddle.autograd.backward``, an optimizer's
``step``, ``clear_grad`` and ``minimize`` ``Optimizer.<method>#<type>.<method>``, a
``paddle.io.DataLoader`` iterator's next batch ``paddle.io.DataLoader#<type>.__next__``:
the events the report's ``modules`` and step phases read; each layer's gradient
computation ``nn.Layer: <path>.backward`` (layer_backward.py); and a static
program's runs (static.py). Installed for a window (install/remove).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import paddle
from paddle.io.dataloader import dataloader_iter as _dataloader_iter

from paddle_prof import _core
from paddle_prof.call_scopes import Patches, scoped
from paddle_prof.module_paths import held_as
from paddle_prof.paddle.layer_backward import Hooks, LayerBackward
from paddle_prof.paddle.memory import MemoryKinds
from paddle_prof.paddle.static import StaticRuns
from paddle_prof.record_event import record_event

_OPTIMIZER_METHODS = ("step", "clear_grad", "minimize")


class _Calls:
    """What the calls of one layer by one caller share: its path, its event, and the
    hooks of its backward (layer_backward.py), which hold its callers' paths and
    its own."""

    __slots__ = ("path", "event", "hooks")

    def __init__(self, path: str, hooks: Hooks) -> None:
        self.path = path
        self.event = record_event("nn.Layer: " + path)  # one object, entered by each call
        self.hooks = hooks


def _param_figures(layer: Any) -> Tuple[int, int]:
    params = param_bytes = 0
    for p in layer.parameters():
        count = 1
        for extent in p.shape:
            count *= int(extent)
        params += count
        param_bytes += count * p.element_size()
    return params, param_bytes


def _named_by_self(function: Callable[..., Any],
                   name: Callable[[Any], str]) -> Callable[..., Any]:
    """`function` with each call recorded as the event `name(self)`."""

    def recorded(self: Any, *args: Any, **kwargs: Any) -> Any:
        with record_event(name(self)):
            return function(self, *args, **kwargs)

    recorded.__wrapped__ = function  # type: ignore[attr-defined]
    return recorded


def _subclasses(base: type) -> List[type]:
    """`base` and every class derived from it."""
    found, todo = [], [base]
    while todo:
        cls = todo.pop()
        if cls not in found:
            found.append(cls)
            todo.extend(cls.__subclasses__())
    return found


class LayerEvents:
    """Records layer calls (when ``layers``), backward passes and optimizer calls for one
    window, from install() until remove()."""

    def __init__(self, layers: bool, kinds: MemoryKinds,
                 on_optimizer_step: Optional[Callable[[], None]] = None) -> None:
        self.layers = layers
        self.kinds = kinds  # told of each root layer and each optimizer stepped
        # Called after each optimizer step (run's implicit window ends a step there).
        self.on_optimizer_step = on_optimizer_step
        self._open = threading.local()  # each thread's open calls: (layer, path)
        # Each layer's calls by its caller's path (None for a root): weak, so a layer
        # made where a dead one was is named anew.
        self._calls: "weakref.WeakKeyDictionary[Any, Dict[Optional[str], _Calls]]" = \
            weakref.WeakKeyDictionary()
        self._noted: set = set()
        self._backward = LayerBackward()
        self._patches = Patches()

    def _called(self, layer: Any, caller: Optional[Tuple[Any, "_Calls"]]) -> "_Calls":
        """What `layer`'s calls by `caller` (a layer and its calls; None for a root)
        share."""
        known = self._calls.setdefault(layer, {})
        caller_path = caller[1].path if caller is not None else None
        calls = known.get(caller_path)
        if calls is None:
            if caller is None:
                path, paths = type(layer).__name__, (type(layer).__name__,)
                self.kinds.note_root(layer)
            else:
                parent = caller[0]
                path = caller_path + "." + held_as(
                    parent._sub_layers.items(),
                    lambda: parent.named_sublayers(include_self=False), layer)
                paths = caller[1].hooks.paths + (path,)
            calls = known[caller_path] = _Calls(path, self._backward.hooks(paths))
        if calls.path not in self._noted:
            self._noted.add(calls.path)
            _core.note_module(calls.path, type(layer).__name__, *_param_figures(layer))
        return calls

    def install(self) -> None:
        if self.layers:
            self._patches.patch(paddle.nn.Layer, "__call__", self._layer_call(paddle.nn.Layer.__call__))
            self._backward.install()
        self._patches.patch(paddle.Tensor, "backward",
                    self._backward_call(paddle.Tensor.__dict__["backward"],
                                        "paddle.autograd.backward"))
        for name in ("backward", "grad"):
            self._patches.patch(paddle.autograd, name, self._backward_call(
                paddle.autograd.__dict__[name], f"paddle.autograd.{name}"))
        self._patches.patch(paddle, "grad", self._backward_call(paddle.__dict__["grad"],
                                                        "paddle.autograd.grad"))
        for cls in _subclasses(_dataloader_iter._DataLoaderIterBase):
            if "__next__" in cls.__dict__:
                self._patches.patch(cls, "__next__", _named_by_self(
                    cls.__dict__["__next__"],
                    lambda it: f"paddle.io.DataLoader#{type(it).__name__}.__next__"))
        for cls in _subclasses(paddle.optimizer.Optimizer):
            for method in _OPTIMIZER_METHODS:
                if method in cls.__dict__:
                    self._patches.patch(cls, method, self._optimizer_call(cls.__dict__[method], method))
        executor = paddle.static.Executor
        runs = StaticRuns(self.kinds, self.on_optimizer_step)
        self._patches.patch(executor, "run", runs.run(executor.__dict__["run"]))
        self._patches.patch(executor, "_pir_feed_data", runs.feed(executor.__dict__["_pir_feed_data"]))

    def _optimizer_call(self, original: Callable[..., Any], method: str) -> Callable[..., Any]:
        """An optimizer's `method` as an event; a step's parameters, gradients and state
        told after it, before the gradients are cleared."""
        recorded = _named_by_self(original, lambda optimizer: (f"Optimizer.{method}#"
                                                        f"{type(optimizer).__name__}.{method}"))
        events = self

        def stepped(optimizer: Any, *args: Any, **kwargs: Any) -> Any:
            if not paddle.in_dynamic_mode():  # building a static program: no step yet
                return original(optimizer, *args, **kwargs)
            result = recorded(optimizer, *args, **kwargs)
            if method == "clear_grad":
                return result
            events.kinds.note_optimizer(optimizer)
            events.kinds.scan_step(optimizer)
            if events.on_optimizer_step is not None:
                events.on_optimizer_step()
            return result

        stepped.__wrapped__ = original  # type: ignore[attr-defined]
        return stepped

    def _backward_call(self, original: Callable[..., Any], name: str) -> Callable[..., Any]:
        """A backward pass (Tensor.backward, paddle.autograd.backward, paddle.grad) as the
        event `name`; the layers' backward events it opened end with it."""
        recorded = scoped(original, name, then=self._backward.end)

        def pass_(*args: Any, **kwargs: Any) -> Any:
            if not paddle.in_dynamic_mode():  # paddle.grad building a static program
                return original(*args, **kwargs)
            return recorded(*args, **kwargs)

        pass_.__wrapped__ = original  # type: ignore[attr-defined]
        return pass_

    def _layer_call(self, original: Callable[..., Any]) -> Callable[..., Any]:
        events = self

        def __call__(layer: Any, *args: Any, **kwargs: Any) -> Any:
            stack = getattr(events._open, "calls", None)
            if stack is None:
                stack = events._open.calls = []
            calls = events._called(layer, stack[-1] if stack else None)
            stack.append((layer, calls))
            try:
                with calls.event:
                    output = original(layer, *args, **kwargs)
                events._backward.note_call(calls.hooks,
                                        args + tuple(kwargs.values()) if kwargs else args,
                                        output)
                return output
            finally:
                stack.pop()

        return __call__

    def remove(self) -> None:
        self._backward.remove()
        self._patches.restore()
