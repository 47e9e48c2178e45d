"""paddle_prof for PaddlePaddle 3.x programs, in eager and static mode alike.

``import paddle_prof.paddle`` imports paddle and hooks the calls Paddle makes to its own
profiler's entry points (whether that profiler runs or not): from then on every Paddle
op run in a window is an event named by the op (``matmul``, its gradient
``matmul_grad``, ``adam_``; ``pd_op.matmul`` of a static program is ``matmul`` too), and
every allocation and free of Paddle's allocator is tracked on its place (``CPU``,
``CUDA:<n>``) and charged to the op open on its thread: exact per-op peak and live bytes.
``paddle_prof.paddle.profiler`` is ``paddle_prof.profiler`` with the layers and step
phases of layers.py; ``reset_profiler()``,
schedules, reports, traces, summaries, diff, merge and the pytest markers work on it as
on any window (paddle_prof/_paddle_bridge, python/paddle_bridge.cc).

A Paddle this bridge was not made for is an ImportError naming its version, never a
crash: the entry points and the layouts it reads are Paddle 3.x's.
"""

from __future__ import annotations

from typing import Any, Optional

import paddle

from paddle_prof import _core, _paddle_bridge
from paddle_prof.paddle.layers import LayerEvents
from paddle_prof.paddle.memory import MemoryKinds
from paddle_prof.profiler import implicit_window_ending
from paddle_prof.profiler import profiler as _base_profiler

__all__ = ["profiler", "SERVED"]

# The Paddle major versions whose entry points and layouts the bridge reads.
SERVED = (3,)


def _major(version: str) -> int:
    try:
        return int(version.split(".")[0])
    except ValueError:
        return -1


def _install() -> None:
    version = getattr(paddle, "__version__", "unknown")
    # A build from source says 0.0.0; it is taken for what its entry points say.
    if version != "0.0.0" and _major(version) not in SERVED:
        raise ImportError(f"paddle_prof.paddle serves PaddlePaddle {', '.join(map(str, SERVED))}"
                          f".x; this is PaddlePaddle {version}")
    missing = _paddle_bridge.install()
    if missing:
        raise ImportError(f"paddle_prof.paddle cannot profile PaddlePaddle {version}: its "
                          f"profiler's entry points were not found ({', '.join(missing)})")


_install()


class profiler(_base_profiler):  # noqa: N801 (the API's name)
    """paddle_prof.profiler for PaddlePaddle programs: the same arguments, plus
    ``modules`` (default True), which makes each ``paddle.nn.Layer`` call an event
    ``nn.Layer: <path>``, and its gradient computation ``nn.Layer: <path>.backward``, so
    that ops nest under their layer and ``report.modules`` gives each layer's calls,
    time, parameters and memory. Each step's time splits into phases
    (``steps[i].phases_ms``: forward, the root layers' calls; backward,
    ``Tensor.backward``, ``paddle.autograd.backward``, ``paddle.grad``; optimizer, an
    optimizer's ``step``, ``clear_grad`` and ``minimize``; data, a DataLoader's next
    batch or a static program's feed; other), and ``prof.step(num_samples=N)`` gives the
    throughput."""

    def __init__(self, state: str = "CPU", sorted_key: Optional[str] = None,
                 profile_path: Optional[str] = None, *, modules: bool = True,
                 **options: Any) -> None:
        super().__init__(state, sorted_key, profile_path, **options)
        self.modules = bool(modules)
        self._events: Optional[LayerEvents] = None
        self._kinds: Optional[MemoryKinds] = None

    def __enter__(self) -> "profiler":
        super().__enter__()
        self._kinds = MemoryKinds()
        self._events = LayerEvents(self.modules, self._kinds)
        try:
            self._events.install()
        except BaseException:
            self._events.remove()
            self._events = None
            super().__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info: object) -> bool:
        if self._events is not None:
            self._events.remove()
            self._events = None
        return super().__exit__(*exc_info)

    def _start(self) -> None:
        super()._start()
        # Each window, as a schedule opens them; Paddle names its ops plainly.
        _core.set_memory_categories(True, plain_op_names=True)

    def _before_stop(self) -> None:
        if self._kinds is not None:
            self._kinds.scan()  # parameters and state made since the last step too

    def step(self, num_samples: Optional[int] = None) -> None:
        if self._kinds is not None and self._recording:
            self._kinds.scan()  # the step's gradients and state, before they are freed
        super().step(num_samples)


def attach_to_implicit_window() -> None:
    """``python3 -m paddle_prof run``: the implicit window gets what a window of
    paddle_prof.paddle.profiler() has (layers, phases, memory kinds), and a step at each
    optimizer step, since the program marks none. They end with it (as it stops, the
    kinds told first) or as the program's own profiler takes over."""
    _core.set_memory_categories(True, plain_op_names=True)
    kinds = MemoryKinds()
    events = LayerEvents(True, kinds, on_optimizer_step=_core.mark_step)

    def end(stopping: bool) -> None:
        if stopping:
            kinds.scan()
        events.remove()
        implicit_window_ending.remove(end)

    events.install()
    implicit_window_ending.append(end)
