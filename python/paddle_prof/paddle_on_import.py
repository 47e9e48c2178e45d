"""``python3 -m paddle_prof run``: the PaddlePaddle bridge, installed as the program
imports paddle (its ops as events, its allocator's memory tracked), with no change to
the program. A program that never imports paddle never loads it."""

from __future__ import annotations

import warnings

from paddle_prof.on_import import when_imported


def install_when_imported() -> None:
    """Installs paddle_prof.paddle's bridge as soon as the program imports paddle (at once
    if it already has): the running implicit profile then records Paddle's ops and
    memory, as a window of the program's own would."""

    def install() -> None:
        try:
            import paddle_prof.paddle  # noqa: F401 (importing it installs the bridge)
        except Exception as e:  # the program runs on, profiled without Paddle's ops
            warnings.warn(f"paddle_prof run: PaddlePaddle's ops are not profiled: {e}",
                          RuntimeWarning)

    when_imported("paddle", install)
