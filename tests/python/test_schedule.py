"""Schedules: which steps a profiler records, one Report per cycle, and where its files go."""

import io
import json
import os
import shutil
import socket

import pytest

import paddle_prof


def _steps(prof, count):
    for i in range(count):
        for _ in range(3):
            with paddle_prof.record_event('op'):
                pass
        with paddle_prof.record_event('step', tag=str(i)):
            pass
        prof.step()


def _calls(report):
    return {(e.name, e.tag): e.calls for e in report.events}


def test_wait1_warmup1_active2_repeat2_over_ten_steps_gives_two_reports_of_two_steps():
    ready = []
    sched = paddle_prof.schedule(wait=1, warmup=1, active=2, repeat=2)
    with paddle_prof.profiler('CPU', schedule=sched, on_trace_ready=ready.append) as prof:
        _steps(prof, 10)
    assert ready == prof.reports
    assert len(prof.reports) == 2
    # Steps 0 wait, 1 warm-up, 2-3 active; 4 wait, 5 warm-up, 6-7 active; 8-9 after.
    for cycle, report in enumerate(prof.reports):
        first = 2 + 4 * cycle
        assert report.cycle == cycle
        assert report.to_dict()['cycle'] == cycle
        assert len(report.steps) == 2
        assert [s.step for s in report.steps] == [0, 1]
        assert _calls(report) == {('op', None): 6, ('step', str(first)): 1,
                                  ('step', str(first + 1)): 1}
    assert prof.report is prof.reports[-1]
    assert not paddle_prof.profiler.__dict__.get('_recording', False)


def test_the_default_on_trace_ready_prints_each_cycles_table_and_a_plain_report_has_no_cycle():
    out = io.StringIO()
    with paddle_prof.profiler('CPU', stream=out,
                              schedule=paddle_prof.schedule(active=1, repeat=3)) as prof:
        _steps(prof, 5)
    assert out.getvalue().count('Profiling Report') == 3
    assert [r.cycle for r in prof.reports] == [0, 1, 2]
    with paddle_prof.profiler('CPU', stream=io.StringIO()) as plain:
        _steps(plain, 2)  # without a schedule, step() is mark_step()
    assert plain.report.cycle is None
    assert plain.report.to_dict()['cycle'] is None
    assert len(plain.report.steps) == 2
    assert plain.reports == []


def test_skip_first_and_a_block_that_ends_in_an_active_phase_reports_the_steps_done():
    sched = paddle_prof.schedule(active=5, skip_first=2)
    with paddle_prof.profiler('CPU', schedule=sched, on_trace_ready=lambda r: None) as prof:
        _steps(prof, 5)  # steps 2, 3, 4 are active when the block ends
    assert len(prof.reports) == 1
    assert len(prof.reports[0].steps) == 3
    assert _calls(prof.reports[0]) == {('op', None): 9, ('step', '2'): 1, ('step', '3'): 1,
                                       ('step', '4'): 1}
    # A block that ends in a warm-up drops it.
    sched = paddle_prof.schedule(warmup=3, active=1)
    with paddle_prof.profiler('CPU', schedule=sched, on_trace_ready=lambda r: None) as prof:
        _steps(prof, 2)
    assert prof.reports == []
    assert prof.report is None
    assert not paddle_prof._core.is_enabled()


def test_cycle_paths_and_save_to(tmp_path):
    sched = paddle_prof.schedule(active=1, repeat=2)
    with paddle_prof.profiler('CPU', profile_path=tmp_path / 'run-{cycle}.json', schedule=sched,
                              on_trace_ready=lambda r: None) as prof:
        _steps(prof, 2)
    for cycle in (0, 1):
        with open(tmp_path / f'run-{cycle}.json.summary.json') as f:
            assert json.load(f)['cycle'] == cycle
        assert (tmp_path / f'run-{cycle}.json').exists()
    with paddle_prof.profiler('CPU', profile_path=str(tmp_path / 'p.json'), schedule=sched,
                              on_trace_ready=lambda r: None) as prof:
        _steps(prof, 2)
    assert (tmp_path / 'p.cycle0.json').exists()
    assert (tmp_path / 'p.cycle1.json.summary.json').exists()

    runs = tmp_path / 'runs'
    with paddle_prof.profiler('CPU', schedule=sched, on_trace_ready=paddle_prof.save_to(runs)):
        pass  # nothing but the first active step, which the block ends: one cycle
    name = f'{socket.gethostname()}.{os.getpid()}'
    assert sorted(os.listdir(runs)) == [f'{name}.cycle0.json', f'{name}.cycle0.json.html',
                                        f'{name}.cycle0.json.summary.json']
    with paddle_prof.profiler('CPU', schedule=sched,
                              on_trace_ready=paddle_prof.save_to(runs, name='job')) as prof:
        _steps(prof, 2)
    with open(runs / 'job.cycle1.json.summary.json') as f:
        summary = json.load(f)
    assert summary['cycle'] == 1
    assert summary == prof.reports[1].to_dict()


def test_save_to_checks_its_paths_when_made(tmp_path):
    runs = tmp_path / 'runs'
    with pytest.raises(TypeError, match="^save_to directory must be a str or an os.PathLike "
                                        "giving a str; got bytes b'"):
        paddle_prof.save_to(os.fsencode(runs))
    with pytest.raises(TypeError, match='^save_to name must be a str or an os.PathLike '
                                        'giving a str; got int 3$'):
        paddle_prof.save_to(runs, name=3)
    with pytest.raises(ValueError, match='^save_to directory: embedded null byte$'):
        paddle_prof.save_to(str(runs) + '\0')
    with pytest.raises(ValueError, match='^save_to name: embedded null byte$'):
        paddle_prof.save_to(runs, name='job\0')
    assert os.listdir(tmp_path) == []
    existing = tmp_path / 'a_file'
    existing.write_text('kept')
    with pytest.raises(ValueError, match=f"^save_to: '{existing}' is not a directory, so "
                                         f"'{existing}' cannot be one$"):
        paddle_prof.save_to(existing)
    with pytest.raises(ValueError, match=f"^save_to: '{existing}' is not a directory"):
        paddle_prof.save_to(existing / 'runs')
    assert existing.read_text() == 'kept'


def test_a_cycle_whose_files_cannot_be_written_warns_and_the_loop_goes_on(tmp_path):
    runs = tmp_path / 'runs'
    sched = paddle_prof.schedule(active=1, repeat=3)
    with pytest.warns(RuntimeWarning) as warned:
        with paddle_prof.profiler('CPU', schedule=sched,
                                  on_trace_ready=paddle_prof.save_to(runs, name='job')) as prof:
            _steps(prof, 1)
            shutil.rmtree(runs)
            runs.write_text('someone else\'s file')  # where cycle 1 would go
            _steps(prof, 1)
            runs.unlink()
            _steps(prof, 1)
    # Cycle 2 began while the directory could not be made, but it could by its end.
    assert [str(w.message) for w in warned] == [
        f"paddle_prof.save_to: cycle 1's files are not written: cannot make the directory "
        f"'{runs}' ([Errno 17] File exists: '{runs}'); its report is kept in prof.reports"]
    assert [r.cycle for r in prof.reports] == [0, 1, 2]
    assert all(sum(e.calls for e in r.events) == 4 for r in prof.reports)
    assert sorted(os.listdir(runs)) == ['job.cycle2.json', 'job.cycle2.json.html',
                                        'job.cycle2.json.summary.json']


def test_wrong_schedules_are_refused():
    for bad in ({'active': 0}, {'wait': -1}, {'repeat': 1.5}, {'warmup': True}):
        with pytest.raises(ValueError, match=r'schedule\(\): '):
            paddle_prof.schedule(**bad)
    with pytest.raises(TypeError, match='schedule must be a paddle_prof.schedule'):
        paddle_prof.profiler('CPU', schedule=3)
    with pytest.raises(TypeError, match='on_trace_ready must be callable'):
        paddle_prof.profiler('CPU', on_trace_ready='print')


def test_an_out_of_memory_in_an_active_phase_dumps_to_the_oom_path(tmp_path):
    oom_path = tmp_path / 'oom.json'
    sched = paddle_prof.schedule(warmup=1, active=2)
    with paddle_prof.profiler('CPU', schedule=sched, oom_path=oom_path,
                              on_trace_ready=lambda r: None) as prof:
        prof.step()  # the warm-up, dropped by a reset as the active steps begin
        with paddle_prof.record_event('big'):
            with pytest.raises(MemoryError):
                paddle_prof.empty((1 << 50,), dtype='uint8')
        prof.step()
    with open(str(oom_path) + '.summary.json') as f:
        assert json.load(f)['oom']['path'] == ['big']
