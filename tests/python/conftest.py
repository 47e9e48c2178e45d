"""Every test starts and ends with no profiler running; a test marked `torch` runs only
where PyTorch and the torch bridge are there; `trace_analysis` is Holistic Trace
Analysis's reader of traces."""

import functools
import os

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


@pytest.fixture
def trace_analysis():
    """HTA's TraceAnalysis; scripts/test.sh installs HTA beside torch 2.x and sets
    PADDLE_PROF_REQUIRE_HTA, so that there a missing HTA fails instead of skipping."""
    if os.environ.get("PADDLE_PROF_REQUIRE_HTA") == "1":
        from hta.trace_analysis import TraceAnalysis
        return TraceAnalysis
    return pytest.importorskip("hta.trace_analysis").TraceAnalysis
