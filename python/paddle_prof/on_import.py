"""A step run as soon as the program imports a framework (at once if it already has):
how ``paddle-prof run`` installs its PyTorch and PaddlePaddle bridges with no change to
the program, and without loading a framework the program never imports."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import warnings
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


def install_torch_when_imported(state: str) -> None:
    """Installs paddle_prof.torch's bridge on the running implicit profile as soon as the
    program imports torch (at once if it already has): ATen ops as events, tensor memory
    tracked, its kinds, module and backward events, a step at each optimizer step."""

    def install() -> None:
        try:
            from paddle_prof import _core, children
            from paddle_prof import torch as paddle_prof_torch  # checks the bridge's torch
            from paddle_prof import _torch_bridge

            if not _core.implicit_profiler_running():
                return  # the program's own profiler took over, and installs its own
            if not _torch_bridge.install(False):
                warnings.warn("paddle_prof run: c10's CPU allocator could not be wrapped; "
                              "ops are profiled but tensor memory is not tracked",
                              RuntimeWarning)
            paddle_prof_torch.track_cuda_memory(state)
            paddle_prof_torch.attach_to_implicit_window()
            # A spawned child's ops too.
            children.framework_child_start = (paddle_prof_torch.start_in_child, False)
        except Exception as e:  # the program runs on, profiled without torch's ops
            warnings.warn(f"paddle_prof run: PyTorch's ops are not profiled: {e!r}",
                          RuntimeWarning)

    when_imported("torch", install)


def install_paddle_when_imported() -> None:
    """Installs paddle_prof.paddle's bridge as soon as the program imports paddle (at once
    if it already has): the running implicit profile then records Paddle's ops and
    memory, its layers, a step at each optimizer step and its phases, as a window of the
    program's own would."""

    def install() -> None:
        try:
            from paddle_prof import _core
            from paddle_prof import paddle as paddle_prof_paddle  # installs the bridge

            if _core.implicit_profiler_running():  # else the program's own took over
                paddle_prof_paddle.attach_to_implicit_window()
        except Exception as e:  # the program runs on, profiled without Paddle's ops
            warnings.warn(f"paddle_prof run: PaddlePaddle's ops are not profiled: {e}",
                          RuntimeWarning)

    when_imported("paddle", install)
