"""record_event: a named scope around Python code, as a context manager or decorator."""

from __future__ import annotations

import contextlib

from paddle_prof import _core


class record_event(_core.RecordEventBase,  # noqa: N801 (the API's name)
                   contextlib.ContextDecorator):
    """Records the enclosed code as one call of event ``name`` (and ``tag``).

    Example::

        with paddle_prof.record_event('data_loader'):
            batch = next(loader)

        @paddle_prof.record_event('forward')
        def forward(x): ...

    One object may be entered again, recursively or from several threads: each entry
    is its own call, recorded on the thread that runs it. ``name`` (a str) and ``tag``
    (a str or None) are read-only. Making the object, ``__enter__`` and ``__exit__``
    are the C++ base's, so that a with-block costs about what contextlib.nullcontext()
    does.
    """
