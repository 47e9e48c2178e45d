"""Child processes of a profiled window (follow_children): forked, spawned and forkserver
children and DataLoader workers profile themselves, and the parent's report merges them.

Each test runs a small script in a process of its own, bounded by a timeout, so that a
child that hangs fails the test instead of the suite.
"""

import json
import os
import textwrap

import pytest

import paddle_prof
from helpers import calls, run_script

PRELOAD = os.path.join(os.path.dirname(paddle_prof.__file__), 'libpaddle_prof_preload.so')


def child_warnings(summary):
    return [w for w in summary['warnings'] if 'child' in w or w.startswith('pid ')]


DATASET = '''
    import torch

    class Ones(torch.utils.data.Dataset):
        """Each item: one aten::ones and one aten::add."""

        def __len__(self):
            return 8

        def __getitem__(self, index):
            return torch.ones(4).add(1)
'''


@pytest.mark.torch
@pytest.mark.parametrize('context', [None, 'spawn'])
def test_dataloader_workers_are_merged_with_exact_calls(tmp_path, context):
    # spawn: the workers import the dataset's module, so it lives in a file of its own.
    (tmp_path / 'ones_dataset.py').write_text(textwrap.dedent(DATASET))
    run_script(tmp_path, f'''
        import io, json, sys
        import torch, paddle_prof, paddle_prof.torch
        from ones_dataset import Ones

        if __name__ == '__main__':
            for per_process in (False, True):
                with paddle_prof.torch.profiler('CPU', profile_path=sys.argv[1] + str(per_process),
                                                per_process=per_process,
                                                record_shapes=per_process,
                                                stream=io.StringIO()) as prof:
                    loader = torch.utils.data.DataLoader(Ones(), batch_size=2, num_workers=2,
                                                         multiprocessing_context={context!r})
                    assert sum(1 for _ in loader) == 4
                with open(sys.argv[1] + str(per_process) + '.table', 'w') as table:
                    table.write(prof.report.table(row_limit=None))
    ''', str(tmp_path / 'p.json.'))
    merged = json.loads((tmp_path / 'p.json.False.summary.json').read_text())
    assert calls(merged, 'aten::add') == 8
    assert calls(merged, 'aten::ones') == 8
    assert not child_warnings(merged), merged['warnings']
    parent = merged['process']['pid']
    workers = sorted(merged['processes'], key=lambda p: p['worker_id'])
    assert [(w['role'], w['worker_id']) for w in workers] == [('worker', 0), ('worker', 1)]
    pids = [w['pid'] for w in workers]
    assert parent not in pids and pids[0] != pids[1]
    for worker in workers:
        assert os.path.exists(worker['summary_path'])
        assert worker['summary_path'].startswith(str(tmp_path / 'p.json.False.children') + '/')
    places = {(p['place'], p['process']) for p in merged['places']}
    assert {('CPU', pid) for pid in pids} <= places
    assert all(e.get('process') is None for e in merged['events'])

    split = json.loads((tmp_path / 'p.json.True.summary.json').read_text())
    table = (tmp_path / 'p.json.True.table').read_text()
    for worker in split['processes']:
        pid = worker['pid']
        assert calls(split, 'aten::add', process=pid) == 4  # 2 batches of 2 items each
        assert calls(split, 'aten::ones', process=pid) == 4
        assert f'pid{pid}::aten::add' in table
        # record_shapes reached the worker too: a row per input shape.
        assert {e['tag'] for e in split['events']
                if e['name'] == 'aten::add' and e.get('process') == pid} == {'[[4], []]'}
    assert calls(split, 'aten::add', process=split['process']['pid']) == 0


FORKING = '''
    import os
    import paddle_prof

    with paddle_prof.record_event('parent_work'):
        pass
    pid = os.fork()
    if pid == 0:
        for _ in range(3):
            with paddle_prof.record_event('child_work'):
                pass
        os._exit(0)
    os.waitpid(pid, 0)
    print('pids', os.getpid(), pid)
'''


@pytest.mark.parametrize('how', ['flags', 'run'])
def test_a_forked_child_of_the_whole_program_profile_is_merged_into_the_parents(tmp_path, how):
    profile = tmp_path / 'p.json'
    if how == 'flags':
        result = run_script(tmp_path, FORKING, env={'FLAGS_paddle_prof_state': 'CPU',
                                                    'FLAGS_paddle_prof_path': str(profile)})
    else:
        result = run_script(tmp_path, FORKING, run=['--profile-path', str(profile)])
    parent, child = (int(p) for p in result.stdout.split('pids ')[1].split()[:2])
    assert result.stdout.count('Profiling Report') == 1, result.stdout  # the parent's alone
    summary = json.loads((tmp_path / 'p.json.summary.json').read_text())
    assert summary['process']['pid'] == parent
    assert summary['process']['role'] == 'main'
    assert calls(summary, 'child_work') == 3
    assert calls(summary, 'parent_work') == 1
    assert [(p['pid'], p['role'], p['calls']) for p in summary['processes']] == [
        (child, 'child', 3)]
    assert not child_warnings(summary), summary['warnings']
    trace = json.loads(profile.read_text())
    assert {e['pid'] for e in trace['traceEvents'] if e.get('ph') == 'X'} == {parent}
    own = json.loads((tmp_path / 'p.json.children' / f'{child}.json.summary.json').read_text())
    assert own['process']['parent_pid'] == parent
    assert not (tmp_path / 'p.json.children' / f'{child}.json.running').exists()


@pytest.mark.parametrize('method', ['spawn', 'forkserver', 'fork'])
def test_multiprocessing_children_are_merged_with_exact_calls(tmp_path, method):
    run_script(tmp_path, f'''
        import io, multiprocessing, sys
        import paddle_prof

        def work(times):
            for _ in range(times):
                with paddle_prof.record_event('child_work'):
                    pass

        if __name__ == '__main__':
            context = multiprocessing.get_context({method!r})
            with paddle_prof.profiler('CPU', profile_path=sys.argv[1], stream=io.StringIO()):
                children = [context.Process(target=work, args=(times,)) for times in (3, 4)]
                for child in children:
                    child.start()
                for child in children:
                    child.join()
                    assert child.exitcode == 0, child.exitcode
    ''', str(tmp_path / 'p.json'))
    summary = json.loads((tmp_path / 'p.json.summary.json').read_text())
    assert calls(summary, 'child_work') == 7
    assert sorted((p['role'], p['calls']) for p in summary['processes']) == [
        ('child', 3), ('child', 4)]
    assert not child_warnings(summary), summary['warnings']


def assert_named_running_then_written(result, tmp_path, event):
    """The script printed its child's pid and the window's warnings as its last line: the
    child was named as still running, and its profile, with one call of `event`, came
    where the warning said."""
    said = json.loads(result.stdout.splitlines()[-1])
    child = said['child']
    profile = tmp_path / 'p.json.children' / f'{child}.json'
    assert (f'child {child} is still running; its profile will be written to {profile}'
            in said['warnings']), said['warnings']
    late = json.loads(profile.with_name(profile.name + '.summary.json').read_text())
    assert calls(late, event) == 1


def test_a_child_still_running_at_the_stop_is_named_with_where_its_profile_will_be(tmp_path):
    result = run_script(tmp_path, '''
        import io, json, os, sys
        import paddle_prof

        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        with paddle_prof.profiler('CPU', profile_path=sys.argv[1], stream=io.StringIO()) as prof:
            pid = os.fork()
            if pid == 0:
                os.write(ready_w, b'r')
                os.read(go_r, 1)  # until the parent's window has stopped
                with paddle_prof.record_event('late_work'):
                    pass
                os._exit(0)
            os.read(ready_r, 1)
        os.write(go_w, b'g')
        os.waitpid(pid, 0)
        print(json.dumps({'child': pid, 'warnings': prof.report.warnings}))
    ''', str(tmp_path / 'p.json'))
    assert_named_running_then_written(result, tmp_path, 'late_work')


def test_a_spawned_child_not_yet_running_at_the_stop_is_named_too(tmp_path):
    result = run_script(tmp_path, """
        import io, json, multiprocessing, sys
        import paddle_prof

        def work():
            with paddle_prof.record_event('spawned_work'):
                pass

        if __name__ == '__main__':
            with paddle_prof.profiler('CPU', profile_path=sys.argv[1], stream=io.StringIO()) as prof:
                child = multiprocessing.get_context('spawn').Process(target=work)
                child.start()  # its interpreter is still starting as the window stops
            child.join()
            print(json.dumps({'child': child.pid, 'warnings': prof.report.warnings}))
    """, str(tmp_path / 'p.json'))
    assert_named_running_then_written(result, tmp_path, 'spawned_work')


def test_without_follow_children_a_forked_child_is_neither_profiled_nor_merged(tmp_path):
    run_script(tmp_path, '''
        import io, os, sys
        import paddle_prof

        with paddle_prof.profiler('CPU', profile_path=sys.argv[1], stream=io.StringIO(),
                                  follow_children=False) as prof:
            pid = os.fork()
            if pid == 0:
                with paddle_prof.record_event('child_work'):
                    pass
                os._exit(0)
            os.waitpid(pid, 0)
        assert prof.report.processes == [], prof.report.processes
        assert not any(e.name == 'child_work' for e in prof.report.events)
    ''', str(tmp_path / 'p.json'))
    assert not (tmp_path / 'p.json.children').exists()


@pytest.mark.skipif(not os.path.exists(PRELOAD), reason='no preload library built')
@pytest.mark.parametrize('start', ['spawn', 'fork'])
def test_a_child_under_run_native_tracks_its_native_memory(tmp_path, start):
    result = run_script(tmp_path, '''
        import ctypes, multiprocessing, os, sys
        import paddle_prof

        def work():
            libc = ctypes.CDLL(None)
            libc.malloc.restype = ctypes.c_void_p
            libc.malloc.argtypes = [ctypes.c_size_t]
            libc.free.argtypes = [ctypes.c_void_p]
            # Warm up ctypes' call path and the first scope's Python objects.
            with paddle_prof.record_event('warm_up'):
                libc.free(libc.malloc(12345))
            with paddle_prof.record_event('child_malloc'):
                libc.malloc(12345)
            print('child LD_PRELOAD:', os.environ.get('LD_PRELOAD'))

        if __name__ == '__main__':
            child = multiprocessing.get_context(sys.argv[1]).Process(target=work)
            child.start()
            child.join()
            print('parent LD_PRELOAD:', os.environ.get('LD_PRELOAD'))
    ''', start, run=['--native', '--profile-path', str(tmp_path / 'p.json')])
    # The library took itself out of both environments as it loaded.
    assert 'child LD_PRELOAD: None' in result.stdout
    assert 'parent LD_PRELOAD: None' in result.stdout
    summary = json.loads((tmp_path / 'p.json.summary.json').read_text())
    row = next(e for e in summary['events'] if e['name'] == 'child_malloc')
    assert row['memory']['native']['live_bytes'] == 12345
    [child] = summary['processes']
    assert any(p['place'] == 'native' and p['process'] == child['pid'] for p in summary['places'])


def test_a_reset_in_the_parent_keeps_the_children_forked_before_it(tmp_path):
    # DataLoader workers are forked as the loop starts, before a warm-up reset.
    run_script(tmp_path, '''
        import io, os, sys
        import paddle_prof

        with paddle_prof.profiler('CPU', profile_path=sys.argv[1], stream=io.StringIO()) as prof:
            go_r, go_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.read(go_r, 1)
                with paddle_prof.record_event('child_work'):
                    pass
                os._exit(0)
            paddle_prof.reset_profiler()
            os.write(go_w, b'g')
            os.waitpid(pid, 0)
        assert [(p.pid, p.calls) for p in prof.report.processes] == [(pid, 1)], prof.report.processes
    ''', str(tmp_path / 'p.json'))


def test_a_spawned_child_ended_by_sigterm_still_writes_its_profile(tmp_path):
    result = run_script(tmp_path, '''
        import io, multiprocessing, sys, time
        import paddle_prof

        def work(ready):
            with paddle_prof.record_event('before_sigterm'):
                pass
            ready.set()
            time.sleep(60)

        if __name__ == '__main__':
            context = multiprocessing.get_context('spawn')
            ready = context.Event()
            with paddle_prof.profiler('CPU', profile_path=sys.argv[1], stream=io.StringIO()) as prof:
                child = context.Process(target=work, args=(ready,))
                child.start()
                assert ready.wait(60)
                child.terminate()
                child.join()
            print('exitcode', child.exitcode, [(p.role, p.calls) for p in prof.report.processes])
    ''', str(tmp_path / 'p.json'))
    assert "exitcode -15 [('child', 1)]" in result.stdout, result.stdout


def test_a_child_forked_just_before_the_stop_is_always_named(tmp_path):
    # The window stops as soon as fork() returns in the parent, 20 times: each child is
    # named (its marker written before the parent goes on), none missed.
    result = run_script(tmp_path, '''
        import io, json, os, sys
        import paddle_prof

        missed = []
        for i in range(20):
            go_r, go_w = os.pipe()
            with paddle_prof.profiler('CPU', profile_path=f'{sys.argv[1]}{i}.json',
                                      stream=io.StringIO()) as prof:
                pid = os.fork()
                if pid == 0:
                    os.read(go_r, 1)  # until the parent's window has stopped
                    os._exit(0)
            os.write(go_w, b'g')
            os.waitpid(pid, 0)
            if not any(f'child {pid} is still running' in w for w in prof.report.warnings):
                missed.append((pid, prof.report.warnings))
        print(json.dumps(missed))
    ''', str(tmp_path / 'p'))
    assert json.loads(result.stdout.splitlines()[-1]) == []
