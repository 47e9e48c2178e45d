"""The pytest plugin (paddle_prof/pytest_plugin.py), run by pytest in a subprocess on
test files with passing and failing tests: memory limits, a baseline saved then compared,
and PyTorch tests profiled with the torch bridge."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from paddle_prof.pytest_plugin import parse_size, summary_file_name


def pytest_run(tmp_path, source, *args, env=None):
    test_file = tmp_path / "test_subject.py"
    test_file.write_text(textwrap.dedent(source))
    # The subject runs in tmp_path: the package's path must not be relative to here.
    path = os.pathsep.join(os.path.abspath(p) for p in
                           os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "paddle_prof.pytest_plugin", "-p",
         "no:cacheprovider", "-v", str(test_file), *args],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path, **(env or {})})
    outcomes = dict(re.findall(r"test_subject\.py::(\S+) (PASSED|FAILED)", result.stdout))
    return result, outcomes


def test_sizes_read_as_pytest_memray_users_write_them():
    assert parse_size("24 MiB") == parse_size("24MB") == 24 * 1024 * 1024
    assert parse_size("1.5 GiB") == 3 * 1024 ** 3 // 2
    assert parse_size(4096) == parse_size("4 KiB") == parse_size("4096") == 4096
    for bad in ("lots", "-1 MiB", "2 PB"):
        with pytest.raises(ValueError, match="not a memory size"):
            parse_size(bad)
    with pytest.raises(TypeError):
        parse_size(1.5)
    assert summary_file_name("test_a.py::test_b[x-1]") == "test_a.py.test_b[x-1]"
    # A character a file name may not hold is '_', and a digest of the id keeps the name
    # its own; a long id is cut, still with its digest.
    names = {summary_file_name(f"test_c.py::test_c[{part}]") for part in ("a/b", "a_b", "a:b")}
    assert len(names) == 3 and "test_c.py.test_c[a_b]" in names, names
    assert all(re.fullmatch(r"test_c\.py\.test_c\[a_b\]-[0-9a-f]{12}", n)
               for n in names - {"test_c.py.test_c[a_b]"}), names
    long_name = summary_file_name("test_c.py::test_c[" + "x" * 300 + "]")
    assert len(long_name) == 160 + 13 and long_name.startswith("test_c.py.test_c[xxx")


SUBJECT = """
    import pytest
    import paddle_prof

    def make(megabytes):
        with paddle_prof.record_event("make_big"):
            return paddle_prof.empty((megabytes * 1024 * 1024,), "uint8")

    @pytest.mark.limit_peak_memory("1 MiB")
    def test_small_fits():
        kept = paddle_prof.empty((1000,), "uint8")

    @pytest.mark.limit_peak_memory("1 MiB", place="CPU")
    def test_big_peak_fails():
        kept = make(2)

    @pytest.mark.limit_op_memory("make_big", "1 MiB")
    def test_big_op_fails():
        kept = make(2)

    @pytest.mark.limit_op_memory("make_big", "4 MiB")
    def test_big_op_under_its_limit():
        kept = make(2)

    @pytest.mark.limit_peak_memory("lots")
    def test_a_bad_size_is_said():
        pass

    @pytest.mark.limit_peak_memory("1 MiB")
    def test_a_failing_test_keeps_its_own_failure():
        kept = make(2)
        assert False, "its own"

    def test_unmarked_is_not_profiled():
        with paddle_prof.profiler("CPU"):  # would fail were it profiled
            pass
"""


def test_limits_fail_the_tests_over_them_naming_what_held_the_memory(tmp_path):
    result, outcomes = pytest_run(tmp_path, SUBJECT)
    assert outcomes == {
        "test_small_fits": "PASSED", "test_big_peak_fails": "FAILED",
        "test_big_op_fails": "FAILED", "test_big_op_under_its_limit": "PASSED",
        "test_a_bad_size_is_said": "FAILED",
        "test_a_failing_test_keeps_its_own_failure": "FAILED",
        "test_unmarked_is_not_profiled": "PASSED"}, result.stdout[-3000:]
    out = result.stdout
    assert re.search(r"peak memory on CPU was 2\.00 MiB \(2,097,\d+ bytes\) above the test's "
                     r"start, over the limit of 1\.00 MiB \(1,048,576 bytes\); at the peak held "
                     r"by:\n\s+2\.00 MiB\s+make_big", out), out[-3000:]
    assert "make_big on CPU: 2.00 MiB (2,097,152 bytes) in its largest call" in out
    assert "paddle_prof: not a memory size: 'lots'" in out
    assert "paddle_prof: paddle_prof:" not in out  # said once
    assert "AssertionError: its own" in out
    assert result.returncode == 1


BASELINE = """
    import os
    import paddle_prof

    def test_allocates():
        with paddle_prof.record_event("alloc"):
            kept = paddle_prof.empty((int(os.environ["SUBJECT_BYTES"]),), "uint8")
"""


def test_a_saved_baseline_catches_an_enlarged_allocation(tmp_path):
    # The defaults: the row of one call has no spread to judge its time by (a 0.15 ms call
    # took 0.24 ms once here), so its time is not judged; its memory is, exactly.
    memory_only = ()
    baseline = tmp_path / "baseline"
    saved, outcomes = pytest_run(tmp_path, BASELINE, "--paddle-prof-save", str(baseline),
                                 env={"SUBJECT_BYTES": "4000"})
    assert outcomes == {"test_allocates": "PASSED"}, saved.stdout
    assert [p.name for p in baseline.iterdir()] == ["test_subject.py.test_allocates.summary.json"]
    same, outcomes = pytest_run(tmp_path, BASELINE, "--paddle-prof-compare", str(baseline),
                                *memory_only, env={"SUBJECT_BYTES": "4000"})
    assert outcomes == {"test_allocates": "PASSED"}, same.stdout
    bigger, outcomes = pytest_run(tmp_path, BASELINE, "--paddle-prof-compare", str(baseline),
                                  *memory_only, env={"SUBJECT_BYTES": "4004"})
    assert outcomes == {"test_allocates": "FAILED"}, bigger.stdout
    assert "regressed against" in bigger.stdout
    line = next(l for l in bigger.stdout.splitlines() if l.lstrip("E ").startswith("alloc "))
    assert "more_memory" in line and "(+4 B)" in line
    lenient, outcomes = pytest_run(tmp_path, BASELINE, "--paddle-prof-compare", str(baseline),
                                   "--paddle-prof-memory-threshold", "1%", *memory_only,
                                   env={"SUBJECT_BYTES": "4004"})
    assert outcomes == {"test_allocates": "PASSED"}, lenient.stdout


def test_a_pytorch_test_is_profiled_with_the_torch_bridge(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("paddle_prof._torch_bridge")
    result, outcomes = pytest_run(tmp_path, """
        import pytest
        import torch

        @pytest.mark.limit_op_memory("aten::empty", "1 KiB")
        def test_empty_is_over():
            kept = torch.empty(1000)
    """)
    assert outcomes == {"test_empty_is_over": "FAILED"}, result.stdout[-3000:]
    assert "aten::empty" in result.stdout and "(4,000 bytes)" in result.stdout


HOST = """
    import numpy as np
    import pytest

    @pytest.mark.limit_peak_memory("10 MB")
    def test_numpy_over_the_host_limit_fails():
        a = np.ones(13 * 1024 * 1024 // 8)  # 13 MiB of numpy, no framework allocator

    @pytest.mark.limit_peak_memory("10 MB")
    def test_numpy_under_the_host_limit_passes():
        a = np.ones(1024 * 1024 // 8)

    @pytest.mark.limit_peak_memory("1 MiB", place="cpu")
    def test_a_misspelt_place_fails():
        a = np.ones(4 * 1024 * 1024 // 8)
"""


def test_a_limit_without_place_is_the_tests_host_memory_numpy_included(tmp_path):
    pytest.importorskip("numpy")
    result, outcomes = pytest_run(tmp_path, HOST, env={"LD_PRELOAD": ""})
    assert outcomes == {"test_numpy_over_the_host_limit_fails": "FAILED",
                        "test_numpy_under_the_host_limit_passes": "PASSED",
                        "test_a_misspelt_place_fails": "FAILED"}, result.stdout[-3000:]
    out = result.stdout
    assert re.search(r"the test's host memory peaked at 13\.\d\d MiB \(13,6\d\d,\d\d\d bytes: "
                     r"native 13\.\d\d MiB\), over the limit of 10\.00 MiB", out), out[-3000:]
    assert "the place 'cpu' saw no allocation in this test" in out


CHECKS_NOTHING = """
    import pytest
    import paddle_prof

    CACHE = []

    def make(size):
        with paddle_prof.record_event("make_big"):
            return paddle_prof.empty((size,), "uint8")

    @pytest.mark.limit_peak_memory("8 MiB", place="CPU")
    def test_fills_a_cache():
        CACHE.append(paddle_prof.empty((2 * 1024 * 1024,), "uint8"))

    @pytest.mark.limit_peak_memory("1 MiB", place="CPU")
    def test_after_the_cache_counts_only_its_own():
        kept = make(4096)

    @pytest.mark.limit_peak_memory("1 MiB", place="CUDA:0")
    def test_a_place_that_saw_nothing_fails():
        kept = make(4096)

    @pytest.mark.limit_op_memory("make_bigg", "1 MiB")
    def test_an_op_that_never_ran_fails():
        kept = make(4096)

    @pytest.mark.limit_op_memory("make_big", "1 MiB", place="CUDA:0")
    def test_an_op_that_never_used_the_place_fails():
        kept = make(4096)

    @pytest.mark.limit_peak_memory("1 MiB")
    def test_its_own_profiler_is_told_who_profiles():
        with paddle_prof.profiler("CPU"):
            pass
"""


def test_a_limit_that_checks_nothing_fails_and_one_counts_only_the_tests_memory(tmp_path):
    result, outcomes = pytest_run(tmp_path, CHECKS_NOTHING, env={"LD_PRELOAD": ""})
    assert outcomes == {
        "test_fills_a_cache": "PASSED",
        "test_after_the_cache_counts_only_its_own": "PASSED",  # the 2 MiB before it are not
        "test_a_place_that_saw_nothing_fails": "FAILED",
        "test_an_op_that_never_ran_fails": "FAILED",
        "test_an_op_that_never_used_the_place_fails": "FAILED",
        "test_its_own_profiler_is_told_who_profiles": "FAILED"}, result.stdout[-3000:]
    out = result.stdout
    assert "the place 'CUDA:0' saw no allocation in this test" in out
    assert ("no op named 'make_bigg' ran in this test, so its limit checks nothing (did you "
            "mean 'make_big'?)") in out
    assert "make_big allocated nothing on the place 'CUDA:0' in this test" in out
    assert "RuntimeError: a profiler is already running: paddle_prof's pytest plugin " \
           "profiles this test" in out


IDS = """
    import pytest
    import paddle_prof

    @pytest.mark.parametrize("part", ["a/b", "a_b", "a:b", "x" * 300])
    def test_c(part):
        with paddle_prof.record_event("alloc"):
            kept = paddle_prof.empty((len(part),), "uint8")
"""


def test_baselines_are_one_file_per_test_and_a_wrong_directory_is_one_usage_error(tmp_path):
    baseline = tmp_path / "baseline"
    saved, outcomes = pytest_run(tmp_path, IDS, "--paddle-prof-save", str(baseline))
    assert saved.returncode == 0, saved.stdout[-3000:]
    assert len(outcomes) == 4 and set(outcomes.values()) == {"PASSED"}, saved.stdout[-3000:]
    files = sorted(p.name for p in baseline.iterdir())
    assert len(files) == 4, files
    # Each baseline is its own test's: the bytes its one allocation made.
    peaks = sorted(
        next(r for r in json.load(open(baseline / f))["events"] if r["name"] == "alloc")
        ["memory"]["CPU"]["peak_bytes"] for f in files)
    assert peaks == [3, 3, 3, 300]

    for args, said in (
            (("--paddle-prof-compare", str(tmp_path / "no_such_dir")),
             f"--paddle-prof-compare {tmp_path / 'no_such_dir'}: no such directory"),
            (("--paddle-prof-save", str(baseline / files[0])),
             f"--paddle-prof-save {baseline / files[0]}: exists and is not a directory")):
        wrong, outcomes = pytest_run(tmp_path, IDS, *args)
        assert wrong.returncode == 4 and outcomes == {}, wrong.stdout[-2000:]
        assert said in wrong.stderr, wrong.stderr[-2000:]

    (baseline / files[0]).unlink()
    compared, outcomes = pytest_run(tmp_path, IDS, "--paddle-prof-compare", str(baseline))
    assert set(outcomes.values()) == {"PASSED"}, compared.stdout[-3000:]
    assert (f"1 profiled test(s) not compared: no baseline in {baseline}"
            in compared.stdout), compared.stdout[-3000:]


UNCHANGED = """
    import pytest
    import paddle_prof

    @pytest.mark.parametrize("i", range(10))
    def test_one_call(i):
        with paddle_prof.record_event("one"):
            kept = paddle_prof.empty((1000 + i,), "uint8")
"""


def test_unchanged_code_passes_its_own_baseline_with_the_defaults(tmp_path):
    baseline = tmp_path / "baseline"
    saved, outcomes = pytest_run(tmp_path, UNCHANGED, "--paddle-prof-save", str(baseline))
    assert saved.returncode == 0, saved.stdout[-3000:]
    for _ in range(3):
        same, outcomes = pytest_run(tmp_path, UNCHANGED, "--paddle-prof-compare", str(baseline))
        assert same.returncode == 0 and set(outcomes.values()) == {"PASSED"}, same.stdout[-3000:]
