"""The model's view under paddle_prof.torch.profiler: every nn.Module call an event
``nn.Module: <path>``, and the gradient computation of its outputs an event
``nn.Module: <path>.backward``, so that ops nest under the layer that ran them.

``<path>`` is the root module's class name and the attribute path from it
(``ResNet.layer1.0.conv1``), each step the name under which the calling module holds the
called one: a module shared as ``l1`` and ``seq[0]`` is ``Net.l1`` when the root calls it
and ``Net.seq.0`` when ``seq`` does, and one the caller holds under two names is
``Net.{l1,l2}``. A root is a module called while no other module's forward is open on
the thread. While a window is open, Module.__call__ names each call and has
the bridge open and close its event (torch_module_calls.cc); the bridge opens the backward
events around the autograd nodes of each module's ops.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import torch

from paddle_prof import _torch_bridge
from paddle_prof.module_paths import held_as
from paddle_prof.torch.memory import MemoryKinds, mark_inputs

# True while torch.compile traces (torch 2.x): module calls then record nothing, so that
# the compiled graph holds no call into the profiler; the calls it runs are recorded as ops.
_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)
_enter_call = _torch_bridge.enter_call
_exit_call = _torch_bridge.exit_call


def _register(module: torch.nn.Module, path: str, parent: int) -> int:
    """The bridge's index of ``path``, which tells the report the module's type and
    parameters (children included)."""
    params = param_bytes = 0
    for p in module.parameters():
        params += p.numel()
        param_bytes += p.numel() * p.element_size()
    return _torch_bridge.register_module(path, parent, type(module).__name__, params,
                                         param_bytes)


def _held_as(caller: torch.nn.Module, module: torch.nn.Module) -> str:
    return held_as(caller._modules.items(),
                   lambda: caller.named_modules(remove_duplicate=False), module)


class ModuleEvents:
    """Records module calls for one profiling window (install) until remove().

    The bridge keeps each thread's open calls and a cache of names by (root, module)
    (torch_module_calls.cc); it asks _name only for a pair it has not seen this window.
    """

    def __init__(self, kinds: MemoryKinds) -> None:
        self._paths: Dict[int, str] = {}  # by bridge index, for children named under one
        self._original_call: Optional[Any] = None
        self._kinds = kinds  # told of each root, whose parameters it marks

    def _name(self, module: torch.nn.Module, root: torch.nn.Module, parent: int,
              caller: Optional[torch.nn.Module]) -> int:
        """The bridge index of ``module`` called under ``root`` by the module ``caller``
        (None: ``module`` is the root), whose call has the index ``parent`` (-1: none, or
        one past the bridge's bound)."""
        if caller is None:
            path, parent = type(root).__name__, -1
            self._kinds.note_root(root)
        else:
            parent_path = self._paths.get(parent, type(root).__name__)
            path = f"{parent_path}.{_held_as(caller, module)}"
        index = _register(module, path, parent)
        if index >= 0:
            self._paths[index] = path
        return index

    @staticmethod
    def _call_recording(original: Any) -> Any:
        """Module.__call__ that opens the call's event and closes it however forward
        ends. Global module hooks would do it too, at twice the cost: with any, torch
        leaves its fast path for every module; and before 2.0 no hook runs when forward
        raises."""

        def __call__(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            if _compiling():
                return original(module, *args, **kwargs)
            depth = _enter_call(module)
            if depth < 0:
                return original(module, *args, **kwargs)
            if depth == 0:
                mark_inputs(args, kwargs)
            try:
                return original(module, *args, **kwargs)
            finally:
                _exit_call(depth)

        return __call__

    @staticmethod
    def end_backward() -> None:
        """The backward pass returned on this thread: its modules' backward ended."""
        _torch_bridge.end_module_backward()

    def install(self) -> None:
        _torch_bridge.forget_module_names()  # each window notes its modules anew
        _torch_bridge.set_module_namer(self._name)
        self._original_call = torch.nn.Module.__call__
        torch.nn.Module.__call__ = self._call_recording(self._original_call)

    def remove(self) -> None:
        """Puts Module.__call__ back; the calls still open on this thread end now."""
        if self._original_call is not None:
            torch.nn.Module.__call__ = self._original_call
            self._original_call = None
        _torch_bridge.set_module_namer(None)
        _torch_bridge.forget_module_names()
        _exit_call(0)
        self.end_backward()
