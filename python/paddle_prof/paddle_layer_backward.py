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
it did.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Tuple

from paddle_prof import _paddle_bridge

Chain = Tuple[int, ...]  # the event names (bridge handles) of a call and its callers


def _needing_gradients(value: Any) -> List[Any]:
    """The tensors in `value` (one, or a tuple, list or dict of them) that need a
    gradient."""
    if isinstance(value, dict):
        value = list(value.values())
    values = value if isinstance(value, (tuple, list)) else (value,)
    return [v for v in values if hasattr(v, "register_hook") and not v.stop_gradient]


class LayerBackward:
    """The hooks of one window's layer calls; on between install() and remove()."""

    def __init__(self) -> None:
        self._names: Dict[str, int] = {}

    def install(self) -> None:
        _paddle_bridge.set_layer_backward(True)

    def remove(self) -> None:
        _paddle_bridge.set_layer_backward(False)

    def name(self, path: str) -> int:
        """The handle of ``nn.Layer: <path>.backward``."""
        handle = self._names.get(path)
        if handle is None:
            handle = self._names[path] = _paddle_bridge.layer_event_name(path)
        return handle

    def note_call(self, chain: Chain, inputs: Iterable[Any], output: Any) -> None:
        """After a forward call of the layer at chain[-1]. A tensor it returned as it was
        given (an identity, a layer that passes it on) is neither: no gradient of the
        layer's own flows through it."""
        outputs = _needing_gradients(output)
        if not outputs:
            return  # no gradient will flow through it (paddle.no_grad, eval)
        given = [t for value in inputs for t in _needing_gradients(value)]
        passed = {id(t) for t in given} & {id(t) for t in outputs}
        chain_list = list(chain)
        for tensor in outputs:
            if id(tensor) not in passed:
                tensor.register_hook(
                    lambda _grad: _paddle_bridge.open_layer_backward(chain_list))
        for tensor in given:
            if id(tensor) not in passed:
                tensor.register_hook(
                    lambda _grad: _paddle_bridge.close_layer_backward(chain_list))

    @staticmethod
    def end() -> None:
        """The backward pass returned on this thread: its layers' backward ended."""
        _paddle_bridge.end_layer_backward()
