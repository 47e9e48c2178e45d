"""python3 -m paddle_prof run --native: every malloc of the program, on place 'native'."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import paddle_prof
from helpers import run_script

PRELOAD = os.path.join(os.path.dirname(paddle_prof.__file__), 'libpaddle_prof_preload.so')
pytestmark = pytest.mark.skipif(not os.path.exists(PRELOAD), reason='no preload library built')


def run_native(tmp_path, source):
    """Runs `source` under `run --native` with a profile path; its result and summary."""
    result = run_script(tmp_path, source, run=['--native', '--profile-path',
                                               str(tmp_path / 'p.json')])
    return result, json.loads((tmp_path / 'p.json.summary.json').read_text())

SCRIPT = '''
    import ctypes, subprocess, sys, threading
    import paddle_prof

    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    # Warm up ctypes' call path and the first scope's Python objects.
    with paddle_prof.record_event('warm_up'):
        libc.free(libc.malloc(12345))
    block = None

    with paddle_prof.record_event('native_op'):
        block = libc.malloc(12345)

    def churn():
        for _ in range(500):
            libc.free(libc.malloc(100))
            with paddle_prof.record_event('worker_op'):
                libc.free(libc.malloc(64))

    threads = [threading.Thread(target=churn) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    child = subprocess.run([sys.executable, '-c',
                            'import os; print(os.environ.get("LD_PRELOAD"))'],
                           capture_output=True, text=True)
    print('child LD_PRELOAD:', child.stdout.strip())
'''


def test_native_run_counts_a_known_malloc_exactly_and_survives_threads(tmp_path):
    script = tmp_path / 'script.py'
    script.write_text(textwrap.dedent(SCRIPT))
    profile = tmp_path / 'native.json'
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--native',
                             '--profile-path', str(profile), '--', str(script)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert 'Memory on native' in result.stdout
    assert 'child LD_PRELOAD: None' in result.stdout  # programs it starts run plain
    summary = json.loads((tmp_path / 'native.json.summary.json').read_text())
    rows = {e['name']: e for e in summary['events']}
    native_op = rows['native_op']['memory']['native']
    assert native_op['live_bytes'] == 12345  # the block, still allocated at the end
    assert native_op['peak_bytes'] >= 12345
    worker = rows['worker_op']
    assert worker['calls'] == 4 * 500
    assert worker['memory']['native']['alloc_count'] >= 4 * 500
    assert worker['memory']['native']['live_bytes'] == 0
    assert any(p['place'] == 'native' for p in summary['places'])


# Another malloc in the process: the hooks must forward to it (a block freed by an
# allocator that did not make it aborts the interpreter before the script runs).
OTHER_MALLOCS = {
    'jemalloc': '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
    'tcmalloc': '/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4',
}


@pytest.mark.parametrize('allocator', sorted(OTHER_MALLOCS))
def test_native_run_over_another_malloc_counts_a_known_malloc_exactly(tmp_path, allocator):
    library = OTHER_MALLOCS[allocator]
    if not os.path.exists(library):
        pytest.skip(f'{library} is not installed (scripts/install_deps.sh)')
    script = tmp_path / 'script.py'
    script.write_text(textwrap.dedent(SCRIPT))
    profile = tmp_path / 'native.json'
    env = dict(os.environ, LD_PRELOAD=library)
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--native',
                             '--profile-path', str(profile), '--', str(script)],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert 'not tracked' not in result.stderr
    assert f'child LD_PRELOAD: {library}' in result.stdout  # the program's own malloc stays
    summary = json.loads((tmp_path / 'native.json.summary.json').read_text())
    rows = {e['name']: e for e in summary['events']}
    assert rows['native_op']['memory']['native']['live_bytes'] == 12345
    worker = rows['worker_op']
    assert worker['calls'] == 4 * 500
    assert worker['memory']['native']['alloc_count'] >= 4 * 500
    assert worker['memory']['native']['live_bytes'] == 0


def test_without_native_nothing_is_preloaded(tmp_path):
    script = tmp_path / 'script.py'
    script.write_text('import os\nprint("preload:", os.environ.get("LD_PRELOAD"))\n')
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--', str(script)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert 'preload: None' in result.stdout
    assert 'Memory on native' not in result.stdout


def test_native_steps_carry_the_programs_anonymous_mappings(tmp_path):
    script = tmp_path / 'mappings.py'
    script.write_text(textwrap.dedent('''
        import io, json, mmap
        import paddle_prof
        kept = []
        with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
            for step in range(6):
                region = mmap.mmap(-1, 4 << 20)     # 4 MiB reserved ...
                region.write(b'x' * (2 << 20))      # ... of which 2 MiB touched
                kept.append(region)
                for _ in range(20000):  # the profiler maps record chunks: not the program's
                    with paddle_prof.record_event('op'):
                        pass
                paddle_prof.mark_step()
        print(json.dumps({'steps': [s.process for s in prof.report.steps],
                          'warnings': prof.report.warnings, 'notes': prof.report.notes}))
    '''))
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--native', '--',
                             str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    steps = out['steps']
    reserved = [s['mmap_reserved_bytes'] for s in steps]
    resident = [s['mmap_resident_bytes'] for s in steps]
    assert [b - a for a, b in zip(reserved, reserved[1:])] == [4 << 20] * 5
    assert all(b - a >= 2 << 20 for a, b in zip(resident, resident[1:]))
    growth = [w for w in out['warnings'] if 'resident memory grew' in w]
    assert growth and "the program's anonymous mappings" in growth[0]
    # The native place's peak is exact: no note or warning qualifies it.
    assert not any('peak_bytes is' in w for w in out['warnings'] + out['notes'])


def test_a_long_native_runs_trace_keeps_its_counter_bound(tmp_path):
    script = tmp_path / 'churn.py'
    script.write_text(textwrap.dedent('''
        import ctypes
        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        libc.free.argtypes = [ctypes.c_void_p]
        kept = []
        for i in range(200000):
            libc.free(libc.malloc(100 + i % 7))
            if i % 1000 == 0:
                kept.append(libc.malloc(4096))  # the native bytes climb in steps
    '''))
    path = tmp_path / 'p.json'

    def native_points(bound):
        env = dict(os.environ, FLAGS_paddle_prof_trace_counter_points=str(bound))
        result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--native',
                                 '--profile-path', str(path), '--', str(script)],
                                capture_output=True, text=True, timeout=120, env=env)
        assert result.returncode == 0, result.stderr
        with open(path) as f:
            trace = json.load(f)
        return [e['args']['bytes'] for e in trace['traceEvents']
                if e['ph'] == 'C' and e['name'] == 'Memory native']

    # Native blocks come by the million: their timeline is kept by intervals, a point per
    # interval and owner, so 400,000 blocks make a few hundred points at most.
    every = native_points(0)
    assert 40 < len(every) < 1000
    bounded = native_points(20)
    assert len(bounded) <= 20
    assert max(bounded) == max(every)  # the bound keeps the highest point


# An OpenMP region started inside an op: each thread of the team allocates 1 MiB and
# keeps it. The workers have no event open; their blocks are owned by the op that
# started the region (its live bytes), while the op's calls count the starting
# thread's allocations only (a call's figures are per thread). libgomp is loaded by
# ctypes with RTLD_LOCAL, out of the global scope.
OPENMP_REGION = r'''
#include <omp.h>
#include <stdlib.h>
#include <string.h>
void* kept[2][64];  // read by nobody, but not static: the mallocs stay
void region(int call, int threads, size_t bytes) {
  #pragma omp parallel num_threads(threads)
  {
    void* p = malloc(bytes);
    memset(p, 1, bytes);
    kept[call][omp_get_thread_num() % 64] = p;
  }
}
'''


def test_native_memory_a_worker_thread_allocates_in_an_ops_parallel_region_is_the_ops(tmp_path):
    source = tmp_path / 'region.c'
    source.write_text(OPENMP_REGION)
    library = tmp_path / 'libregion.so'
    subprocess.run(['gcc', '-O1', '-fopenmp', '-shared', '-fPIC', str(source), '-o',
                    str(library)], check=True, timeout=120)
    result, summary = run_native(tmp_path, f'''
        import ctypes
        import paddle_prof
        lib = ctypes.CDLL({str(library)!r})
        lib.region.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_size_t]
        lib.region(0, 4, 1 << 20)  # libgomp starts its threads: not the op's
        with paddle_prof.record_event('outer'):
            with paddle_prof.record_event('parallel_op'):
                lib.region(1, 4, 1 << 20)
    ''')
    rows = {e['name']: e for e in summary['events']}
    # The starting thread's block is the op's as it always was; the other three are
    # the workers'.
    assert rows['parallel_op']['memory']['native']['live_bytes'] == 4 << 20
    assert rows['parallel_op']['memory']['native']['alloc_count'] == 1


# The peak inside one call's native interval, with another thread holding its own block
# in an interval of its own: neither interval is closed at the peak, yet the place's
# peak is exact and its holders add up to it.
PEAK_INSIDE_AN_INTERVAL = '''
    import ctypes, json, threading
    import paddle_prof
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free(libc.malloc(1))  # ctypes' call path, warmed up
    holding, done = threading.Event(), threading.Event()

    def other():
        with paddle_prof.record_event('other'):
            block = libc.malloc(5 << 20)
        holding.set()
        done.wait()
        libc.free(block)

    thread = threading.Thread(target=other)
    thread.start()
    holding.wait()
    with paddle_prof.record_event('op'):
        big = libc.malloc(30 << 20)
        libc.free(big)
        kept = libc.malloc(1 << 20)
    done.set()
    thread.join()
'''


def test_native_peak_is_exact_inside_intervals_and_its_holders_add_up(tmp_path):
    result, summary = run_native(tmp_path, PEAK_INSIDE_AN_INTERVAL)
    [place] = [p for p in summary['places'] if p['place'] == 'native']
    holders = {h['name']: h['bytes'] for h in place['at_peak']}
    assert holders['op'] == 30 << 20
    assert holders['other'] == 5 << 20
    assert sum(h['bytes'] for h in place['at_peak']) == place['peak_bytes']
    assert place['peak_bytes'] - place['start_bytes'] >= 35 << 20
    rows = {e['name']: e['memory']['native'] for e in summary['events']}
    assert rows['op']['peak_bytes'] == 30 << 20 and rows['op']['live_bytes'] == 1 << 20
    assert not any('peak_bytes is' in n for n in summary.get('notes', []) + summary['warnings'])


def test_a_numpy_scripts_native_peak_is_its_arrays(tmp_path):
    np = pytest.importorskip('numpy')
    result, summary = run_native(tmp_path, '''
        import numpy as np
        a = np.ones(1_000_000)
        b = np.ones(3_000_000)
        del b
    ''')
    [place] = [p for p in summary['places'] if p['place'] == 'native']
    # Both arrays' buffers (8,000,000 and 24,000,000 bytes) were live at the peak, held by
    # no event (with the interpreter's own few blocks).
    holders = {h['name']: h['bytes'] for h in place['at_peak']}
    assert 32_000_000 <= holders['[no event]'] < 32_000_000 + (64 << 10)
    assert sum(h['bytes'] for h in place['at_peak']) == place['peak_bytes']
    assert place['end_bytes'] - place['start_bytes'] >= 8_000_000
    assert 'Memory on native: peak ' in result.stdout


FORKED_WORKERS = '''
    import ctypes, multiprocessing as mp
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]

    def work(bytes):
        block = libc.malloc(bytes)
        ctypes.memset(block, 1, bytes)
        libc.free(block)
        return bytes

    def child():
        work(24_000_000)

    if __name__ == '__main__':
        mp.set_start_method('fork')
        with mp.Pool(2) as pool:  # its exit ends the workers with SIGTERM
            print(pool.map(work, [16_000_000, 16_000_000], chunksize=1))
        process = mp.Process(target=child)
        process.start()
        process.join()
'''


def test_forked_children_track_their_own_native_memory_above_what_they_inherited(tmp_path):
    result, summary = run_native(tmp_path, FORKED_WORKERS)
    assert not [w for w in summary['warnings'] if 'without writing its profile' in w]
    children = [p for p in summary['places']
                if p['place'].startswith('native') and p.get('process') not in
                (None, summary['process']['pid'])]
    grew = sorted(p['peak_bytes'] - p['start_bytes'] for p in children)
    # Three children: two pool workers (16 MB each, ended by SIGTERM), one Process (24 MB);
    # each starts at the heap it inherited.
    assert len(grew) == 3, summary['places']
    assert 16_000_000 <= grew[0] <= grew[1] < 16_000_000 + (256 << 10), grew
    assert 24_000_000 <= grew[2] < 24_000_000 + (256 << 10), grew
    assert all(p['start_bytes'] > 0 for p in children)


# native=True: the same tracking from inside a running interpreter, no preload, no
# restart; a library loaded in the window is tracked too.
IN_PROCESS = r'''
import ctypes, io, json, subprocess, sys
import numpy as np
import paddle_prof

source, library = sys.argv[1], sys.argv[2]
with paddle_prof.profiler('CPU', native=True, stream=io.StringIO()) as prof:
    a = np.ones(1_000_000)
    b = np.ones(3_000_000)
    del b
    with paddle_prof.record_event('loaded_late'):
        lib = ctypes.CDLL(library)  # loaded in the window
        lib.keep.argtypes = [ctypes.c_size_t]
        lib.keep(5_000_000)
first = prof.report.to_dict()
with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:  # no native: no hooks
    c = np.ones(2_000_000)
second = prof.report.to_dict()
print(json.dumps({'first': first, 'second': second}))
'''


def test_native_true_tracks_every_malloc_from_inside_with_no_preload(tmp_path):
    pytest.importorskip('numpy')
    source = tmp_path / 'keep.c'
    source.write_text('#include <stdlib.h>\n#include <string.h>\nvoid* kept;\n'
                      'void keep(size_t bytes) { kept = malloc(bytes); memset(kept, 1, bytes); }\n')
    # In a folder named paddle_prof, as a virtual environment in a cache may be: still the
    # program's, not the profiler's.
    library = tmp_path / 'paddle_prof' / 'libkeep.so'
    library.parent.mkdir()
    subprocess.run(['gcc', '-O1', '-shared', '-fPIC', str(source), '-o', str(library)],
                   check=True, timeout=120)
    script = tmp_path / 'script.py'
    script.write_text(IN_PROCESS)
    env = {k: v for k, v in os.environ.items() if k != 'LD_PRELOAD'}
    result = subprocess.run([sys.executable, str(script), str(source), str(library)],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    [native] = [p for p in out['first']['places'] if p['place'] == 'native']
    holders = {h['name']: h['bytes'] for h in native['at_peak']}
    # Both arrays were live at the peak; the late library's block came after.
    assert 32_000_000 <= holders['[no event]'] < 32_000_000 + (64 << 10)
    assert sum(holders.values()) == native['peak_bytes']
    rows = {e['name']: e for e in out['first']['events']}
    assert rows['loaded_late']['memory']['native']['live_bytes'] >= 5_000_000
    # A window without native=True: no native memory moves.
    assert all(p['peak_bytes'] == p['start_bytes'] == p['end_bytes']
               for p in out['second']['places'] if p['place'] == 'native')
