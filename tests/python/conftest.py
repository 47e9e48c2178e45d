"""Every test starts and ends with no profiler running."""

import pytest

from paddle_prof import _core


@pytest.fixture(autouse=True)
def no_profiler_left_running():
    assert not _core.is_enabled(), "a previous test left a profiler running"
    yield
    if _core.is_enabled():
        _core.stop_profiler("total", "", False)
        pytest.fail("the test left a profiler running")
