"""python3 -m paddle_prof run: profiling a script without touching it."""

import collections
import json
import os
import re
import select
import signal
import subprocess
import sys
import textwrap

import pytest

import paddle_prof
from helpers import run_script


def run(tmp_path, script_text, *options):
    """`python3 -m paddle_prof run OPTIONS -- script.py arg1`, from this directory."""
    return run_script(tmp_path, script_text, 'arg1', run=list(options), cwd=os.getcwd(),
                      check=False)


def env_anywhere():
    """os.environ with PYTHONPATH made absolute, for commands run from another folder."""
    paths = os.environ.get('PYTHONPATH', '').split(os.pathsep)
    return {**os.environ, 'PYTHONPATH': os.pathsep.join(os.path.abspath(p) for p in paths if p)}


def write_module(tmp_path, text):
    """The package `prog` in tmp_path, with `text` as its module prog.main."""
    package = tmp_path / 'prog'
    package.mkdir(exist_ok=True)
    (package / '__init__.py').write_text('')
    (package / 'main.py').write_text(textwrap.dedent(text))


def run_module(tmp_path, module_text, *options):
    """run() for the module form: the text run as `run OPTIONS -m prog.main arg1` from
    tmp_path, as `python3 -m prog.main arg1` would run it there."""
    write_module(tmp_path, module_text)
    return subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', *options, '-m',
                           'prog.main', 'arg1'], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=env_anywhere())


RUNNERS = {'script': run, 'module': run_module}


@pytest.mark.parametrize('form', RUNNERS)
def test_run_profiles_a_script_and_prints_the_table(tmp_path, form):
    result = RUNNERS[form](tmp_path, '''
        import sys
        import paddle_prof
        assert sys.argv[1:] == ['arg1'], sys.argv
        for _ in range(3):
            with paddle_prof.record_event('script_op'):
                pass
        print('script done')
    ''', '--sorted-key', 'calls', '--profile-path', str(tmp_path / 'p.json'))
    assert result.returncode == 0, result.stderr
    assert 'script done' in result.stdout
    assert 'Profiling Report' in result.stdout
    assert 'Sorted by number of calls' in result.stdout
    assert 'script_op' in result.stdout
    assert (tmp_path / 'p.json.summary.json').exists()


def test_run_yields_to_a_script_that_opens_its_own_profiler(tmp_path):
    result = run(tmp_path, '''
        import paddle_prof
        with paddle_prof.record_event('before_own_profiler'):
            pass
        with paddle_prof.profiler('CPU', 'total') as prof:
            with paddle_prof.record_event('own_op'):
                pass
        assert [e.name for e in prof.report.events] == ['own_op']
    ''')
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('Profiling Report') == 1
    assert 'own_op' in result.stdout
    assert 'before_own_profiler' not in result.stdout


# sys.exit's argument: the exit status and stderr python3 ends with.
EXITS = {
    '"fatal: bad config"': (1, 'fatal: bad config\n'),
    'None': (0, ''),
    '3': (3, ''),
    'Message()': (1, 'custom message\n'),  # any other object: its str(), then 1
    "['a', 1]": (1, "['a', 1]\n"),
}


@pytest.mark.parametrize('form', RUNNERS)
@pytest.mark.parametrize('argument', EXITS)
def test_run_ends_as_python_on_sys_exit_and_still_reports(tmp_path, form, argument):
    text = f'''
        import sys
        import paddle_prof

        class Message:
            def __str__(self):
                return 'custom message'

        with paddle_prof.record_event('exiting_op'):
            pass
        sys.exit({argument})
    '''
    result = RUNNERS[form](tmp_path, text)
    assert (result.returncode, result.stderr) == EXITS[argument]
    assert re.search(r'\nexiting_op +1 ', result.stdout), result.stdout
    plain = [str(tmp_path / 'script.py')] if form == 'script' else ['-m', 'prog.main']
    python = subprocess.run([sys.executable, *plain], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path, env=env_anywhere())
    assert (python.returncode, python.stderr) == EXITS[argument]


def summary_calls(path):
    with open(f'{path}.summary.json') as f:
        return {e['name']: e['calls'] for e in json.load(f)['events']}


def trace_calls_and_pids(path):
    with open(path) as f:
        events = [e for e in json.load(f)['traceEvents'] if e['ph'] == 'X']
    return collections.Counter(e['name'] for e in events), {e['pid'] for e in events}


@pytest.mark.parametrize('signum', [signal.SIGTERM, signal.SIGHUP])
def test_run_reports_when_a_signal_ends_the_script(tmp_path, signum):
    script = tmp_path / 'script.py'
    script.write_text(textwrap.dedent('''
        import sys
        import time
        import paddle_prof
        for _ in range(3):
            with paddle_prof.record_event('script_op'):
                pass
        print('ready', flush=True)
        time.sleep(120)
    '''))
    path = tmp_path / 'p.json'
    proc = subprocess.Popen([sys.executable, '-m', 'paddle_prof', 'run', '--profile-path',
                             str(path), '--', str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # as a shell would leave it to a job of its own
                            preexec_fn=lambda: signal.signal(signum, signal.SIG_DFL))
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready and proc.stdout.readline() == 'ready\n'
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == -signum, err
    assert out.count('Profiling Report') == 1
    assert re.search(r'\nscript_op +3 ', out), out
    assert summary_calls(path) == {'script_op': 3}
    # The program runs in a process of its own, which run waits for.
    with open(f'{path}.summary.json') as f:
        program = json.load(f)['process']['pid']
    assert program != proc.pid
    assert trace_calls_and_pids(path) == ({'script_op': 3}, {program})


@pytest.mark.parametrize('child_ends', ['', 'sys.exit(0)'])
def test_run_a_forked_child_neither_reports_nor_writes_the_parents_files(tmp_path, child_ends):
    path = tmp_path / 'p.json'
    result = run(tmp_path, f'''
        import os
        import sys
        import time
        import paddle_prof
        for _ in range(2):
            with paddle_prof.record_event('parent_op'):
                pass
        parent = os.getpid()
        if os.fork() == 0:
            # Last to exit: what it would write at exit would be the last word.
            for _ in range(3000):
                if os.getppid() != parent:
                    break
                time.sleep(0.01)
            for _ in range(5):
                with paddle_prof.record_event('child_op'):
                    pass
            {child_ends}
    ''', '--profile-path', str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('Profiling Report') == 1, result.stdout
    assert summary_calls(path) == {'parent_op': 2}
    assert trace_calls_and_pids(path)[0] == {'parent_op': 2}


def test_run_writes_a_snapshot_at_each_snapshot_signal_and_goes_on(tmp_path):
    path = tmp_path / 'p.json'
    result = run(tmp_path, f'''
        import json, os, signal, time
        import paddle_prof

        def snapshot_calls(n):
            summary = {str(path)!r} + f'.snapshot{{n}}.summary.json'
            deadline = time.monotonic() + 30
            while not os.path.exists(summary):
                assert time.monotonic() < deadline, summary
                time.sleep(0.01)
            with open(summary) as f:
                return {{e['name']: e['calls'] for e in json.load(f)['events']}}

        for calls in (3, 2):
            for _ in range(calls):
                with paddle_prof.record_event('script_op'):
                    pass
            os.kill(os.getpid(), signal.SIGUSR1)
            print('snapshot', snapshot_calls(0 if calls == 3 else 1))
        print('script done')
    ''', '--snapshot-signal', 'USR1', '--sorted-key', 'calls', '--profile-path', str(path))
    assert result.returncode == 0, result.stderr
    assert "snapshot {'script_op': 3}" in result.stdout
    assert "snapshot {'script_op': 5}" in result.stdout
    assert 'script done' in result.stdout
    assert result.stdout.count('Profiling Report') == 1  # snapshots print nothing
    assert f'paddle_prof: snapshot written to {path}.snapshot1' in result.stderr
    assert (tmp_path / 'p.json.snapshot0').exists()


def test_run_refuses_a_snapshot_signal_that_names_no_signal(tmp_path):
    result = run(tmp_path, 'print("ran")\n', '--snapshot-signal', 'USR9')
    assert result.returncode != 0
    assert "--snapshot-signal: not a signal: 'USR9'" in result.stderr
    assert 'ran' not in result.stdout


TORCH_SCRIPT = '''
    import torch
    a, b = torch.ones(4, 5), torch.ones(5, 6)
    for _ in range(3):
        c = torch.mm(a, b)
    print('mm done', float(c[0, 0]))
'''


def summary_of(tmp_path):
    return json.loads((tmp_path / 'p.json.summary.json').read_text())


def test_run_profiles_torch_ops_and_tensors_when_the_script_imports_torch(tmp_path):
    pytest.importorskip('torch')
    result = run(tmp_path, TORCH_SCRIPT, '--profile-path', str(tmp_path / 'p.json'))
    assert result.returncode == 0, result.stderr
    assert 'mm done 5.0' in result.stdout
    rows = {e['name']: e for e in summary_of(tmp_path)['events']}
    assert rows['aten::mm']['calls'] == 3
    # The three 4x6 float results, tracked by the wrapped CPU allocator.
    assert rows['aten::mm']['memory']['CPU']['alloc_bytes'] == 3 * 4 * 6 * 4


def test_run_no_torch_leaves_torch_unprofiled(tmp_path):
    pytest.importorskip('torch')
    result = run(tmp_path, TORCH_SCRIPT, '--no-torch', '--profile-path', str(tmp_path / 'p.json'))
    assert result.returncode == 0, result.stderr
    assert not any(e['name'].startswith('aten::') for e in summary_of(tmp_path)['events'])


def test_run_does_not_load_torch_for_a_script_that_does_not(tmp_path):
    result = run(tmp_path, '''
        import sys
        print('torch loaded:', 'torch' in sys.modules)
    ''')
    assert result.returncode == 0, result.stderr
    assert 'torch loaded: False' in result.stdout


@pytest.mark.parametrize('form', RUNNERS)
def test_run_reports_what_the_scripts_globals_keep_as_live(tmp_path, form):
    result = RUNNERS[form](tmp_path, '''
        import paddle_prof
        kept = []  # a module-level cache, alive until the interpreter exits
        for _ in range(20):
            with paddle_prof.record_event('keep'):
                kept.append(paddle_prof.empty((1024, 256), dtype='float32'))  # 1 MiB
            paddle_prof.mark_step()
    ''', '--profile-path', str(tmp_path / 'p.json'))
    assert result.returncode == 0, result.stderr
    summary = summary_of(tmp_path)
    cpu = next(p for p in summary['places'] if p['place'] == 'CPU')
    assert cpu['end_bytes'] - cpu['start_bytes'] == 20 * 1048576
    keep = next(e for e in summary['events'] if e['name'] == 'keep')
    assert keep['memory']['CPU']['live_bytes'] == 20 * 1048576
    assert [s['end_bytes']['CPU'] - cpu['start_bytes'] for s in summary['steps']] == [
        (i + 1) * 1048576 for i in range(20)]


def test_run_puts_the_scripts_folder_first_on_the_path(tmp_path):
    (tmp_path / 'sibling.py').write_text('VALUE = 42\n')
    result = run(tmp_path, '''
        import sibling
        print('sibling', sibling.VALUE, __name__)
    ''')
    assert result.returncode == 0, result.stderr
    assert 'sibling 42 __main__' in result.stdout


ARGV = 'import json, sys\nprint(json.dumps(sys.argv))\n'


# run's words, and the sys.argv argv.py gets: the words after it, as python3 gives them.
ARGV_FORMS = [
    (['--', 'argv.py', '--', '--a'], ['argv.py', '--', '--a']),
    (['argv.py', '--', '--a'], ['argv.py', '--', '--a']),
    (['--sorted-key', 'calls', 'argv.py', '--a', 'x'], ['argv.py', '--a', 'x']),
    (['--prof', 'p.json', 'argv.py', '--state', 'GPU'], ['argv.py', '--state', 'GPU']),
    (['--per-thread', 'argv.py', '-m', 'x', '--'], ['argv.py', '-m', 'x', '--']),
]


@pytest.mark.parametrize('words,argv', ARGV_FORMS)
def test_run_gives_the_script_the_words_after_it_as_python3_does(tmp_path, words, argv):
    (tmp_path / 'argv.py').write_text(ARGV)
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', *words],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path,
                            env=env_anywhere())
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[0]) == argv
    assert 'Profiling Report' in result.stdout
    python = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path)
    assert json.loads(python.stdout) == argv
    if '--prof' in words:  # an abbreviated option of run's takes its value
        assert (tmp_path / 'p.json').exists()


MODULE_VIEW = '''
    import json, sys
    print(json.dumps({'name': __name__, 'file': __file__, 'argv': sys.argv,
                      'path0': sys.path[0], 'package': __package__,
                      'spec': __spec__.name}))
'''


@pytest.mark.parametrize('words,module', [
    (['-m', 'prog.main', '--', '--a'], 'main.py'),
    (['-mprog.main', '--', '--a'], 'main.py'),  # joined, as python3 takes it
    (['-m', 'prog', '--', '--a'], '__main__.py'),  # a package runs its __main__
])
def test_run_m_runs_a_module_as_python3_m_does(tmp_path, words, module):
    write_module(tmp_path, MODULE_VIEW)
    (tmp_path / 'prog' / '__main__.py').write_text(textwrap.dedent(MODULE_VIEW))
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--sorted-key',
                             'calls', *words], capture_output=True, text=True, timeout=60,
                            cwd=tmp_path, env=env_anywhere())
    assert result.returncode == 0, result.stderr
    assert 'Sorted by number of calls' in result.stdout
    seen = json.loads(result.stdout.splitlines()[0])
    path = str(tmp_path / 'prog' / module)
    assert seen == {'name': '__main__', 'file': path, 'argv': [path, '--', '--a'],
                    'path0': str(tmp_path), 'package': 'prog',
                    'spec': 'prog.main' if module == 'main.py' else 'prog.__main__'}
    python = subprocess.run([sys.executable, *words], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path, env=env_anywhere())
    assert json.loads(python.stdout) == seen


@pytest.mark.parametrize('form', RUNNERS)
def test_run_keeps_its_files_where_it_started_when_the_program_changes_folder(tmp_path, form):
    text = '''
        import os, signal, time
        import paddle_prof
        os.mkdir('sub')
        os.chdir('sub')
        with paddle_prof.record_event('moved_op'):
            pass
        os.kill(os.getpid(), signal.SIGUSR1)
        deadline = time.monotonic() + 30
        while not any(os.path.exists(f'{d}c.json.snapshot0.summary.json') for d in ('', '../')):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        print('file', __file__)
    '''
    options = ['--profile-path', 'c.json', '--capture', 'capture', '--snapshot-signal', 'USR1']
    if form == 'script':
        (tmp_path / 'script.py').write_text(textwrap.dedent(text))
        command = ['run', *options, 'script.py']
    else:
        write_module(tmp_path, text)
        command = ['run', *options, '-m', 'prog.main']
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', *command],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path,
                            env=env_anywhere())
    assert result.returncode == 0, result.stderr
    assert os.listdir(tmp_path / 'sub') == []
    assert summary_calls(tmp_path / 'c.json') == {'moved_op': 1}
    assert summary_calls(tmp_path / 'c.json.snapshot0') == {'moved_op': 1}
    assert (tmp_path / 'capture').is_dir()
    # As python3 gives it: absolute, so that it still leads to the script from sub/.
    script = tmp_path / ('script.py' if form == 'script' else 'prog/main.py')
    assert f'file {script}\n' in result.stdout


@pytest.mark.parametrize('arguments', [
    ['run', '--', 'no_such_script.py'],
    ['run', '--sorted-key', 'bogus', '--', 'x.py'],
    ['run'],
    ['run', '--per-thread'],
    ['run', '-m'],
    ['run', '-m', 'no_such_module'],
    ['run', '--per-thread', '-m', 'no_such_package.module', 'arg'],
    ['no_such_command'],
])
def test_a_missing_script_or_a_bad_argument_is_one_line_and_exit_2(tmp_path, arguments):
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', *arguments],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ''
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert 'Traceback' not in result.stderr
    said = {
        'no_such_script.py': 'cannot open no_such_script.py: No such file or directory',
        'no_such_module': 'No module named no_such_module',
        'no_such_package.module': "Error while finding module specification for "
                                  "'no_such_package.module' (ModuleNotFoundError: No module "
                                  "named 'no_such_package')",
    }
    for name, line in said.items():
        if name in arguments:
            assert result.stderr == f'paddle_prof run: {line}\n'
    if arguments[-1] == '-m':
        assert result.stderr == 'paddle_prof run: -m needs a module name\n'


ENDINGS = {
    'os._exit(3)': ('os._exit(3)', 3, 'the program exited with status 3 before its profiler '
                                      'stopped (os._exit, or an exit from native code)'),
    'SIGKILL': ('os.kill(os.getpid(), signal.SIGKILL)', -signal.SIGKILL,
                'the program was killed by SIGKILL before its profiler stopped'),
    'SIGSEGV': ('resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); '
                'os.kill(os.getpid(), signal.SIGSEGV)', -signal.SIGSEGV,
                'the program was killed by SIGSEGV before its profiler stopped'),
}


@pytest.mark.parametrize('form', RUNNERS)
@pytest.mark.parametrize('ending', ENDINGS)
def test_run_reports_a_program_that_ends_without_stopping_its_profiler(tmp_path, ending, form):
    statement, returncode, warning = ENDINGS[ending]
    temporary = tmp_path / 'tmp'
    temporary.mkdir()
    path = tmp_path / 'p.json'
    text = textwrap.dedent(f'''
        import os, resource, signal, time
        import paddle_prof
        for _ in range(3):
            with paddle_prof.record_event('script_op'):
                x = paddle_prof.empty((1024, 256), dtype='float32')  # 1 MiB
        time.sleep(0.2)
        print('ending', flush=True)
        {statement}
    ''')
    if form == 'script':
        (tmp_path / 'script.py').write_text(text)
        program = ['--', str(tmp_path / 'script.py')]
    else:
        write_module(tmp_path, text)
        program = ['-m', 'prog.main']
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--profile-path',
                             str(path), *program], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path,
                            env={**env_anywhere(), 'TMPDIR': str(temporary)})
    assert result.returncode == returncode, result.stderr
    assert result.stdout.count('Profiling Report') == 1, result.stdout
    assert result.stdout.index('ending') < result.stdout.index('Profiling Report')
    assert re.search(r'\nscript_op +3 ', result.stdout), result.stdout
    summary = json.loads((tmp_path / 'p.json.summary.json').read_text())
    assert warning in summary['warnings']
    assert summary['wall_ms'] >= 200  # up to the program's end, not its last record
    [place] = summary['places']
    assert place['place'] == 'CPU'  # made after the window opened, named as it was
    assert place['peak_bytes'] - place['start_bytes'] == 2 * 1048576
    assert trace_calls_and_pids(path)[0] == {'script_op': 3}
    assert os.listdir(temporary) == []  # the capture run kept is gone


@pytest.mark.parametrize('form', RUNNERS)
def test_run_with_a_capture_dir_keeps_it_for_recover(tmp_path, form):
    directory = tmp_path / 'capture'
    result = RUNNERS[form](tmp_path, '''
        import os, signal
        import paddle_prof
        with paddle_prof.record_event('script_op'):
            x = paddle_prof.empty((1024, 256), dtype='float32')
        os.kill(os.getpid(), signal.SIGKILL)
    ''', '--capture', str(directory))
    assert result.returncode == -signal.SIGKILL
    assert 'killed by SIGKILL' in result.stdout
    recovered = subprocess.run([sys.executable, '-m', 'paddle_prof', 'recover', str(directory)],
                               capture_output=True, text=True, timeout=120)
    assert recovered.returncode == 0, recovered.stderr
    assert 'Memory on CPU: peak 1.00 MiB' in recovered.stdout, recovered.stdout


def test_run_passes_signals_on_to_the_program(tmp_path):
    script = tmp_path / 'script.py'
    script.write_text(textwrap.dedent('''
        import signal, sys, time
        got = []
        signal.signal(signal.SIGUSR2, lambda s, f: got.append(s))
        print('ready', flush=True)
        deadline = time.monotonic() + 60
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
        print('got', got, flush=True)
    '''))
    proc = subprocess.Popen([sys.executable, '-m', 'paddle_prof', 'run', '--', str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready and proc.stdout.readline() == 'ready\n'
        proc.send_signal(signal.SIGUSR2)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert f'got [{int(signal.SIGUSR2)}]' in out


@pytest.mark.skipif(not os.path.exists(os.path.join(os.path.dirname(paddle_prof.__file__),
                                                    'libpaddle_prof_preload.so')),
                    reason='no preload library built')
def test_run_native_tracks_a_modules_mallocs(tmp_path):
    result = run_module(tmp_path, '''
        import ctypes
        import paddle_prof
        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        with paddle_prof.record_event('native_op'):
            block = libc.malloc(12345)  # kept by the module's globals
    ''', '--native', '--profile-path', str(tmp_path / 'p.json'))
    assert result.returncode == 0, result.stderr
    assert 'Memory on native' in result.stdout
    rows = {e['name']: e for e in summary_of(tmp_path)['events']}
    assert rows['native_op']['memory']['native']['live_bytes'] == 12345


def test_run_hands_its_torch_hooks_to_a_scheduled_window_of_the_script(tmp_path):
    # A window whose schedule waits at its first step opens no recording at once; the
    # hooks run installed for its own window are handed over as it opens, and none is
    # left behind when it closes.
    pytest.importorskip('torch')
    result = run(tmp_path, '''
        import io
        import torch
        import paddle_prof, paddle_prof.torch

        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with paddle_prof.torch.profiler('CPU', stream=io.StringIO(),
                                        schedule=paddle_prof.schedule(wait=1, active=2)) as prof:
            for _ in range(3):
                model(torch.ones(4)).sum().backward()
                optimizer.step()
                optimizer.zero_grad()
                prof.step()
        print('modules', [(m.path, m.calls) for m in prof.reports[0].modules])
        print('call', torch.nn.Module.__call__.__qualname__)
    ''')
    assert result.returncode == 0, result.stderr[-3000:]
    assert "modules [('Linear', 2)]" in result.stdout, result.stdout
    assert 'call Module._wrapped_call_impl' in result.stdout or \
        'call Module._call_impl' in result.stdout, result.stdout
