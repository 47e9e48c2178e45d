"""The model's view under paddle_prof.torch.profiler: every nn.Module call an event
``nn.Module: <path>``, and the gradient computation of its outputs an event
``nn.Module: <path>.backward``, so that ops nest under the layer that ran them.

``<path>`` is the root module's class name and the attribute path from it
(``ResNet.layer1.0.conv1``); a root is a module called while no other module's forward
is open on the thread. Global module hooks name each call and have the bridge open and
close its event (torch_modules.cc); the bridge opens the backward events around the
autograd nodes of each module's ops.
"""

from __future__ import annotations

import inspect
import threading
import weakref
from typing import Any, Dict, List, Optional, Tuple

import torch

from paddle_prof import _core, _torch_bridge

# True while torch.compile traces (torch 2.x): the hooks then do nothing, so that the
# compiled graph holds no call into the profiler; the calls it runs are recorded as ops.
_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)


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
    """Installs the global hooks for one profiling window, and removes them."""

    def __init__(self) -> None:
        self._local = threading.local()
        # By root: {id(module): (path, bridge index)} for the modules called under it.
        self._roots: "weakref.WeakKeyDictionary[torch.nn.Module, Dict[int, Tuple[str, int]]]" = (
            weakref.WeakKeyDictionary())
        self._handles: List[Any] = []
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
        names = self._roots.get(root)
        if names is None:
            names = self._roots[root] = {}
        name = names.get(id(module))
        if name is not None:
            return name
        if module is root:
            path, parent = type(root).__name__, -1
        else:
            # The attribute path from the root; a module that is not the root's (made or
            # passed in during the forward) is named under the module that called it.
            attribute = next((n for n, m in root.named_modules() if m is module), None)
            _, parent_path, parent, _ = open_calls[-1]
            path = (f"{type(root).__name__}.{attribute}" if attribute
                    else f"{parent_path}.{type(module).__name__}")
        name = names[id(module)] = (path, _register(module, path, parent))
        return name

    def _pre(self, module: torch.nn.Module, args: Any) -> None:
        if _compiling() or not _core.is_enabled():
            return
        open_calls = self._open()
        path, index = self._name(module, open_calls)
        open_calls.append((module, path, index, _torch_bridge.enter_module(index)))

    def _post(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if _compiling():
            return
        open_calls = self._open()
        i = len(open_calls) - 1
        while i >= 0 and open_calls[i][0] is not module:
            i -= 1
        if i >= 0:  # else its pre-hook ran while the profiler was off
            self._close(open_calls, i)

    @staticmethod
    def _close(open_calls: List[Tuple[torch.nn.Module, str, int, int]], i: int) -> None:
        """Ends call ``i`` and those above it (a forward that raised before torch 2.0,
        which then calls no forward hook)."""
        _torch_bridge.exit_module(open_calls[i][3])
        del open_calls[i:]

    def _call_closing_on_raise(self, original: Any) -> Any:
        """Module.__call__ for a torch whose forward hooks are not called when forward
        raises: ends the calls the exception left open."""
        events = self

        def __call__(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            open_calls = events._open()
            depth = len(open_calls)
            try:
                return original(module, *args, **kwargs)
            except BaseException:
                if len(open_calls) > depth:
                    events._close(open_calls, depth)
                raise

        return __call__

    @staticmethod
    def end_backward() -> None:
        """The backward pass returned on this thread: its modules' backward ended."""
        _torch_bridge.end_module_backward()

    def install(self) -> None:
        hooks = torch.nn.modules.module
        self._handles.append(hooks.register_module_forward_pre_hook(self._pre))
        if "always_call" in inspect.signature(hooks.register_module_forward_hook).parameters:
            self._handles.append(hooks.register_module_forward_hook(self._post, always_call=True))
        else:
            self._handles.append(hooks.register_module_forward_hook(self._post))
            self._original_call = torch.nn.Module.__call__
            torch.nn.Module.__call__ = self._call_closing_on_raise(self._original_call)

    def remove(self) -> None:
        """Removes the hooks; the calls still open on this thread end now."""
        for handle in self._handles:
            handle.remove()
        self._handles = []
        if self._original_call is not None:
            torch.nn.Module.__call__ = self._original_call
            self._original_call = None
        open_calls = self._open()
        if open_calls:
            self._close(open_calls, 0)
        self.end_backward()
