"""The step boundaries of a listening process: ``paddle_prof.mark_step()`` (and
``prof.step()``), and, for a program that marks none, each ``optimizer.step()`` of torch
or Paddle. A window asked for from outside opens and closes at them (listener.py).

Counting costs an increment per step. The optimizers are watched from the moment their
framework is imported (never importing it): torch 2.x has a global post-hook for every
optimizer; on torch 1.13 and Paddle, the ``step`` of each optimizer class is wrapped.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, List

from paddle_prof.on_import import when_imported

marks = 0            # mark_step() calls
optimizer_steps = 0  # optimizer steps seen since the optimizers were watched

# Called at each boundary, with True for an optimizer's step and False for a mark, while
# a window asked for from outside waits for one or records.
waiting: List[Callable[[bool], None]] = []


def marked() -> None:
    global marks
    marks += 1
    if waiting:
        for call in list(waiting):
            call(False)


def optimizer_stepped(*_: Any) -> None:
    global optimizer_steps
    optimizer_steps += 1
    if waiting:
        for call in list(waiting):
            call(True)


def steps() -> int:
    """Steps so far: the marks, or for a program that marks none, its optimizer steps."""
    return marks or optimizer_steps


def _wrap_steps(base: type) -> None:
    """Has the own ``step`` of `base` and of each of its subclasses call
    optimizer_stepped() once it returns."""
    def calling(method: Callable) -> Callable:
        @functools.wraps(method)
        def step(self, *args, **kwargs):
            result = method(self, *args, **kwargs)
            optimizer_stepped()
            return result
        return step

    pending = [base]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        own = cls.__dict__.get("step")
        if own is not None and not getattr(own, "_paddle_prof_counts_steps", False):
            wrapped = calling(own)
            wrapped._paddle_prof_counts_steps = True
            setattr(cls, "step", wrapped)


def _watch_torch() -> None:
    import torch.optim.optimizer as optimizer

    register = getattr(optimizer, "register_optimizer_step_post_hook", None)
    if register is not None:  # torch >= 2.0: every optimizer, its subclasses made later too
        register(optimizer_stepped)
    else:
        _wrap_steps(optimizer.Optimizer)


def _watch_paddle() -> None:
    import paddle

    _wrap_steps(paddle.optimizer.Optimizer)


_watching = False


def watch_optimizers() -> None:
    """Counts the optimizer steps of torch and Paddle, once each is imported."""
    global _watching
    if _watching:
        return
    _watching = True
    when_imported("torch", _warning_on_failure("torch", _watch_torch))
    when_imported("paddle", _warning_on_failure("Paddle", _watch_paddle))


def _warning_on_failure(framework: str, watch: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        try:
            watch()
        except Exception as e:  # an unusual build: its steps are not boundaries, marks still are
            warnings.warn(f"paddle_prof: cannot watch {framework}'s optimizer steps ({e!r}): "
                          "a window asked for from outside opens and ends at "
                          "paddle_prof.mark_step() only", RuntimeWarning, stacklevel=2)
    return run
