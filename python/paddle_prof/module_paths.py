"""How a module call is named, for every framework: the root's class name, then at each
step the name under which the calling module holds the called one (PyTorch's
``Module._modules``, PaddlePaddle's ``Layer._sub_layers``)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Tuple

Named = Iterable[Tuple[str, Any]]


def held_as(children: Named, descendants: Callable[[], Named], module: Any) -> str:
    """The name under which a caller holds ``module``: among its ``children`` (name,
    module), or else the shortest of its ``descendants`` paths (a caller that calls a
    grandchild); each, as ``{l1,l2}``, where it holds the module under several; the
    module's type for one it does not hold (made or passed in during the forward)."""
    names = [name for name, child in children if child is module]
    if not names:
        paths = [name for name, m in descendants() if m is module and name]
        shortest = min((p.count(".") for p in paths), default=0)
        names = [p for p in paths if p.count(".") == shortest]
    if not names:
        return type(module).__name__
    return names[0] if len(names) == 1 else "{" + ",".join(names) + "}"
