"""capture_dir: a Python program killed by SIGKILL mid-window is recovered with every
call it ended (paddle_prof.recover, python3 -m paddle_prof recover); a window that
stops normally leaves no capture; a directory that cannot hold one is a warning."""

import io
import os
import selectors
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import paddle_prof
from helpers import row

WARNING = "ended without stopping its profiler"

SCRIPT = textwrap.dedent("""
    import sys, time
    import paddle_prof

    def work():
        for _ in range(200):
            with paddle_prof.record_event('py_op'):
                pass
        name = 'dyn_' + str(len('four'))
        for _ in range(10):
            with paddle_prof.record_event(name, tag='t'):
                pass
        paddle_prof.mark_step()
        with paddle_prof.record_event('open_at_the_kill'):
            print('MARKER', flush=True)
            time.sleep(600)

    if sys.argv[1] == 'profiler':
        with paddle_prof.profiler('CPU', capture_dir=sys.argv[2]):
            work()
    elif sys.argv[1] == 'own_profiler':
        with paddle_prof.profiler('CPU'):
            work()
    else:
        work()
""")


def _capture_files(directory):
    return [f for f in os.listdir(directory) if f.startswith("pp_capture.")]


def _run_until_marker_and_kill(command):
    """Runs `command`, reads its stdout until MARKER (at most 60 s), then SIGKILL."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=os.environ.copy())
    seen = b""
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + 60
            while b"MARKER\n" not in seen and time.monotonic() < deadline:
                if selector.select(timeout=1):
                    chunk = os.read(proc.stdout.fileno(), 4096)
                    if not chunk:
                        break
                    seen += chunk
    finally:
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    assert b"MARKER\n" in seen, (seen, err)
    assert proc.returncode == -signal.SIGKILL


def _check_recovered(directory, tmp_path):
    report = paddle_prof.recover(directory)
    assert row(report, "py_op", None).calls == 200
    assert row(report, "dyn_4", "t").calls == 10
    assert {r.name for r in report.events} == {"py_op", "dyn_4"}  # the open call is left out
    assert len(report.steps) == 1
    assert any(WARNING in w for w in report.warnings), report.warnings

    profile = str(tmp_path / "recovered.json")
    cli = subprocess.run([sys.executable, "-m", "paddle_prof", "recover", str(directory),
                          "--sorted-key", "calls", "--profile-path", profile],
                         capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert cli.returncode == 0, cli.stderr
    assert WARNING in cli.stdout
    lines = [line.split() for line in cli.stdout.splitlines()]
    assert ["py_op", "200"] in [line[:2] for line in lines]
    assert ["dyn_4", "[t]", "10"] in [line[:3] for line in lines], cli.stdout
    assert os.path.exists(profile) and os.path.exists(profile + ".summary.json")


@pytest.mark.parametrize("how", ["run --capture", "profiler(capture_dir=)",
                                 "run --capture, the script's own profiler"])
def test_killed_program_is_recovered(tmp_path, how):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    directory = tmp_path / "capture"
    run = [sys.executable, "-m", "paddle_prof", "run", "--capture", str(directory), "--"]
    command = {
        "run --capture": run + [str(script), "run"],
        "profiler(capture_dir=)": [sys.executable, str(script), "profiler", str(directory)],
        "run --capture, the script's own profiler": run + [str(script), "own_profiler"],
    }[how]
    _run_until_marker_and_kill(command)
    assert _capture_files(directory)
    _check_recovered(directory, tmp_path)


def test_normal_stop_leaves_no_capture(tmp_path):
    with paddle_prof.profiler("CPU", capture_dir=tmp_path, stream=io.StringIO()) as prof:
        for _ in range(5):
            with paddle_prof.record_event("kept"):
                pass
        assert _capture_files(tmp_path)
    assert row(prof.report, "kept", None).calls == 5
    assert _capture_files(tmp_path) == []


def test_unwritable_capture_dir_warns_and_profiles_in_memory():
    with pytest.warns(RuntimeWarning, match="cannot capture there"):
        with paddle_prof.profiler("CPU", capture_dir="/proc/self/no/such/dir",
                                  stream=io.StringIO()) as prof:
            for _ in range(5):
                with paddle_prof.record_event("in_memory"):
                    pass
    assert row(prof.report, "in_memory", None).calls == 5
    assert any("cannot capture there" in w for w in prof.report.warnings)


def test_recover_without_a_capture(tmp_path):
    with pytest.raises(ValueError, match="no capture in"):
        paddle_prof.recover(tmp_path)
    cli = subprocess.run([sys.executable, "-m", "paddle_prof", "recover", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert cli.returncode == 1
    assert "no capture in" in cli.stderr


def test_capture_dir_checks_its_type():
    with pytest.raises(TypeError):
        paddle_prof.profiler("CPU", capture_dir=3)
