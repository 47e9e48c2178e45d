"""paddle_prof.profiler and friends, as a Paddle or PyTorch user meets them."""

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

import paddle_prof
from paddle_prof import _core


def rows(report):
    return {(e.name, e.tag): e for e in report.events}


def test_reset_at_iteration_two_of_ten_leaves_eight_calls(capsys):
    # The usage from Paddle's memory profiler pull request, on this API.
    with paddle_prof.profiler('CPU', 'total') as prof:
        for it in range(10):
            if it == 2:
                paddle_prof.reset_profiler()
            with paddle_prof.record_event('mul'):
                with paddle_prof.record_event('elementwise_add'):
                    pass
            with paddle_prof.record_event('softmax'):
                pass
            paddle_prof.mark_step()
    r = rows(prof.report)
    assert r[('mul', None)].calls == 8
    assert r[('elementwise_add', None)].calls == 8
    assert r[('softmax', None)].calls == 8
    assert len(prof.report.steps) == 8
    assert [s.step for s in prof.report.steps] == list(range(8))
    out = capsys.readouterr().out
    assert 'Profiling Report' in out and 'elementwise_add' in out


def test_times_keep_their_invariants():
    with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
        for i in range(20):
            with paddle_prof.record_event('outer'):
                sum(range(100 * (i % 4)))
                with paddle_prof.record_event('inner'):
                    sum(range(1000))
    ratio_sum = 0.0
    for e in prof.report.events:
        assert e.min_ms <= e.ave_ms <= e.max_ms
        assert e.ave_ms * e.calls == pytest.approx(e.total_ms, rel=1e-12)
        assert e.self_ms <= e.total_ms
        ratio_sum += e.ratio
    assert ratio_sum == pytest.approx(1.0, abs=1e-12)
    r = rows(prof.report)
    assert r[('outer', None)].self_ms == pytest.approx(
        r[('outer', None)].total_ms - r[('inner', None)].total_ms, abs=1e-9)
    assert prof.report.wall_ms >= r[('outer', None)].total_ms


@pytest.mark.parametrize('key', ['calls', 'total', 'self', 'max', 'min', 'ave', None])
def test_every_sorted_key_orders_the_rows(key):
    with paddle_prof.profiler('CPU', key, stream=io.StringIO()) as prof:
        for _ in range(6):
            with paddle_prof.record_event('many'):
                pass
        for n in (1, 2):
            with paddle_prof.record_event('long'):
                sum(range(20000 * n))
        with paddle_prof.record_event('once'):
            sum(range(5000))
    field = {'calls': 'calls', 'total': 'total_ms', 'self': 'self_ms', 'max': 'max_ms',
             'min': 'min_ms', 'ave': 'ave_ms', None: 'total_ms'}[key]
    values = [getattr(e, field) for e in prof.report.events]
    assert len(values) == 3
    assert values == sorted(values, reverse=True)
    assert prof.report.sorted_by == (key or 'total')


@pytest.mark.parametrize('key', ['peak_memory', 'live_memory'])
def test_memory_sort_keys_order_the_rows(key):
    kept = []
    with paddle_prof.profiler('CPU', key, stream=io.StringIO()) as prof:
        for name, peak, live in (('a', 1000, 900), ('b', 3000, 100), ('c', 2000, 500)):
            with paddle_prof.record_event(name):
                tmp = paddle_prof.empty(peak - live, 'uint8')
                kept.append(paddle_prof.empty(live, 'uint8'))
                del tmp
    names = [e.name for e in prof.report.events]
    assert names == (['b', 'c', 'a'] if key == 'peak_memory' else ['a', 'c', 'b'])


def test_states_and_keys_are_the_cores_and_checked_by_it():
    assert paddle_prof.STATES == ('CPU', 'GPU', 'All')
    assert paddle_prof.SORTED_KEYS == (None, 'calls', 'total', 'self', 'max', 'min', 'ave',
                                       'peak_memory', 'live_memory')
    for key in ('', 'default', 'Total'):  # the C++ flag's spellings of the default are not keys
        with pytest.raises(ValueError, match=r"^sorted_key: unknown sorting key"):
            paddle_prof.profiler('CPU', key)
    with pytest.raises(ValueError, match=r"^state: unknown profiler state 'cpu'; valid states"):
        paddle_prof.profiler('cpu')
    for not_a_name in (1, b'CPU', '\udc80'):  # the last is no valid Unicode
        with pytest.raises(ValueError, match=r"state must be one of 'CPU', 'GPU', 'All'; got "):
            paddle_prof.profiler(not_a_name)
        with pytest.raises(ValueError, match=r"sorted_key must be one of None, 'calls'"):
            paddle_prof.profiler('CPU', not_a_name)


def test_wrong_arguments_raise_the_documented_errors():
    with pytest.raises(ValueError, match="'CPU', 'GPU', 'All'"):
        paddle_prof.profiler('TPU')
    with pytest.raises(ValueError, match="'calls', 'total'"):
        paddle_prof.profiler('CPU', 'totl')
    paddle_prof.start_profiler('CPU')
    with pytest.raises(ValueError, match='sorted_key'):
        paddle_prof.stop_profiler('bogus')
    paddle_prof.stop_profiler(print_report=False)  # a wrong key stopped nothing
    try:
        paddle_prof.start_profiler('GPU')
    except RuntimeError as e:  # no CUDA build, driver or device: the reason is given
        assert 'cannot profile the GPU: ' in str(e)
        with pytest.raises(RuntimeError, match='cannot profile the GPU: '):
            with paddle_prof.profiler('All'):
                pass
    else:
        paddle_prof.stop_profiler(print_report=False)
    with pytest.raises(RuntimeError, match='no profiler is running'):
        paddle_prof.stop_profiler()
    paddle_prof.reset_profiler()  # harmless while off
    paddle_prof.mark_step()


def test_a_profiler_inside_a_running_profiler_is_a_runtime_error():
    with paddle_prof.profiler('CPU', stream=io.StringIO()) as outer:
        with paddle_prof.record_event('kept'):
            pass
        with pytest.raises(RuntimeError, match='already running'):
            with paddle_prof.profiler('CPU'):
                pass
    assert rows(outer.report)[('kept', None)].calls == 1


def test_an_exception_inside_the_block_still_stops_and_prints():
    out = io.StringIO()
    prof = paddle_prof.profiler('CPU', stream=out)
    with pytest.raises(KeyError):
        with prof:
            with paddle_prof.record_event('failing_op'):
                raise KeyError('boom')
    assert not paddle_prof._core.is_enabled()
    assert rows(prof.report)[('failing_op', None)].calls == 1
    assert 'failing_op' in out.getvalue()


def test_the_table_goes_through_sys_stdout_at_exit():
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        with paddle_prof.profiler('CPU'):
            with paddle_prof.record_event('redirected'):
                pass
    assert 'redirected' in captured.getvalue()


def test_summary_file_equals_to_dict(tmp_path):
    path = tmp_path / 'profile.json'
    with paddle_prof.profiler('CPU', 'calls', profile_path=str(path), stream=io.StringIO()) as prof:
        for _ in range(3):
            with paddle_prof.record_event('op', tag='[3, 4]'):
                pass
        paddle_prof.mark_step()
    summary = json.loads((tmp_path / 'profile.json.summary.json').read_text())
    assert summary == prof.report.to_dict()
    assert summary['version'] == 1 and summary['state'] == 'CPU' and summary['sorted_by'] == 'calls'
    trace = json.loads(path.read_text())
    assert sum(1 for e in trace['traceEvents'] if e['ph'] == 'X' and e['name'] == 'op') == 3
    assert prof.report.to_dict() is not prof.report.to_dict()  # a copy each time


def test_report_attributes_are_the_summarys_whichever_is_read_first():
    with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
        for _ in range(4):
            with paddle_prof.record_event('op'):
                pass
    first_attribute = prof.report
    assert rows(first_attribute)[('op', None)].calls == 4
    assert first_attribute.process.role == 'main' and first_attribute.state == 'CPU'
    first_dict = paddle_prof.Report(first_attribute._native)
    summary = first_dict.to_dict()
    assert [e['name'] for e in summary['events']] == [e.name for e in first_dict.events]
    assert first_dict.wall_ms == summary['wall_ms'] == first_attribute.wall_ms
    with pytest.raises(AttributeError, match='no_such_field'):
        first_dict.no_such_field


def test_an_unwritable_path_still_returns_and_prints_the_report(capfd):
    with paddle_prof.profiler('CPU', profile_path='/nonexistent-dir/p.json') as prof:
        with paddle_prof.record_event('op'):
            pass
    out, err = capfd.readouterr()
    assert rows(prof.report)[('op', None)].calls == 1
    assert 'Profiling Report' in out
    assert "cannot write the trace to '/nonexistent-dir/p.json'" in err


def test_start_and_stop_profiler():
    paddle_prof.start_profiler('CPU')
    with paddle_prof.record_event('step'):
        pass
    report = paddle_prof.stop_profiler('total', print_report=False)
    assert rows(report)[('step', None)].calls == 1
    assert isinstance(report.table(detailed=True), str)


def test_record_event_as_a_decorator_counts_every_call_including_recursion():
    @paddle_prof.record_event('fib')
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
        fib(10)
    assert rows(prof.report)[('fib', None)].calls == 177


def test_two_python_threads_recording_at_once_lose_no_event():
    barrier = threading.Barrier(2)

    def work(name):
        barrier.wait()
        for _ in range(2000):
            with paddle_prof.record_event(name):
                pass

    with paddle_prof.profiler('CPU', per_thread=True, stream=io.StringIO()) as prof:
        threads = [threading.Thread(target=work, args=(f'worker{i}',)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    r = {e.name: e for e in prof.report.events}
    assert r['worker0'].calls == 2000 and r['worker1'].calls == 2000
    assert r['worker0'].thread != r['worker1'].thread
    assert 'thread' in prof.report.table()


def test_record_event_checks_its_arguments():
    with pytest.raises(TypeError, match='^record_event name must be a str, got int$'):
        paddle_prof.record_event(3)
    with pytest.raises(TypeError, match='^record_event tag must be a str or None, got list$'):
        paddle_prof.record_event('op', tag=[1, 2])
    paddle_prof.record_event('unused').__exit__(None, None, None)  # no enter: harmless
    scope = paddle_prof.record_event(name='op', tag='t')
    assert (scope.name, scope.tag) == ('op', 't')


def test_one_record_event_entered_recursively_from_two_threads_counts_every_entry():
    scope = paddle_prof.record_event('shared')
    barrier = threading.Barrier(2)

    def nest(depth):
        with scope:
            if depth > 1:
                nest(depth - 1)

    def work():
        barrier.wait()
        for _ in range(500):
            nest(4)

    with paddle_prof.profiler('CPU', per_thread=True, stream=io.StringIO()) as prof:
        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    rows = [e for e in prof.report.events if e.name == 'shared']
    assert [e.calls for e in rows] == [2000, 2000]
    assert len({e.thread for e in rows}) == 2
    assert all(e.self_ms < e.total_ms for e in rows)  # each level's total holds the next
    assert not prof.report.warnings


def test_a_record_event_suspended_in_a_generator_ends_when_the_generator_does():
    def produce():
        with paddle_prof.record_event('produce'):
            yield 1

    with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
        gen = produce()
        next(gen)
        with paddle_prof.record_event('consume'):
            next(gen, None)  # 'produce' ends first, closing 'consume' with it
        for _ in range(3):
            with paddle_prof.record_event('after'):
                pass
    assert {e.name: e.calls for e in prof.report.events} == {
        'produce': 1, 'consume': 1, 'after': 3}
    assert len(prof.report.warnings) == 1, prof.report.warnings


def test_names_made_afresh_for_each_scope_keep_their_rows_across_a_reset():
    with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
        for i in range(70):
            with paddle_prof.record_event(f'n{i % 7}', tag=f't{i % 2}'):
                pass
        paddle_prof.reset_profiler()
        for i in range(700):
            with paddle_prof.record_event(f'n{i % 7}'):
                pass
    assert {e.name: e.calls for e in prof.report.events} == {f'n{k}': 100 for k in range(7)}


def test_profile_path_takes_str_and_path_like_and_refuses_the_rest(tmp_path):
    for bad in (b'/tmp/profile.json', 123, 4.5):
        with pytest.raises(TypeError, match='profile_path must be a str or an os.PathLike'):
            paddle_prof.profiler('CPU', profile_path=bad)
        paddle_prof.start_profiler('CPU')
        with pytest.raises(TypeError, match='profile_path'):
            paddle_prof.stop_profiler(profile_path=bad)
        paddle_prof.stop_profiler(stream=io.StringIO())
    with paddle_prof.profiler('CPU', profile_path=tmp_path / 'p.json', stream=io.StringIO()):
        with paddle_prof.record_event('op'):
            pass
    assert json.loads((tmp_path / 'p.json.summary.json').read_text())['events'][0]['calls'] == 1
    assert not (tmp_path / "b'").exists() and not (tmp_path / '123').exists()


class FailingStream:
    def write(self, text):
        raise OSError('the stream is closed')


def test_a_stream_that_raises_keeps_the_report():
    with pytest.raises(OSError, match='the stream is closed'):
        with paddle_prof.profiler('CPU', stream=FailingStream()) as prof:
            with paddle_prof.record_event('op'):
                pass
    assert prof.report is not None
    assert rows(prof.report)[('op', None)].calls == 1


def test_the_blocks_own_exception_is_never_hidden_by_the_exit():
    with pytest.raises(ValueError, match='from the block'):
        with pytest.warns(RuntimeWarning, match='could not finish the report'):
            with paddle_prof.profiler('CPU', stream=FailingStream()) as prof:
                with paddle_prof.record_event('op'):
                    pass
                raise ValueError('from the block')
    assert rows(prof.report)[('op', None)].calls == 1


def test_stop_profiler_inside_the_block_is_not_an_error_at_exit():
    with pytest.warns(RuntimeWarning, match='stopped inside the block'):
        with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
            with paddle_prof.record_event('op'):
                pass
            stopped = paddle_prof.stop_profiler(stream=io.StringIO())
    assert prof.report is stopped
    assert rows(stopped)[('op', None)].calls == 1
    with pytest.raises(ValueError, match='inner'):
        with pytest.warns(RuntimeWarning, match='stopped inside the block'):
            with paddle_prof.profiler('CPU', stream=io.StringIO()):
                paddle_prof.stop_profiler(stream=io.StringIO())
                raise ValueError('inner')
    # Stopped by something else than stop_profiler(): no report of another window.
    with pytest.warns(RuntimeWarning, match='stopped inside the block'):
        with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
            _core.stop_profiler('total', '', False)
    assert prof.report is None


def test_ctrl_c_while_the_report_is_built_keeps_it(monkeypatch):
    original = paddle_prof.profiler.__init__.__globals__['_core'].stop_profiler

    def interrupted_stop(*args):
        native = original(*args)
        os.kill(os.getpid(), signal.SIGINT)  # lands while the Python side builds the report
        for _ in range(1000):
            pass
        return native

    core = paddle_prof.profiler.__init__.__globals__['_core']
    monkeypatch.setattr(core, 'stop_profiler', interrupted_stop)
    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        with paddle_prof.profiler('CPU', stream=out) as prof:
            with paddle_prof.record_event('op'):
                pass
    assert rows(prof.report)[('op', None)].calls == 1
    assert 'Profiling Report' in out.getvalue()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    paddle_prof.start_profiler('CPU')
    with pytest.raises(KeyboardInterrupt):
        paddle_prof.stop_profiler(stream=out)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_path_holding_a_nul_byte_is_refused_before_the_window_stops(tmp_path):
    # The system reads a path only up to its NUL: the files would go elsewhere, over
    # one another.
    nul = str(tmp_path / 'p\0evil.json')
    for call in (lambda: paddle_prof.profiler('CPU', profile_path=nul),
                 lambda: paddle_prof.profiler('CPU', oom_path=nul),
                 lambda: paddle_prof.profiler('CPU', capture_dir=nul),
                 lambda: paddle_prof.recover(nul),
                 lambda: paddle_prof.recover(tmp_path, profile_path=nul),
                 lambda: paddle_prof.load(nul)):
        with pytest.raises(ValueError, match=': embedded null byte$'):
            call()
    paddle_prof.start_profiler('CPU')
    with paddle_prof.record_event('op'):
        pass
    with pytest.raises(ValueError, match='^profile_path: embedded null byte$'):
        paddle_prof.snapshot(profile_path=nul)
    with pytest.raises(ValueError, match='^profile_path: embedded null byte$'):
        paddle_prof.stop_profiler(profile_path=nul)
    report = paddle_prof.stop_profiler(stream=io.StringIO())  # the window was still open
    assert rows(report)[('op', None)].calls == 1
    assert os.listdir(tmp_path) == []


def test_a_fifo_with_no_reader_as_the_profile_path_is_a_warning_not_a_wait(tmp_path):
    fifo = tmp_path / 'fifo'
    os.mkfifo(fifo)
    script = textwrap.dedent(f"""
        import io, json, paddle_prof
        paddle_prof.start_profiler('CPU')
        with paddle_prof.record_event('op'):
            pass
        report = paddle_prof.stop_profiler(profile_path={str(fifo)!r}, stream=io.StringIO())
        print(json.dumps(report.warnings))
    """)
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                          timeout=60, env=os.environ.copy())  # a wait fails here
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        f"cannot write the trace to '{fifo}': No such device or address; "
        "the file was not written."]
    summary = json.loads((tmp_path / 'fifo.summary.json').read_text(encoding='utf-8'))
    assert summary['events'][0]['calls'] == 1


def test_names_with_nul_bytes_keep_their_own_rows(tmp_path):
    path = tmp_path / 'profile.json'
    stream = io.StringIO()
    with paddle_prof.profiler('CPU', 'calls', profile_path=str(path), stream=stream) as prof:
        for name, calls in (('a\0b', 2), ('a\0c', 3)):
            for _ in range(calls):
                with paddle_prof.record_event(name, tag='t\0'):
                    pass
    assert {(e.name, e.tag): e.calls for e in prof.report.events} == {
        ('a\0b', 't\0'): 2, ('a\0c', 't\0'): 3}
    trace = json.loads(path.read_text(encoding='utf-8'))
    names = sorted(e['name'] for e in trace['traceEvents'] if e['ph'] == 'X')
    assert names == ['a\0b'] * 2 + ['a\0c'] * 3
    assert '\na\\0c [t\\0]  3  ' in stream.getvalue()


# A C++ operator may be named with any bytes; _core takes bytes as such a name.
NOT_UTF8 = [b'conv\xff2d', b'cut \xe4\xb8', b'\xed\xa0\x80surrogate', b'\xf4\x90\x80\x80big',
            b'over\xe0\x80\xaflong', b'\x80\xbfstray', b'ok \xc3\xa9\xe2\x82\xac']


def test_names_that_are_not_utf8_still_give_the_report_and_valid_files(tmp_path):
    path = tmp_path / 'profile.json'
    paddle_prof.start_profiler('CPU')
    for name in NOT_UTF8:
        _core.Scope(name, b'tag \xff').end()
    stream = io.StringIO()
    report = paddle_prof.stop_profiler('calls', str(path), stream=stream)  # no UnicodeDecodeError
    expected = sorted(b.decode('utf-8', 'replace') for b in NOT_UTF8)  # Python's own reading
    assert sorted(e.name for e in report.events) == expected
    assert {e.tag for e in report.events} == {'tag \ufffd'}
    summary = json.loads((tmp_path / 'profile.json.summary.json').read_text(encoding='utf-8'))
    assert sorted(e['name'] for e in summary['events']) == expected
    trace = json.loads(path.read_text(encoding='utf-8'))
    assert sorted(e['name'] for e in trace['traceEvents'] if e['ph'] == 'X') == expected
    table = report.table()
    assert stream.getvalue() == table
    for name in expected:
        assert re.search(f'\n{re.escape(name)} \\[tag \ufffd\\] +1 ', table), table


def test_names_utf8_cannot_encode_are_recorded_and_never_raise(tmp_path):
    # os.fsdecode() gives a file name that is not UTF-8 lone surrogates: surrogateescape
    # gives back its bytes (\xff then reads as U+FFFD, as any invalid byte); another
    # lone surrogate is written escaped.
    escaped, lone = os.fsdecode(b'file_\xff.bin'), 'lone \ud800'

    @paddle_prof.record_event(escaped, tag=lone)
    def decorated():
        return 1

    def record():
        for name in (escaped, lone):
            with paddle_prof.record_event(name, tag=name):
                pass
        assert decorated() == 1

    record()  # no profiler running
    path = tmp_path / 'profile.json'
    with paddle_prof.profiler('CPU', profile_path=path, stream=io.StringIO()) as prof:
        record()
    assert {(e.name, e.tag): e.calls for e in prof.report.events} == {
        ('file_\ufffd.bin', 'file_\ufffd.bin'): 1, ('lone \\ud800', 'lone \\ud800'): 1,
        ('file_\ufffd.bin', 'lone \\ud800'): 1}
    summary = json.loads((tmp_path / 'profile.json.summary.json').read_text(encoding='utf-8'))
    assert summary == prof.report.to_dict()
    trace = json.loads(path.read_text(encoding='utf-8'))
    assert sorted(e['name'] for e in trace['traceEvents'] if e['ph'] == 'X') == [
        'file_\ufffd.bin', 'file_\ufffd.bin', 'lone \\ud800']


def test_control_characters_stay_inside_their_row():
    stream = io.StringIO()
    with paddle_prof.profiler('CPU', stream=stream) as prof:
        for name in ('two\nlines', 'tab\there', 'bell\a', 'line\u2028sep', 'nel\x85'):
            with paddle_prof.record_event(name):
                pass
    assert sorted(e.name for e in prof.report.events) == sorted(
        ['two\nlines', 'tab\there', 'bell\a', 'line\u2028sep', 'nel\x85'])
    lines = stream.getvalue().splitlines()  # splits at \x85 and \u2028 too
    for label in ('two\\nlines', 'tab\\there', 'bell\\x07', 'line\\u2028sep', 'nel\\x85'):
        assert sum(line.startswith(label + ' ') for line in lines) == 1, stream.getvalue()


def test_a_snapshot_reports_the_window_so_far_and_recording_goes_on(tmp_path):
    with pytest.raises(RuntimeError, match='no profiler is running'):
        paddle_prof.snapshot()
    path = tmp_path / 'snap.json'
    with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
        for _ in range(3):
            with paddle_prof.record_event('step_op'):
                pass
        paddle_prof.mark_step()
        with paddle_prof.record_event('open_at_snapshot'):
            snap = paddle_prof.snapshot('calls', path)
        for _ in range(2):
            with paddle_prof.record_event('step_op'):
                pass
    assert [(e.name, e.calls) for e in snap.events] == [('step_op', 3)]
    assert len(snap.steps) == 1
    assert '1 call still open at the snapshot; they are left out.' in snap.warnings
    with open(str(path) + '.summary.json') as f:
        assert json.load(f) == snap.to_dict()
    assert {e.name: e.calls for e in prof.report.events} == {'step_op': 5, 'open_at_snapshot': 1}


def _ops(n):
    for i in range(n):
        with paddle_prof.record_event(f'op{i:03d}'):
            pass


def test_the_printed_table_keeps_to_the_row_limit_and_names_the_file_with_every_row(tmp_path):
    path = tmp_path / 'p.json'
    out = io.StringIO()
    with paddle_prof.profiler('CPU', 'calls', path, stream=out) as prof:
        _ops(70)
    table = out.getvalue()
    printed = [line for line in table.splitlines() if line.startswith('op')]
    assert len(printed) == 50
    assert f'(20 more rows, all in {path}.summary.json)' in table
    assert len(prof.report.events) == 70
    with open(str(path) + '.summary.json') as f:
        assert len(json.load(f)['events']) == 70
    assert len([line for line in prof.report.table(row_limit=None).splitlines()
                if line.startswith('op')]) == 70
    assert prof.report.table(row_limit=0) == prof.report.table(row_limit=None)

    out = io.StringIO()
    paddle_prof.start_profiler('CPU')
    _ops(12)
    report = paddle_prof.stop_profiler(stream=out, row_limit=10)
    assert '(2 more rows, all in the Report: a row limit of 0 prints every row)' in out.getvalue()
    assert len(report.events) == 12
    for bad in (-1, 2.5, '10', True):
        with pytest.raises(ValueError, match='row_limit must be None or an int >= 0'):
            paddle_prof.profiler('CPU', row_limit=bad)


def test_a_flight_recorder_keeps_the_last_steps():
    with paddle_prof.profiler('CPU', stream=io.StringIO(), keep_last_steps=5) as prof:
        for step in range(20):
            with paddle_prof.record_event('step', tag=str(step)):
                pass
            paddle_prof.mark_step()
    assert [s.step for s in prof.report.steps] == [15, 16, 17, 18, 19]
    assert sorted(e.tag for e in prof.report.events) == ['15', '16', '17', '18', '19']
    assert any(w.startswith('flight recorder (keep_last_steps=5)') for w in prof.report.warnings)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match='keep_last_steps must be None or an int >= 1'):
            paddle_prof.profiler('CPU', keep_last_steps=bad)
