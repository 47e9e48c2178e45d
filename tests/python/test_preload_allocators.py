"""The preload library never hangs a program, whatever malloc it uses.

jemalloc and tcmalloc map their memory through mmap while they hold their own locks, so
the preload's mmap hook runs inside the allocator: had it allocated, the allocator would
wait on itself. Such a hang showed only when the program was started from Python with
its output piped, so each program here is started that way, 50 times, profiled and not,
and each run has 10 s.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ALLOCATORS = {
    'glibc': None,
    'jemalloc': '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
    'tcmalloc': '/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4',
    'mimalloc': '/usr/lib/x86_64-linux-gnu/libmimalloc.so.2',
}
RUNS = 50


def _preload_library():
    import paddle_prof
    return str(pathlib.Path(paddle_prof.__file__).parent / 'libpaddle_prof_preload.so')


def _run_until_done(command, env):
    """Runs `command` with its output piped; fails on a hang (10 s) or a non-zero exit."""
    try:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env, timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail(f'hung: {command} (LD_PRELOAD={env.get("LD_PRELOAD")})')
    assert result.returncode == 0, (command, result.stdout[-2000:], result.stderr[-2000:])
    return result


def _skip_unless_installed(allocator):
    library = ALLOCATORS[allocator]
    if library is not None and not os.path.exists(library):
        pytest.skip(f'{library} is not installed (scripts/install_deps.sh)')


@pytest.mark.parametrize('profiled', ['0', '1'])
@pytest.mark.parametrize('allocator', sorted(ALLOCATORS))
def test_a_program_linked_with_any_malloc_always_ends(allocator, profiled):
    _skip_unless_installed(allocator)
    binaries = os.environ.get('PADDLE_PROF_TEST_BINARIES')
    if binaries is None:
        pytest.skip('PADDLE_PROF_TEST_BINARIES is not set: run through ctest')
    program = pathlib.Path(binaries) / f'preload_stress_{allocator}_main'
    # The window follows the forked child: the fork handlers run with a window open.
    env = dict(os.environ, LD_PRELOAD=_preload_library(), PADDLE_PROF_TEST_PROFILE=profiled)
    for _ in range(RUNS):
        result = _run_until_done([str(program)], env)
        assert b'all threads finished' in result.stdout
        assert b'not tracked' not in result.stderr  # the hooks were the process's malloc


# Python under `run --native`, with the allocator preloaded after the hooks (as the
# README shows): threads allocate objects and buffers, and map memory of their own.
SCRIPT = '''
import mmap
import threading

def work():
    for i in range(200):
        text = "x" * (1 << (i % 23))
        data = bytearray(300000 * (i % 7))
        region = mmap.mmap(-1, 1 << 20)
        region.resize(2 << 20)
        region.close()
        del text, data

threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("all threads finished")
'''


@pytest.mark.parametrize('allocator', sorted(ALLOCATORS))
def test_python_under_run_native_with_any_malloc_always_ends(tmp_path, allocator):
    _skip_unless_installed(allocator)
    script = tmp_path / 'threads.py'
    script.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, FLAGS_paddle_prof_follow_children='0')
    if ALLOCATORS[allocator] is not None:
        env['LD_PRELOAD'] = ALLOCATORS[allocator]
    command = [sys.executable, '-m', 'paddle_prof', 'run', '--native', '--profile-path',
               str(tmp_path / 'native.json'), '--', str(script)]
    for _ in range(RUNS):
        result = _run_until_done(command, env)
        assert b'all threads finished' in result.stdout
        assert b'not tracked' not in result.stderr
