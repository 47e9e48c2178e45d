"""``python3 -m paddle_prof run``: the PaddlePaddle bridge, installed as the program
imports paddle (its ops as events, its allocator's memory tracked and split by kind, its
layers, a step at each optimizer step and its phases), with no change to the program. A program that never imports paddle never loads it."""

from __future__ import annotations

import warnings

from paddle_prof.on_import import when_imported


def install_when_imported() -> None:
    """Installs paddle_prof.paddle's bridge as soon as the program imports paddle (at once
    if it already has): the running implicit profile then records Paddle's ops and
    memory, as a window of the program's own would."""

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
