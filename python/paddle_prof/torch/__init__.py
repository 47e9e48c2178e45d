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
    # rows such as aten::conv2d [[32, 1, 28, 28], [8, 1, 3, 3], [8], [1, 1], [0, 0], [1, 1]]
"""

from __future__ import annotations

import functools
import gc
import re
import warnings
from typing import Any, Callable, List, Optional, TextIO, Tuple

import torch  # noqa: F401  (loads libtorch before the bridge that links it)

from paddle_prof import children as _children
from paddle_prof.profiler import implicit_window_ending as _implicit_window_ending
from paddle_prof.profiler import mark_step as _mark_step
from paddle_prof.profiler import profiler as _base_profiler
from paddle_prof.profiler import window_opening as _window_opening
from paddle_prof.report import ROW_LIMIT

try:
    from paddle_prof import _torch_build
except ImportError as e:  # built without libtorch-dev
    raise ImportError("paddle_prof was built without PyTorch support (CMake did not find "
                      "Torch; install libtorch-dev and rebuild)") from e


def _release(version: str) -> str:
    """"2.15.0+cu132" -> "2.15.0", "1.13.0a0" -> "1.13.0": what the bridge's ABI follows."""
    release = re.match(r"\d+(\.\d+){0,2}", version)
    return release.group(0) if release else version


if _release(torch.__version__) != _release(_torch_build.TORCH_VERSION):
    raise ImportError(
        f"paddle_prof.torch was built for torch {_torch_build.TORCH_VERSION}, but this is torch "
        f"{torch.__version__} ({torch.__file__}): rebuild paddle_prof against it "
        "(cmake -DPython_EXECUTABLE=<the python that imports this torch>)")

from paddle_prof import _torch_bridge  # noqa: E402  (after the version check)
from paddle_prof.torch.memory import MemoryKinds  # noqa: E402
from paddle_prof.torch.modules import ModuleEvents  # noqa: E402
from paddle_prof.torch.phases import BackwardEvents  # noqa: E402


# Every CPU tensor made in a window is tracked; those the program holds as a window opens,
# made before it (the parameters of a model built before the window, an optimizer
# stepped before it), are adopted by identity then, so that the window knows them.
# Between windows c10's blocks go untouched: importing this costs an op no more than a
# check of the profiler's flag. The walk of the program's objects (milliseconds) is left
# out when the wrapper handed out no block outside a window since the last walk: windows
# back to back skip it.
def _adopt_held_tensors() -> None:
    if _torch_bridge.take_untracked_handed_out():
        try:
            _torch_bridge.adopt_tensors(gc.get_objects())
        except BaseException:  # a KeyboardInterrupt, say: the next window walks instead
            _torch_bridge.note_untracked_handed_out()
            raise


if _torch_bridge.track_tensors():
    _window_opening.append(_adopt_held_tensors)

_warned_cuda = False
_warned_counters = False


def start_in_child(record_shapes: bool, state: str) -> None:
    """In a spawned child of a window (paddle_prof.children): its ops and tensors are
    profiled as its parent's are."""
    _torch_bridge.install(record_shapes)
    track_cuda_memory(state)


def track_cuda_memory(state: str) -> None:
    """Has every GPU tensor's memory tracked: with a GPU state, and with 'CPU' too once
    the program uses CUDA (a CPU profile does not start CUDA on its own). Each block is
    reported by a tracker on the CUDA caching allocator (torch >= 2.3); failing that, the
    allocator's statistics are read at every op. Warns once when it falls back, and once
    when GPU memory cannot be tracked at all."""
    global _warned_cuda, _warned_counters
    if not torch.cuda.is_available():
        return
    gpu_state = state in ("GPU", "All")
    if not gpu_state and not torch.cuda.is_initialized():
        return
    torch.cuda.init()  # trackers and statistics belong to the per-device allocators init makes
    if _torch_bridge.WITH_CUDA and _torch_bridge.install_cuda():
        return
    if _torch_bridge.WITH_CUDA_COUNTERS and _torch_bridge.count_cuda():
        if not _warned_counters:
            _warned_counters = True
            why = ("this torch is older than 2.3" if not _torch_bridge.WITH_CUDA else
                   "the CUDA allocator backend takes no tracker")
            warnings.warn("paddle_prof.torch: GPU memory per op comes from the CUDA allocator's "
                          f"statistics ({why}): net bytes per op are exact, a temporary shows "
                          "in an op's peak only when it sets a new high, and which op holds "
                          "live memory is inferred (newest freed first)",
                          RuntimeWarning, stacklevel=3)
        return
    if _torch_bridge.WITH_CUDA_COUNTERS:
        reason = ("PyTorch's CUDA allocator takes no tracker and keeps no statistics here (a "
                  "pluggable allocator, or PYTORCH_NO_CUDA_MEMORY_CACHING)")
    else:
        reason = ("paddle_prof was built against a CPU-only PyTorch; rebuild it against this "
                  f"torch {torch.__version__} (cmake -DPython_EXECUTABLE=<this python>, with "
                  "the CUDA toolkit installed)")
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


def _methods_calling(classes: List[type], name: str, call: Callable[[Any], None], *,
                     before: bool = False) -> List[Tuple[type, str, Callable]]:
    """Wraps the method ``name`` of each of ``classes`` that defines its own to call
    ``call(self)`` once it returns (``before``: before it runs); returns what to put
    back."""
    def calling(method: Callable) -> Callable:
        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            if before:
                call(self)
            result = method(self, *args, **kwargs)
            if not before:
                call(self)
            return result

        return wrapped

    saved = []
    for cls in classes:
        original = cls.__dict__.get(name)
        if original is not None:
            setattr(cls, name, calling(original))
            saved.append((cls, name, original))
    return saved


def _steps_calling(after: Callable[[Any], None]) -> List[Tuple[type, str, Callable]]:
    """Wraps every optimizer class's own step() to call ``after(optimizer)`` once it
    returns; returns what to put back."""
    return _methods_calling(_optimizer_classes(), "step", after)


class _WindowHooks:
    """What a window of paddle_prof.torch installs beside the bridge: the memory kinds,
    told at each optimizer step and as zero_grad() begins; module events and backward
    events; and, with ``on_optimizer_step``, a call at each optimizer step's end."""

    def __init__(self, modules: bool,
                 on_optimizer_step: Optional[Callable[[], None]] = None) -> None:
        # Optimizers stepped in the window, whose parameters, gradients and state are
        # memory of those kinds; then, with on_optimizer_step, the step's end.
        kinds = self.kinds = MemoryKinds()
        self._wrapped = _steps_calling(kinds.note_optimizer)
        # Gradients made before the window, which zero_grad() may free before any step
        # of the window: told as it begins.
        self._wrapped += _methods_calling(_optimizer_classes(), "zero_grad",
                                          kinds.note_optimizer, before=True)
        self._wrapped += _methods_calling([torch.nn.Module], "zero_grad",
                                          kinds.note_gradients, before=True)
        if on_optimizer_step is not None:
            self._wrapped += _steps_calling(lambda _: on_optimizer_step())
        self._module_events = ModuleEvents(kinds) if modules else None
        self._backward_events = BackwardEvents(
            self._module_events.end_backward if self._module_events is not None
            else lambda: None)
        self._backward_events.install()
        if self._module_events is not None:
            self._module_events.install()

    def scan(self, fresh: bool = False) -> None:
        """Tells the kinds of the parameters, gradients and optimizer state known so far
        (``fresh``: those added since too)."""
        try:
            self.kinds.scan(fresh)
        except Exception as e:  # a model's odd parameters never end the program's run
            warnings.warn(f"paddle_prof.torch: the memory of parameters, gradients and "
                          f"optimizer state could not be told apart ({e!r}); it counts as "
                          f"other memory", RuntimeWarning, stacklevel=3)

    def remove(self) -> None:
        if self._module_events is not None:
            self._module_events.remove()
            self._module_events = None
        self._backward_events.remove()
        for cls, name, original in reversed(self._wrapped):
            setattr(cls, name, original)
        self._wrapped = []


def attach_to_implicit_window() -> None:
    """``python3 -m paddle_prof run``: the implicit window gets what a window of
    paddle_prof.torch.profiler() has (memory kinds, module and backward events), and a
    step at each optimizer step, since the program marks none. They end with it (as it
    stops, the kinds told first) or as the program's own profiler takes over."""
    _torch_bridge.categorize_memory(True)
    hooks: Optional[_WindowHooks] = None

    def step() -> None:
        hooks.scan()  # the step's gradients and state, before they are freed
        _mark_step()

    def end(stopping: bool) -> None:
        if stopping:
            hooks.scan(fresh=True)
        hooks.remove()
        _implicit_window_ending.remove(end)

    hooks = _WindowHooks(modules=True, on_optimizer_step=step)
    _implicit_window_ending.append(end)


class profiler(_base_profiler):  # noqa: N801 (the API's name)
    """paddle_prof.profiler for PyTorch programs: the same arguments plus
    ``record_shapes``, which tags each op with its input shapes (a row per shape, as
    torch's group_by_input_shape), and ``step_on_optimizer``, which closes a step at
    every optimizer step instead of at each paddle_prof.mark_step().

    ``modules`` (default True) makes each nn.Module call an event ``nn.Module: <path>``
    and its backward ``nn.Module: <path>.backward``, so that ops nest under their layer
    and ``report.modules`` gives each module's calls, times, parameters and memory.
    Each step's time splits into phases (``steps[i].phases_ms``: data, forward, backward,
    optimizer, other), and ``prof.step(num_samples=N)`` gives the throughput."""

    def __init__(self, state: str = "CPU", sorted_key: Optional[str] = None,
                 profile_path: Optional[str] = None, record_shapes: bool = False, *,
                 step_on_optimizer: bool = False, per_thread: bool = False,
                 stream: Optional[TextIO] = None, row_limit: Optional[int] = ROW_LIMIT,
                 schedule: Optional[Any] = None,
                 on_trace_ready: Optional[Callable[[Any], Any]] = None,
                 oom_path: Optional[str] = None, keep_last_steps: Optional[int] = None,
                 capture_dir: Optional[str] = None, follow_children: bool = True,
                 per_process: bool = False, record_stacks: bool = False,
                 modules: bool = True, native: bool = False) -> None:
        super().__init__(state, sorted_key, profile_path, per_thread=per_thread, stream=stream,
                         row_limit=row_limit, schedule=schedule, on_trace_ready=on_trace_ready,
                         oom_path=oom_path, keep_last_steps=keep_last_steps,
                         capture_dir=capture_dir, follow_children=follow_children,
                         per_process=per_process, record_stacks=record_stacks, native=native)
        self.record_shapes = record_shapes
        self.step_on_optimizer = step_on_optimizer
        self.modules = bool(modules)
        self._hooks: Optional[_WindowHooks] = None

    def __enter__(self) -> "profiler":
        if not _torch_bridge.install(bool(self.record_shapes)):
            warnings.warn("paddle_prof.torch: c10's CPU allocator could not be wrapped; "
                          "ops are profiled but tensor memory is not tracked", RuntimeWarning)
        track_cuda_memory(self.state)
        try:
            super().__enter__()
        except BaseException:
            _torch_bridge.remove_callback()
            raise
        # With step_on_optimizer, the profiler's step(): mark_step(), the schedule's next.
        self._hooks = _WindowHooks(self.modules,
                                   self.step if self.step_on_optimizer else None)
        _children.framework_child_start = (start_in_child, bool(self.record_shapes))
        return self

    def __exit__(self, *exc_info: object) -> bool:
        if self._hooks is not None:
            self._hooks.remove()  # its kinds stay, for the scan as the window stops
        _children.framework_child_start = None
        try:
            return super().__exit__(*exc_info)
        finally:
            self._hooks = None
            _torch_bridge.remove_callback()

    def _start(self) -> None:
        super()._start()
        _torch_bridge.categorize_memory(True)  # each window, as a schedule opens them

    def _scan_memory(self, fresh: bool = False) -> None:
        if self._hooks is not None and self._recording:
            self._hooks.scan(fresh)

    def _before_stop(self) -> None:
        self._scan_memory(fresh=True)  # parameters and state added since too

    def step(self, num_samples: Optional[int] = None) -> None:
        self._scan_memory()  # the gradients and state of the step, before they are freed
        super().step(num_samples)
