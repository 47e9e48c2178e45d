"""``python3 -m paddle_prof run``: the PyTorch integration, installed as the program
imports torch (ATen ops as events, tensor memory tracked, its kinds, module and backward
events, a step at each optimizer step), with no change to the program. A program that
never imports torch never loads it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import warnings
from typing import Any, Callable, Optional, Sequence


class _TorchImport(importlib.abc.MetaPathFinder):
    """Finds torch as the path finder does, and has `then` run once torch has loaded."""

    def __init__(self, then: Callable[[], None]) -> None:
        self.then = then

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Any = None) -> Any:
        if fullname != "torch":
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


def install_when_imported(state: str) -> None:
    """Installs paddle_prof.torch's bridge on the running implicit profile as soon as the
    program imports torch (at once if it already has)."""

    def install() -> None:
        try:
            from paddle_prof import _core, children
            from paddle_prof import torch as paddle_prof_torch

            if not _core.implicit_profiler_running():
                return  # the program's own profiler took over, and installs its own
            if not paddle_prof_torch._torch_bridge.install(False):
                warnings.warn("paddle_prof run: c10's CPU allocator could not be wrapped; "
                              "ops are profiled but tensor memory is not tracked",
                              RuntimeWarning)
            paddle_prof_torch._track_cuda_memory(state)
            paddle_prof_torch.attach_to_implicit_window()
            children.torch_record_shapes = False  # a spawned child's ops too
        except Exception as e:  # the program runs on, profiled without torch's ops
            warnings.warn(f"paddle_prof run: PyTorch's ops are not profiled: {e!r}",
                          RuntimeWarning)

    if "torch" in sys.modules:
        install()
    else:
        sys.meta_path.insert(0, _TorchImport(install))
