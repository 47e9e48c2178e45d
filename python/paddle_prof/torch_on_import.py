"""``python3 -m paddle_prof run``: the PyTorch integration, installed as the program
imports torch (ATen ops as events, tensor memory tracked, its kinds, module and backward
events, a step at each optimizer step), with no change to the program. A program that
never imports torch never loads it.
"""

from __future__ import annotations

import warnings

from paddle_prof.on_import import when_imported


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
            paddle_prof_torch.track_cuda_memory(state)
            paddle_prof_torch.attach_to_implicit_window()
            # A spawned child's ops too.
            children.framework_child_start = (paddle_prof_torch.start_in_child, False)
        except Exception as e:  # the program runs on, profiled without torch's ops
            warnings.warn(f"paddle_prof run: PyTorch's ops are not profiled: {e!r}",
                          RuntimeWarning)

    when_imported("torch", install)
