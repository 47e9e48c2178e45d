"""Arrays whose memory the profiler tracks."""

from __future__ import annotations

from typing import Sequence, Union

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
    if isinstance(shape, int):
        shape = (shape,)
    return _core.empty([int(d) for d in shape], np.dtype(dtype), place)
