"""The model's view under paddle_prof.torch.profiler: every nn.Module call an event
``nn.Module: <path>``, and the gradient computation of its outputs an event
``nn.Module: <path>.backward``, so that ops nest under the layer that ran them.

``<path>`` is the root module's class name and the attribute path from it
(``ResNet.layer1.0.conv1``); a root is a module called while no other module's forward
is open on the thread. While a window is open, Module.__call__ names each call and has
the bridge open and close its event (torch_modules.cc); the bridge opens the backward
events around the autograd nodes of each module's ops.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Dict, List, Optional, Tuple

import torch

from paddle_prof import _core, _torch_bridge

# True while torch.compile traces (torch 2.x): module calls then record nothing, so that
# the compiled graph holds no call into the profiler; the calls it runs are recorded as ops.
_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)
_is_enabled = _core.is_enabled
_enter_module = _torch_bridge.enter_module


def _register(module: torch.nn.Module, path: str, parent: int) -> int:
    """The bridge's index of ``path``, which tells the report the module's type and
    parameters (children included)."""
    params = param_bytes = 0
    for p in module.parameters():
        params += p.numel()
        param_bytes += p.numel() * p.element_size()
    return _torch_bridge.register_module(path, parent, type(module).__name__, params,
                                         param_bytes)


class ModuleEvents:
    """Records module calls for one profiling window (install) until remove()."""

    def __init__(self) -> None:
        self._local = threading.local()
        # By (id(root), id(module)): the module's path and bridge index as that root names
        # it, with weak references that tell a live entry from one whose ids were reused.
        self._names: Dict[Tuple[int, int], Tuple[Any, Any, str, int]] = {}
        self._original_call: Optional[Any] = None

    def _open(self) -> List[Tuple[torch.nn.Module, str, int, int]]:
        """This thread's open forward calls, outermost first: (module, path, index,
        the depth its event closes at)."""
        local = self._local
        try:
            return local.open
        except AttributeError:
            local.open = []
            return local.open

    def _name(self, module: torch.nn.Module,
              open_calls: List[Tuple[torch.nn.Module, str, int, int]]) -> Tuple[str, int]:
        root = open_calls[0][0] if open_calls else module
        key = (id(root), id(module))
        known = self._names.get(key)
        if known is not None and known[0]() is root and known[1]() is module:
            return known[2], known[3]
        if module is root:
            path, parent = type(root).__name__, -1
        else:
            # The attribute path from the root; a module that is not the root's (made or
            # passed in during the forward) is named under the module that called it.
            attribute = next((n for n, m in root.named_modules() if m is module), None)
            _, parent_path, parent, _ = open_calls[-1]
            path = (f"{type(root).__name__}.{attribute}" if attribute
                    else f"{parent_path}.{type(module).__name__}")
        index = _register(module, path, parent)
        self._names[key] = (weakref.ref(root), weakref.ref(module), path, index)
        return path, index

    @staticmethod
    def _close(open_calls: List[Tuple[torch.nn.Module, str, int, int]], i: int) -> None:
        """Ends call ``i`` and those above it."""
        _torch_bridge.exit_module(open_calls[i][3])
        del open_calls[i:]

    def _call_recording(self, original: Any) -> Any:
        """Module.__call__ that opens the call's event and closes it however forward
        ends. Global module hooks would do it too, at twice the cost: with any, torch
        leaves its fast path for every module; and before 2.0 no hook runs when forward
        raises."""
        events = self

        def __call__(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            if _compiling() or not _is_enabled():
                return original(module, *args, **kwargs)
            open_calls = events._open()
            depth = len(open_calls)
            path, index = events._name(module, open_calls)
            open_calls.append((module, path, index, _enter_module(index)))
            try:
                return original(module, *args, **kwargs)
            finally:
                if len(open_calls) > depth:
                    events._close(open_calls, depth)

        return __call__

    @staticmethod
    def end_backward() -> None:
        """The backward pass returned on this thread: its modules' backward ended."""
        _torch_bridge.end_module_backward()

    def install(self) -> None:
        self._original_call = torch.nn.Module.__call__
        torch.nn.Module.__call__ = self._call_recording(self._original_call)

    def remove(self) -> None:
        """Puts Module.__call__ back; the calls still open on this thread end now."""
        if self._original_call is not None:
            torch.nn.Module.__call__ = self._original_call
            self._original_call = None
        open_calls = self._open()
        if open_calls:
            self._close(open_calls, 0)
        self.end_backward()
