"""A static program's runs under paddle_prof.paddle.profiler: each
``paddle.static.Executor.run`` is an event ``paddle.static.Executor.run``, inside which
the report phases each op by its role (src/analysis/step_phases.h: gradient ops backward,
optimizer ops optimizer, the rest forward), and the feeding of its inputs an event
``paddle.static.Executor.feed``, the data phase. As each run's inputs are fed, the
blocks of the program's parameters and of its optimizer's state (the persistable
variables it reads and is not fed: velocity, moments, beta powers, the learning rate)
are told to the core, by name from the run's scope. PIR programs (PaddlePaddle 3.x's
default) are read; a program of the old IR runs as before, its ops recorded but not
phased nor its memory told apart.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

from paddle_prof.paddle.memory import MemoryKinds
from paddle_prof.record_event import record_event

RUN_EVENT = "paddle.static.Executor.run"
FEED_EVENT = "paddle.static.Executor.feed"


class _Program:
    """What one program's runs need, read once: whether it trains (has gradient ops),
    its parameters' names and its optimizer state's."""

    def __init__(self, program: Any, data_op_infos: List[Tuple[Any, ...]],
                 fed: Any) -> None:
        self.program = program  # held so that its id is not reused while it is known
        self.trains = any(op.name().endswith(("_grad", "_grad_"))
                          for op in program.global_block().ops)
        self.parameters = list(program.get_all_parameter_values())  # by name
        # A persistable input not fed is the optimizer's (Executor._pir_feed_data's rule).
        self.state = [info[0] for info in data_op_infos if info[3] and info[0] not in fed]


class StaticRuns:
    """Wraps Executor.run and its feeding for one window (LayerEvents installs them)."""

    def __init__(self, kinds: MemoryKinds, on_step: Callable[[], None] | None) -> None:
        self.kinds = kinds
        self.on_step = on_step  # called after each run of a training program
        self._programs: Dict[int, _Program] = {}
        self._ran: _Program | None = None  # the program whose inputs were fed last

    def run(self, original: Callable[..., Any]) -> Callable[..., Any]:
        runs = self

        def run(executor: Any, *args: Any, **kwargs: Any) -> Any:
            runs._ran = None
            with record_event(RUN_EVENT):
                result = original(executor, *args, **kwargs)
            if runs._ran is not None and runs._ran.trains and runs.on_step is not None:
                runs.on_step()
            return result

        run.__wrapped__ = original  # type: ignore[attr-defined]
        return run

    def feed(self, original: Callable[..., Any]) -> Callable[..., Any]:
        runs = self

        def _pir_feed_data(executor: Any, program: Any, feed: Any, scope: Any,
                           data_op_infos: Any) -> Any:
            known = runs._programs.get(id(program))
            if known is None or known.program is not program:
                fed = set(feed)  # read before the original drops what it does not feed
                try:
                    known = _Program(program, data_op_infos, fed)
                except Exception as e:  # noqa: BLE001 (a program this cannot read)
                    runs.kinds.warn(e)
                else:
                    runs._programs[id(program)] = known
            with record_event(FEED_EVENT):
                result = original(executor, program, feed, scope, data_op_infos)
            if known is not None:
                runs._ran = known
                runs.kinds.note_scope(scope, known.parameters, known.state)
            return result

        _pir_feed_data.__wrapped__ = original  # type: ignore[attr-defined]
        return _pir_feed_data
