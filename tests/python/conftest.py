"""Every test starts and ends with no profiler running; a test marked `torch` runs only
where PyTorch and the torch bridge are there."""

import functools

import pytest

from paddle_prof import _core


@functools.lru_cache(maxsize=None)
def have_torch() -> bool:
    """Imported only by the first test that needs it: the others run without torch."""
    try:
        import paddle_prof.torch  # noqa: F401
    except ImportError:
        return False
    return True


def pytest_configure(config):
    config.addinivalue_line("markers", "torch: needs PyTorch and paddle_prof built with it")


def pytest_runtest_setup(item):
    if item.get_closest_marker("torch") is not None and not have_torch():
        pytest.skip("no PyTorch, or paddle_prof was built without it")


@pytest.fixture(autouse=True)
def no_profiler_left_running():
    assert not _core.is_enabled(), "a previous test left a profiler running"
    yield
    if _core.is_enabled():
        _core.stop_profiler("total", "", False)
        pytest.fail("the test left a profiler running")
