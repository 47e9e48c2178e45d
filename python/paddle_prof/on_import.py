"""A step run as soon as the program imports a framework (at once if it already has):
how ``python3 -m paddle_prof run`` installs its bridges with no change to the program,
and without loading a framework the program never imports."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from typing import Any, Callable, Optional, Sequence


class _Imported(importlib.abc.MetaPathFinder):
    """Finds `name` as the path finder does, and has `then` run once it has loaded."""

    def __init__(self, name: str, then: Callable[[], None]) -> None:
        self.name = name
        self.then = then

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # once
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load = spec.loader.exec_module
        then = self.then

        def exec_module(module: Any) -> None:
            load(module)
            then()

        spec.loader.exec_module = exec_module  # this spec's loader only
        return spec


def when_imported(name: str, then: Callable[[], None]) -> None:
    """Runs `then` as soon as the top-level package `name` has been imported."""
    if name in sys.modules:
        then()
    else:
        sys.meta_path.insert(0, _Imported(name, then))
