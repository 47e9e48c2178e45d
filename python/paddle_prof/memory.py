"""Arrays whose memory the profiler tracks."""

from __future__ import annotations

import operator
from typing import List, Sequence, Union

import numpy as np

from paddle_prof import _core


def empty(shape: Union[int, Sequence[int]], dtype: Union[str, np.dtype] = "float32",
          place: str = "CPU") -> np.ndarray:
    """A numpy array whose buffer comes from paddle_prof's tracking allocator.

    The buffer is charged to the innermost open event, like a framework tensor, and goes
    back to the allocator when the array is collected.

    Example::

        with paddle_prof.record_event('fill_constant'):
            x = paddle_prof.empty((1000, 784), dtype='float32')   # 3,136,000 bytes
    """
    # The core refuses a dtype holding Python objects (TypeError).
    return _core.empty(_dimensions(shape), np.dtype(dtype), place)


def _is_bool(value: object) -> bool:
    return isinstance(value, (bool, np.bool_))


def _dimensions(shape: Union[int, Sequence[int]]) -> List[int]:
    """The shape as numpy takes it: an integer or a sequence of integers (TypeError
    otherwise, as numpy.empty raises for a str, a float or a bool)."""
    if not _is_bool(shape):
        try:
            return [operator.index(shape)]
        except TypeError:
            pass
    if _is_bool(shape) or isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"empty(): expected a sequence of integers or a single integer, "
                        f"got {shape!r}")
    dims = []
    for d in shape:
        if _is_bool(d):
            raise TypeError(f"empty(): dimensions must be integers, got {d!r}")
        dims.append(operator.index(d))  # "'float' object cannot be interpreted as an integer"
    return dims
