"""paddle_prof.empty: numpy arrays on the tracking allocator, measured exactly."""

import io
import re

import numpy as np
import pytest

import paddle_prof
from helpers import row
from paddle_prof import _core


def cpu(report, name):
    return row(report, name).memory['CPU']


def test_fill_constant_reads_exactly_its_bytes_peak_and_live():
    with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
        with paddle_prof.record_event('fill_constant'):
            x = paddle_prof.empty((1000, 784), dtype='float32')
    m = cpu(prof.report, 'fill_constant')
    assert m['peak_bytes'] == 3136000
    assert m['live_bytes'] == 3136000
    assert m['alloc_bytes'] == 3136000 and m['alloc_count'] == 1
    assert x.shape == (1000, 784) and x.dtype == np.float32 and x.nbytes == 3136000
    assert x.strides == (784 * 4, 4)  # read from numpy 1.x and 2.x alike
    x[:] = 1.0  # the buffer is real memory
    assert float(x.sum()) == 784000.0


def test_dropping_the_array_inside_the_scope_frees_it_and_keeps_the_peak():
    with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
        with paddle_prof.record_event('fill_constant'):
            x = paddle_prof.empty((1000, 784), dtype='float32')
            del x
    m = cpu(prof.report, 'fill_constant')
    assert m['peak_bytes'] == 3136000
    assert m['live_bytes'] == 0
    assert m['free_bytes'] == 3136000 and m['free_count'] == 1
    place = prof.report.places[0]
    assert place.place == 'CPU'
    assert place.peak_bytes - place.start_bytes == 3136000
    assert place.at_peak[0]['name'] == 'fill_constant'


def test_views_keep_the_buffer_alive():
    with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
        with paddle_prof.record_event('make'):
            x = paddle_prof.empty(1024, 'uint8')
            view = x[10:20]
            del x
    assert cpu(prof.report, 'make')['live_bytes'] == 1024
    del view


def test_empty_checks_its_arguments():
    with pytest.raises(ValueError, match="place must be 'CPU'"):
        paddle_prof.empty((2, 2), 'float32', place='GPU')
    with pytest.raises(ValueError, match='negative'):
        paddle_prof.empty((-1, 2))
    with pytest.raises(TypeError):
        paddle_prof.empty((2, 2), dtype='not-a-dtype')
    with pytest.raises(ValueError, match='more bytes'):
        paddle_prof.empty((2**40, 2**40), 'float32')
    with pytest.raises(MemoryError):
        paddle_prof.empty((2**50,), 'uint8')
    assert paddle_prof.empty(0).nbytes == 0


@pytest.mark.parametrize('dtype', [object, [('a', 'O'), ('b', 'f4')], np.dtype(('O', (2,)))])
def test_empty_refuses_dtypes_that_hold_python_objects(dtype):
    # A raw buffer holds no valid object pointers: numpy would read garbage as objects.
    message = f'^empty\\(\\): dtype {re.escape(str(np.dtype(dtype)))} holds Python objects'
    with pytest.raises(TypeError, match=message):
        paddle_prof.empty((4,), dtype=dtype)
    with pytest.raises(TypeError, match=message):  # the extension's own entry too
        _core.empty([4], np.dtype(dtype), 'CPU')


@pytest.mark.parametrize('shape', ['12', (2.9, 1), True, (True, 2), 3.0, (1, '2')])
def test_empty_refuses_the_shapes_numpy_refuses(shape):
    with pytest.raises(TypeError):
        np.empty(shape)
    with pytest.raises(TypeError):
        paddle_prof.empty(shape)


@pytest.mark.parametrize('shape,expected', [(3, (3,)), ([2, 3], (2, 3)), (np.int64(4), (4,)),
                                            ((np.int32(2), 5), (2, 5)), ((), ())])
def test_empty_takes_the_shapes_numpy_takes(shape, expected):
    assert paddle_prof.empty(shape, dtype='uint8').shape == expected
