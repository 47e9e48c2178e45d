"""Where memory comes from: call paths on the memory held at the peak, and with
record_stacks, the Python lines that top-level calls came from (rows' sources, the
source of at_peak entries and growth holders, the trace's args.stack)."""

import io
import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import paddle_prof


def line_of(marker, path=__file__):
    """The line of this file that ends with `# <marker>`."""
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if line.rstrip().endswith('# ' + marker):
                return number
    raise AssertionError(f'no line marked {marker}')


def frame(marker, function, path=__file__):
    return f'{path}:{line_of(marker, path)} in {function}'


def places(summary, place='CPU'):
    return next(p for p in summary['places'] if p['place'] == place)


def test_record_event_rows_name_the_lines_their_top_level_calls_came_from(tmp_path):
    def work():
        with paddle_prof.record_event('outer'):  # outer-line
            with paddle_prof.record_event('inner'):
                pass

    with paddle_prof.profiler('CPU', stream=io.StringIO(), record_stacks=True) as prof:
        for _ in range(3):
            work()
        with paddle_prof.record_event('inner'):  # lone-inner
            pass
    rows = {e.name: e for e in prof.report.events}
    outer = frame('outer-line', 'work')
    assert rows['outer'].sources == [{'frame': outer, 'calls': 3}]
    # A nested call's source is its top-level call's: most calls first.
    assert rows['inner'].sources == [
        {'frame': outer, 'calls': 3},
        {'frame': frame('lone-inner', 'test_record_event_rows_name_the_lines_their_top_level_'
                                      'calls_came_from'), 'calls': 1}]


@paddle_prof.record_event('decorated')
def decorated():
    pass


def test_a_decorated_function_names_the_line_that_called_it():
    with paddle_prof.profiler('CPU', stream=io.StringIO(), record_stacks=True) as prof:
        decorated()  # decorated-call
    row = next(e for e in prof.report.events if e.name == 'decorated')
    assert row.sources == [{'frame': frame('decorated-call', 'test_a_decorated_function_names_'
                                                             'the_line_that_called_it'),
                            'calls': 1}]


def test_without_record_stacks_there_are_no_sources(tmp_path):
    path = str(tmp_path / 'trace.json')
    with paddle_prof.profiler('CPU', profile_path=path, stream=io.StringIO()) as prof:
        with paddle_prof.record_event('a'):
            paddle_prof.empty([1000], 'uint8', 'CPU')
    assert all(e.sources == [] for e in prof.report.events)
    summary = json.load(open(path + '.summary.json'))
    assert all('sources' not in e for e in summary['events'])
    assert all('source' not in h for h in places(summary)['at_peak'])
    trace = json.load(open(path))
    assert not any('stack' in e.get('args', {}) for e in trace['traceEvents'])


def test_the_peak_block_names_its_line_and_path_and_the_trace_its_stack(tmp_path):
    path = str(tmp_path / 'trace.json')
    held = []

    def allocate():
        with paddle_prof.record_event('load'):  # load-line
            with paddle_prof.record_event('alloc'):
                held.append(paddle_prof.empty([1 << 20], 'uint8', 'CPU'))

    with paddle_prof.profiler('CPU', profile_path=path, stream=io.StringIO(),
                              record_stacks=True):
        allocate()  # the-peak
    summary = json.load(open(path + '.summary.json'))
    top = places(summary)['at_peak'][0]
    assert top['name'] == 'alloc' and top['bytes'] == 1 << 20
    assert top['path'] == ['load', 'alloc']
    # The innermost frame outside paddle_prof of its top-level call ('load').
    assert top['source'] == frame('load-line', 'allocate')
    trace = json.load(open(path))
    load = next(e for e in trace['traceEvents'] if e.get('name') == 'load')
    stack = load['args']['stack']
    assert 2 <= len(stack) <= 16
    # Innermost first, paddle_prof's own frames included.
    at = stack.index(top['source'])
    assert all('paddle_prof' in f for f in stack[:at])
    assert stack[at + 1] == frame('the-peak',
                                  'test_the_peak_block_names_its_line_and_path_and_the_trace_its_stack')
    # Only top-level calls carry one.
    alloc = next(e for e in trace['traceEvents'] if e.get('name') == 'alloc')
    assert 'stack' not in alloc.get('args', {})


def test_a_python_thread_records_its_own_stacks():
    def worker():
        with paddle_prof.record_event('on_thread'):  # thread-line
            pass

    with paddle_prof.profiler('CPU', stream=io.StringIO(), record_stacks=True) as prof:
        threads = [threading.Thread(target=worker) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    row = next(e for e in prof.report.events if e.name == 'on_thread')
    assert row.sources == [{'frame': frame('thread-line', 'worker'), 'calls': 2}]


def test_flags_paddle_prof_record_stacks_turns_it_on(tmp_path):
    script = tmp_path / 'flagged.py'
    script.write_text(textwrap.dedent('''
        import io, json, paddle_prof
        with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
            with paddle_prof.record_event('flagged'):
                pass
        print(json.dumps(next(e.sources for e in prof.report.events if e.name == 'flagged')))
    '''))
    env = dict(os.environ, FLAGS_paddle_prof_record_stacks='1')
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{'frame': f'{script}:4 in <module>', 'calls': 1}]


def test_run_record_stacks_names_the_script_lines(tmp_path):
    script = tmp_path / 'plain.py'
    script.write_text(textwrap.dedent('''
        import paddle_prof
        for _ in range(2):
            with paddle_prof.record_event('step'):
                pass
    '''))
    profile = str(tmp_path / 'run.json')
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--record-stacks',
                             '--profile-path', profile, str(script)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    summary = json.load(open(profile + '.summary.json'))
    step = next(e for e in summary['events'] if e['name'] == 'step')
    assert step['sources'] == [{'frame': f'{script}:4 in <module>', 'calls': 2}]


@pytest.mark.torch
def test_torch_ops_name_their_lines():
    import torch

    import paddle_prof.torch
    a, b = torch.ones(8), torch.ones(8)
    with paddle_prof.torch.profiler('CPU', stream=io.StringIO(), record_stacks=True) as prof:
        for _ in range(3):
            torch.add(a, b)  # add-three
        torch.add(a, b)  # add-one
    row = next(e for e in prof.report.events if e.name == 'aten::add')
    name = 'test_torch_ops_name_their_lines'
    assert row.sources == [{'frame': frame('add-three', name), 'calls': 3},
                           {'frame': frame('add-one', name), 'calls': 1}]


@pytest.mark.torch
def test_a_convolution_backward_holds_the_peak_from_the_line_that_ran_it(tmp_path):
    import torch

    import paddle_prof.torch
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 16, 3)
    x = torch.randn(64, 3, 28, 28, requires_grad=True)
    path = str(tmp_path / 'conv.json')
    with paddle_prof.torch.profiler('CPU', profile_path=path, stream=io.StringIO(),
                                    record_stacks=True):
        loss = conv(x).relu().sum()
        loss.backward()  # backward-line
    top = places(json.load(open(path + '.summary.json')))['at_peak'][0]
    assert 'ConvolutionBackward0' in top['path'], top
    assert top['path'][-1] == top['name']
    assert top['source'] == frame('backward-line', 'test_a_convolution_backward_holds_the_peak_'
                                                   'from_the_line_that_ran_it')
