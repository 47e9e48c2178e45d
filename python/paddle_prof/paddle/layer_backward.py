"""A PaddlePaddle layer's gradient computation as an event ``nn.Layer: <path>.backward``,
so that the backward pass's ops nest under the layer whose forward made them, as
PyTorch's do under ``nn.Module: <path>.backward``.

Paddle's grad nodes carry nothing that names the forward call that made them, so the
events follow the gradients instead: after a layer's forward, a hook on each of its
outputs that needs a gradient opens its backward event (and its callers', outermost
first) once that output's gradient is complete, as the grad node that made the output
begins; a hook on each of its inputs that needs one closes it once the input's gradient
is complete, as the node that made the input begins, the layer's own nodes having run.
A layer whose inputs need no gradient (the first, fed data) stays open until another
layer's opens or the backward pass returns (``end``). Paddle runs a node's hooks inside
the node, so the bridge holds the node's event until they have run
(python/paddle_bridge.cc): the node is then inside the layer events, which begin when
it did. The hooks are the bridge's functions bound to a chain's id: no Python frame
runs in the backward pass. A hook another makes redundant is not registered (each
costs about a microsecond): an output whose inner layer's call opened it already, an
input that another call's output hook opens (closing this call's event as it does).
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import paddle

from paddle_prof import _paddle_bridge


class Hooks(NamedTuple):
    """The hooks of one layer's calls by one chain of callers."""
    paths: Tuple[str, ...]  # the callers' paths, outermost first, then the layer's own
    open: Callable[[Any], None]
    close: Callable[[Any], None]


_PURGE_AT = 4096  # outputs noted on a thread past which dead ones are dropped


def _needing_gradients(value: Any) -> List[Any]:
    """The tensors in `value` (one, or a tuple, list or dict of them) that need a
    gradient."""
    if isinstance(value, paddle.Tensor):  # the common case, first
        return [] if value.stop_gradient else [value]
    if isinstance(value, dict):
        value = list(value.values())
    values = value if isinstance(value, (tuple, list)) else (value,)
    return [v for v in values if isinstance(v, paddle.Tensor) and not v.stop_gradient]


class LayerBackward:
    """The hooks of one window's layer calls; on between install() and remove()."""

    def __init__(self) -> None:
        # Each thread's tensors with an open hook since its last backward pass: their
        # paths, by id, with a weak reference to tell a tensor from a later one at the
        # same address; and the count past which dead ones are dropped.
        self._opened = threading.local()

    def _opened_here(self) -> Dict[int, Tuple["weakref.ref[Any]", Tuple[str, ...]]]:
        opened = getattr(self._opened, "tensors", None)
        if opened is None:
            opened = self._opened.tensors = {}
            self._opened.purge_at = _PURGE_AT
        return opened

    def install(self) -> None:
        _paddle_bridge.set_layer_backward(True)

    def remove(self) -> None:
        _paddle_bridge.set_layer_backward(False)

    @staticmethod
    def hooks(paths: Tuple[str, ...]) -> Hooks:
        """The hooks of the calls of the layer at paths[-1] by its callers paths[:-1]."""
        chain = _paddle_bridge.register_layer_chain(list(paths))
        return Hooks(paths, functools.partial(_paddle_bridge.open_layer_backward, chain),
                     functools.partial(_paddle_bridge.close_layer_backward, chain))

    def note_call(self, hooks: Hooks, args: Tuple[Any, ...], output: Any) -> None:
        """After a forward call with `hooks` (hooks()) of `args`. A tensor it returned as
        it was given (an identity, a layer that passes it on) is neither: no gradient of
        the layer's own flows through it."""
        outputs = _needing_gradients(output)
        if not outputs:
            return  # no gradient will flow through it (paddle.no_grad, eval)
        given = [t for value in args for t in _needing_gradients(value)]
        passed = {id(t) for t in given} & {id(t) for t in outputs} if given else ()
        opened = self._opened_here()

        def opened_by(tensor: Any) -> Optional[Tuple[str, ...]]:
            """The paths of the call whose open hook `tensor` has, if any."""
            known = opened.get(id(tensor))
            return known[1] if known is not None and known[0]() is tensor else None

        for tensor in given:
            if id(tensor) not in passed and opened_by(tensor) is None:
                tensor.register_hook(hooks.close)
        depth = len(hooks.paths)
        for tensor in outputs:
            if id(tensor) in passed:
                continue
            inner = opened_by(tensor)
            if inner is not None and inner[:depth] == hooks.paths:
                continue  # a call inside this one opens it, and this one around it
            tensor.register_hook(hooks.open)
            opened[id(tensor)] = (weakref.ref(tensor), hooks.paths)
        if len(opened) > self._opened.purge_at:  # a forward of many outputs, or no backward
            for key in [k for k, (ref, _) in opened.items() if ref() is None]:
                del opened[key]
            self._opened.purge_at = max(_PURGE_AT, 2 * len(opened))

    def end(self) -> None:
        """The backward pass returned on this thread: its layers' backward ended, and the
        hooks of the outputs it ran through with it."""
        _paddle_bridge.end_layer_backward()
        self._opened_here().clear()
