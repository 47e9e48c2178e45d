"""paddle_prof for PyTorch: every ATen op an event, every CPU tensor's memory tracked (and,
with state 'GPU' or 'All' on a CUDA build, every GPU tensor's).

Example::

    import paddle_prof.torch

    with paddle_prof.torch.profiler('CPU', 'total', record_shapes=True) as prof:
        for it in range(10):
            if it == 2:
                paddle_prof.reset_profiler()
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            paddle_prof.mark_step()
    # rows such as aten::conv2d [[32, 1, 28, 28], [8, 1, 3, 3], [8], [], [], [], []]
"""

from __future__ import annotations

import functools
import warnings
from typing import Callable, List, Optional, TextIO, Tuple

import torch  # noqa: F401  (loads libtorch before the bridge that links it)

from paddle_prof.profiler import mark_step
from paddle_prof.profiler import profiler as _base_profiler

try:
    from paddle_prof import _torch_bridge
except ImportError as e:  # built without libtorch-dev
    raise ImportError("paddle_prof was built without PyTorch support (CMake did not find "
                      "Torch; install libtorch-dev and rebuild)") from e


_warned_cuda = False


def _track_cuda_memory(state: str) -> None:
    """Has the CUDA caching allocator report every GPU tensor's block: with a GPU state,
    and with 'CPU' too once the program uses CUDA (a CPU profile does not start CUDA on
    its own). Warns once when it cannot."""
    global _warned_cuda
    if not torch.cuda.is_available():
        return
    gpu_state = state in ("GPU", "All")
    if not gpu_state and not torch.cuda.is_initialized():
        return
    if _torch_bridge.WITH_CUDA:
        torch.cuda.init()  # the tracker attaches to the per-device allocators init creates
        if _torch_bridge.install_cuda():
            return
        reason = ("PyTorch's CUDA caching allocator takes no tracker here (another backend in "
                  "PYTORCH_CUDA_ALLOC_CONF, a pluggable allocator, or "
                  "PYTORCH_NO_CUDA_MEMORY_CACHING)")
    else:
        reason = ("paddle_prof was built without CUDA support (against a CPU-only PyTorch, or "
                  f"one older than 2.3); rebuild it against this torch {torch.__version__} "
                  "(cmake -DPython_EXECUTABLE=<this python>, with the CUDA toolkit installed)")
    if not _warned_cuda:
        _warned_cuda = True
        warnings.warn(f"paddle_prof.torch: GPU memory per op is not tracked: {reason}",
                      RuntimeWarning, stacklevel=3)


def _optimizer_classes() -> List[type]:
    classes, pending = [], [torch.optim.Optimizer]
    while pending:
        cls = pending.pop()
        classes.append(cls)
        pending.extend(cls.__subclasses__())
    return classes


def _marking(step: Callable) -> Callable:
    @functools.wraps(step)
    def marked_step(self, *args, **kwargs):
        result = step(self, *args, **kwargs)
        mark_step()
        return result

    return marked_step


def _mark_steps_on_optimizer_step() -> List[Tuple[type, Callable]]:
    """Wraps every optimizer class's own step() to call mark_step() after it; returns
    what to put back."""
    saved = []
    for cls in _optimizer_classes():
        original = cls.__dict__.get("step")
        if original is not None:
            cls.step = _marking(original)
            saved.append((cls, original))
    return saved


class profiler(_base_profiler):  # noqa: N801 (the API's name)
    """paddle_prof.profiler for PyTorch programs: the same arguments plus
    ``record_shapes``, which tags each op with its input shapes (a row per shape, as
    torch's group_by_input_shape), and ``step_on_optimizer``, which closes a step at
    every optimizer step instead of at each paddle_prof.mark_step()."""

    def __init__(self, state: str = "CPU", sorted_key: Optional[str] = None,
                 profile_path: Optional[str] = None, record_shapes: bool = False, *,
                 step_on_optimizer: bool = False, per_thread: bool = False,
                 stream: Optional[TextIO] = None) -> None:
        super().__init__(state, sorted_key, profile_path, per_thread=per_thread, stream=stream)
        self.record_shapes = record_shapes
        self.step_on_optimizer = step_on_optimizer
        self._wrapped_steps: List[Tuple[type, Callable]] = []

    def __enter__(self) -> "profiler":
        if not _torch_bridge.install(bool(self.record_shapes)):
            warnings.warn("paddle_prof.torch: c10's CPU allocator could not be wrapped; "
                          "ops are profiled but tensor memory is not tracked", RuntimeWarning)
        _track_cuda_memory(self.state)
        try:
            super().__enter__()
        except BaseException:
            _torch_bridge.remove_callback()
            raise
        if self.step_on_optimizer:
            self._wrapped_steps = _mark_steps_on_optimizer_step()
        return self

    def __exit__(self, *exc_info: object) -> bool:
        for cls, original in self._wrapped_steps:
            cls.step = original
        self._wrapped_steps = []
        try:
            return super().__exit__(*exc_info)
        finally:
            _torch_bridge.remove_callback()
