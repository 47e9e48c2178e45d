"""paddle_prof.torch on Debian's PyTorch: ATen ops as events, CPU tensors tracked."""

import io
import json
import re
import subprocess
import sys
import textwrap
import threading
import warnings

import pytest

torch = pytest.importorskip('torch', reason='PyTorch (python3-torch) is not installed')
pytest.importorskip('paddle_prof._torch_bridge',
                    reason='paddle_prof was built without Torch (libtorch-dev)')

import paddle_prof  # noqa: E402
import paddle_prof.torch  # noqa: E402
from helpers import calls, run_script  # noqa: E402




def test_op_calls_match_a_hand_count():
    x = torch.ones(4, 4)
    a, b = torch.ones(4, 5), torch.ones(5, 6)
    with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
        for _ in range(5):
            x = x + 1
        for _ in range(3):
            torch.mm(a, b)
    assert calls(prof.report, 'aten::add') == 5
    assert calls(prof.report, 'aten::mm') == 3
    assert float(x[0, 0]) == 6.0


def test_record_shapes_tags_ops_with_their_input_shapes():
    a, b = torch.ones(4, 5), torch.ones(5, 6)
    with paddle_prof.torch.profiler('CPU', record_shapes=True, stream=io.StringIO()) as prof:
        torch.mm(a, b)
        torch.mm(b.t(), a.t())
    assert calls(prof.report, 'aten::mm', '[[4, 5], [5, 6]]') == 1
    assert calls(prof.report, 'aten::mm', '[[6, 5], [5, 4]]') == 1


def test_record_shapes_shows_the_values_of_a_list_of_ints_and_no_absent_input(tmp_path):
    path = tmp_path / 'trace.json'
    with paddle_prof.torch.profiler('CPU', profile_path=str(path), record_shapes=True,
                                    stream=io.StringIO()) as prof:
        x = torch.empty(64, 16, 28, 28)
        x.view(64, -1)
        torch.cat([x, x]).sum(dtype=torch.float64)
    # The tag shows tensors' shapes and lists of ints, and no scalar, None or device.
    empties = {e.tag for e in prof.report.events if e.name == 'aten::empty'}
    assert '[[64, 16, 28, 28]]' in empties
    assert all(re.fullmatch(r'\[\[[0-9, ]+\]\]', tag) for tag in empties), empties
    assert calls(prof.report, 'aten::view', '[[64, 16, 28, 28], [64, -1]]') == 1
    assert calls(prof.report, 'aten::cat', '[[[64, 16, 28, 28], [64, 16, 28, 28]]]') == 1
    assert calls(prof.report, 'aten::sum', '[[128, 16, 28, 28]]') == 1
    # The trace keeps every input, as torch.profiler's does: Input Dims and Input type.
    trace = json.loads(path.read_text())['traceEvents']
    args = {}
    for e in sorted((e for e in trace if e.get('ph') == 'X'), key=lambda e: e['ts']):
        args.setdefault(e['name'], e.get('args', {}))  # each op's first, outermost event
    assert args['aten::empty']['tag'] == '[[64, 16, 28, 28]]'
    assert args['aten::empty']['Input Dims'][0] == [64, 16, 28, 28]
    assert args['aten::empty']['Input type'][0] == 'ScalarList'
    assert len(args['aten::empty']['Input Dims']) == len(args['aten::empty']['Input type']) > 1
    assert args['aten::view']['Input Dims'] == [[64, 16, 28, 28], [64, -1]]
    assert args['aten::view']['Input type'] == ['float', 'ScalarList']
    assert args['aten::cat']['Input Dims'] == [[[64, 16, 28, 28], [64, 16, 28, 28]], []]
    assert args['aten::cat']['Input type'] == ['TensorList', 'Scalar']
    assert args['aten::sum']['Input Dims'] == [[128, 16, 28, 28], []]
    assert args['aten::sum']['Input type'] == ['float', 'Scalar']


def test_torch_empty_of_a_known_size_is_exact():
    with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
        x = torch.empty(1000, 784, dtype=torch.float32)
    empty = next(e for e in prof.report.events if e.name == 'aten::empty')
    assert empty.calls == 1
    assert empty.memory['CPU'] == {'peak_bytes': 3136000, 'alloc_bytes': 3136000,
                                   'alloc_count': 1, 'free_bytes': 0, 'free_count': 0,
                                   'live_bytes': 3136000}
    del x


def test_ops_on_intra_op_threads_and_a_second_python_thread_are_recorded():
    torch.set_num_threads(2)
    big = torch.ones(512, 512)

    def work():
        for _ in range(4):
            torch.mm(big, big)

    with paddle_prof.torch.profiler('CPU', per_thread=True, stream=io.StringIO()) as prof:
        t = threading.Thread(target=work)
        t.start()
        work()
        t.join()
    mm_rows = [e for e in prof.report.events if e.name == 'aten::mm']
    assert sum(e.calls for e in mm_rows) == 8
    assert len({e.thread for e in mm_rows}) == 2


class _Nest(torch.autograd.Function):
    """A custom op (torch records it under its class name) that applies itself `depth`
    times, each level around an aten::add."""

    @staticmethod
    def forward(ctx, x, depth):
        if depth > 1:
            x = _Nest.apply(x, depth - 1)
        return x + x

    @staticmethod
    def backward(ctx, grad):
        return 2 * grad, None


def test_ops_nested_deeper_than_the_per_thread_op_stack_keep_exact_counts():
    # 100 levels, each with its add inside: more open ops than the bridge's per-thread
    # stack of events holds, the rest going through a context of their own.
    with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
        y = _Nest.apply(torch.ones(2), 100)
    assert float(y[0]) == 2.0 ** 100
    assert calls(prof.report, '_Nest') == 100
    assert calls(prof.report, 'aten::add') == 100
    nest = next(e for e in prof.report.events if e.name == '_Nest')
    assert nest.self_ms * 5 < nest.total_ms  # a level's total holds the levels inside it
    assert not prof.report.warnings


def test_an_op_s_self_time_leaves_out_the_ops_inside_it():
    class Outer(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x + x + x

    x = torch.ones(8)
    with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
        for _ in range(5):
            Outer.apply(x)
    rows = {e.name: e for e in prof.report.events}
    assert rows['Outer'].calls == 5 and rows['aten::add'].calls == 10
    assert rows['Outer'].self_ms == pytest.approx(
        rows['Outer'].total_ms - rows['aten::add'].total_ms, abs=1e-5)


def test_autograd_nodes_nest_inside_their_engine_scope_and_around_their_ops(tmp_path):
    x = torch.ones(4, requires_grad=True)
    w = torch.full((4,), 2.0)
    path = tmp_path / 'trace.json'
    with paddle_prof.torch.profiler('CPU', profile_path=str(path), stream=io.StringIO()) as prof:
        for _ in range(3):
            (x * w).sum().backward()
    assert calls(prof.report, 'MulBackward0') == 3
    assert calls(prof.report, 'aten::mul') == 6  # 3 forward, 3 inside MulBackward0
    events = [e for e in json.loads(path.read_text())['traceEvents'] if e.get('ph') == 'X']

    def inside(child, parent_name):  # µs with 3 decimals: a rounding's slack
        return any(p['name'] == parent_name and p['tid'] == child['tid'] and
                   p['ts'] <= child['ts'] + 0.002 and
                   child['ts'] + child['dur'] <= p['ts'] + p['dur'] + 0.002 for p in events)

    nodes = [e for e in events if e['name'] == 'MulBackward0']
    assert len(nodes) == 3
    assert all(inside(n, 'autograd::engine::evaluate_function: MulBackward0') for n in nodes)
    assert sum(inside(m, 'MulBackward0') for m in events if m['name'] == 'aten::mul') == 3


def test_the_trace_links_each_forward_op_to_its_backward_node(tmp_path):
    x = torch.ones(4, requires_grad=True)
    w = torch.full((4,), 2.0)
    path = tmp_path / 'trace.json'
    with paddle_prof.torch.profiler('CPU', profile_path=str(path), stream=io.StringIO()):
        for _ in range(3):
            (x * w).sum().backward()
    trace = json.loads(path.read_text())['traceEvents']
    ops = {(e['tid'], e['ts']): e for e in trace if e.get('ph') == 'X'}
    ends = {}
    for flow in (e for e in trace if e.get('cat') == 'fwdbwd'):
        ends.setdefault(flow['id'], {})[flow['ph']] = ops[(flow['tid'], flow['ts'])]
    pairs = sorted((e['s']['name'], e['f']['name'].split(': ')[-1]) for e in ends.values())
    assert pairs == [('aten::mul', 'MulBackward0')] * 3 + [('aten::sum', 'SumBackward0')] * 3
    for e in ends.values():
        forward, backward = e['s'], e['f']
        assert forward['cat'] == 'cpu_op' and backward['ts'] > forward['ts']
        assert forward['args']['Sequence number'] == backward['args']['Sequence number']
        assert forward['args']['Fwd thread id'] == 0 and backward['args']['Fwd thread id'] > 0
    # ATen's ops and autograd's nodes are ops, as Kineto has them.
    assert {e['cat'] for e in ops.values()
            if e['name'].startswith('aten::') or 'Backward' in e['name']} == {'cpu_op'}


def test_holistic_trace_analysis_reads_the_input_dims_and_links_forward_to_backward(
        tmp_path, trace_analysis):
    import pandas
    from hta.common.trace import add_fwd_bwd_links
    x = torch.ones(4, requires_grad=True)
    w = torch.full((4,), 2.0)
    a, b = torch.ones(4, 5), torch.ones(5, 6)
    traces = tmp_path / 'traces'
    traces.mkdir()
    path = traces / 'rank0.json'
    with paddle_prof.torch.profiler('CPU', profile_path=str(path), record_shapes=True,
                                    stream=io.StringIO()):
        for _ in range(3):
            (x * w).sum().backward()
            torch.mm(a, b)
    for other in traces.glob('rank0.json.*'):  # the summary and the page
        other.unlink()
    analysis = trace_analysis(trace_dir=str(traces), include_last_profiler_step=True)
    df = analysis.t.get_trace(0)
    mm = df[df['name'] == analysis.t.symbol_table.get_sym_id_map()['aten::mm']]
    assert len(mm) == 3
    assert all(dims == [[4, 5], [5, 6]] for dims in mm['input_dims']), mm['input_dims']
    assert all(types == ['float', 'float'] for types in mm['input_type'])
    # HTA's parser drops events without a duration, flows among them, before it links
    # them; its linking, given the trace's events, pairs each forward op with its node.
    events = pandas.DataFrame(json.loads(path.read_text())['traceEvents']).reset_index()
    add_fwd_bwd_links(events)
    forward = events[events['fwdbwd'] == 0]
    backward = events.loc[forward['fwdbwd_index']]
    pairs = sorted(zip(forward['name'], (n.split(': ')[-1] for n in backward['name'])))
    assert pairs == [('aten::mul', 'MulBackward0')] * 3 + [('aten::sum', 'SumBackward0')] * 3


def test_ops_open_as_a_window_closes_or_opens_leave_each_window_exact():
    bridge = paddle_prof.torch._torch_bridge
    reports = []

    class Starts(torch.autograd.Function):  # begins while the profiler is off, ends while on
        @staticmethod
        def forward(ctx, t):
            paddle_prof.start_profiler('CPU')
            return t - t

    class StopsAndStarts(torch.autograd.Function):  # begins in one window, ends in the next
        @staticmethod
        def forward(ctx, t):
            t = t + t
            reports.append(paddle_prof.stop_profiler(stream=io.StringIO()))
            paddle_prof.start_profiler('CPU')
            return t * t

    x = torch.ones(2)
    bridge.install(False)
    try:
        Starts.apply(x)
        StopsAndStarts.apply(x)
        for _ in range(3):
            x * x
        reports.append(paddle_prof.stop_profiler(stream=io.StringIO()))
    finally:
        bridge.remove_callback()
    first, second = ({e.name: e.calls for e in r.events if e.calls} for r in reports)
    assert first == {'aten::sub': 1, 'aten::add': 1}, first
    assert any('still open' in w for w in reports[0].warnings), reports[0].warnings
    assert second == {'aten::mul': 4}, second


def test_a_torch_record_function_ended_on_another_thread_is_left_out_with_a_warning():
    scope = torch.autograd.profiler.record_function('handed_over')
    with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
        scope.__enter__()
        x = torch.ones(2)
        ender = threading.Thread(target=scope.__exit__, args=(None, None, None))
        ender.start()
        ender.join()
        for _ in range(2):
            x = x * x
    assert calls(prof.report, 'handed_over') == 0
    assert calls(prof.report, 'aten::mul') == 2
    assert any('ended on a thread other than' in w for w in prof.report.warnings)


def test_a_training_step_with_onednn_runs_and_reports_memory():
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 26 * 26, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 1, 28, 28)
    with paddle_prof.torch.profiler('CPU', 'peak_memory', stream=io.StringIO()) as prof:
        for _ in range(3):
            loss = model(x).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            paddle_prof.mark_step()
    assert calls(prof.report, 'aten::conv2d') == 3
    assert calls(prof.report, 'aten::convolution_backward') == 3
    assert prof.report.events[0].memory['CPU']['peak_bytes'] > 0
    assert len(prof.report.steps) == 3
    # After the window, ops cost nothing extra and the allocator keeps working.
    assert float(model(x).sum()) == float(model(x).sum())


def test_step_on_optimizer_closes_a_step_per_optimizer_step():
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.Adam(model.parameters())
    original_step = torch.optim.Adam.step
    with paddle_prof.torch.profiler('CPU', step_on_optimizer=True, stream=io.StringIO()) as prof:
        for _ in range(3):
            model(torch.ones(1, 4)).sum().backward()
            opt.step()
    assert len(prof.report.steps) == 3
    assert torch.optim.Adam.step is original_step  # put back


def test_tensors_made_before_the_import_are_adopted_and_freed_safely(tmp_path):
    script = textwrap.dedent('''
        import io, torch
        early = [torch.ones(256, 256) for _ in range(4)]
        import paddle_prof, paddle_prof.torch
        with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
            del early[:2]                      # adopted at the import: known frees
            late = torch.ones(256, 256)
        del early, late                        # after the window, through the wrapper
        cpu = prof.report.places[0]
        assert cpu.untracked_frees == 0
        assert cpu.start_bytes >= 4 * 256 * 256 * 4
        assert cpu.start_bytes - cpu.end_bytes == 256 * 256 * 4  # two freed, one made
        print('ok')
    ''')
    assert run_script(tmp_path, script).stdout.strip() == 'ok'


def test_between_windows_tensors_go_untracked_and_the_next_window_adopts_them(tmp_path):
    script = textwrap.dedent('''
        import io, torch
        import paddle_prof, paddle_prof.torch
        from paddle_prof import _torch_bridge
        with paddle_prof.torch.profiler('CPU', stream=io.StringIO()):
            pass
        probe = torch.ones(8)                  # no window: c10's block, untouched
        assert _torch_bridge.adopt_tensors([probe]) == 1
        between = [torch.ones(256, 256) for _ in range(2)]
        with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
            inside = torch.ones(8)             # the window's: tracked as made
            assert _torch_bridge.adopt_tensors([inside]) == 0
            del between[0]                     # adopted as the window opened: a known free
        cpu = prof.report.places[0]
        assert cpu.untracked_frees == 0
        assert cpu.start_bytes >= 2 * 256 * 256 * 4
        assert cpu.start_bytes - cpu.end_bytes == 256 * 256 * 4 - 8 * 4
        print('ok')
    ''')
    assert run_script(tmp_path, script).stdout.strip() == 'ok'


def test_a_window_walks_the_programs_objects_only_after_a_block_went_untracked(tmp_path):
    script = textwrap.dedent('''
        import gc, io, torch
        import paddle_prof, paddle_prof.torch
        walks = []
        get_objects = gc.get_objects
        gc.get_objects = lambda *args: walks.append(1) or get_objects(*args)
        def window():
            return paddle_prof.torch.profiler('CPU', stream=io.StringIO())
        with window():
            inside = torch.ones(8)             # the window's: tracked
        assert len(walks) == 1                 # blocks made before the import
        with window():
            del inside                         # a tracked free; nothing handed out between
        assert len(walks) == 1
        between = torch.ones(256, 256)         # no window: c10's block, untouched
        with window() as prof:
            del between                        # adopted by the walk: a known free
        assert len(walks) == 2
        cpu = prof.report.places[0]
        assert cpu.untracked_frees == 0
        assert cpu.start_bytes - cpu.end_bytes == 256 * 256 * 4
        print('ok')
    ''')
    assert run_script(tmp_path, script).stdout.strip() == 'ok'


def test_a_walk_that_fails_is_owed_to_the_next_window(tmp_path):
    script = textwrap.dedent('''
        import gc, io, torch
        early = torch.ones(8)                  # before the import: only a walk finds it
        import paddle_prof, paddle_prof.torch
        walks = []
        get_objects = gc.get_objects
        def failing_once(*args):
            walks.append(1)
            if len(walks) == 1:
                raise KeyboardInterrupt
            return get_objects(*args)
        gc.get_objects = failing_once
        def window():
            return paddle_prof.torch.profiler('CPU', stream=io.StringIO())
        try:
            with window():
                raise AssertionError('the window opened')
        except KeyboardInterrupt:
            pass
        with window() as prof:
            del early                          # adopted by the second walk: a known free
        assert len(walks) == 2
        cpu = prof.report.places[0]
        assert cpu.start_bytes - cpu.end_bytes == 8 * 4, (cpu.start_bytes, cpu.end_bytes)
        assert cpu.untracked_frees == 0
        print('ok')
    ''')
    assert run_script(tmp_path, script).stdout.strip() == 'ok'


def test_shape_growth_names_a_convolution_op(tmp_path):
    import os
    preload = os.path.join(os.path.dirname(paddle_prof.__file__), 'libpaddle_prof_preload.so')
    if not os.path.exists(preload):
        pytest.skip('no preload library built')
    example = os.path.join(os.path.dirname(__file__), '..', '..', 'examples', 'shape_growth.py')
    profile = str(tmp_path / 'growth.json')
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--native', '--',
                             example, '--inputs', '16', '--profile-path', profile],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    # Memory kept per new shape: oneDNN's primitive cache, or where torch takes its slow
    # path (some CPUs, some thread counts), MKL's sgemm buffers, made on OpenMP workers
    # and owned by the convolution that started their parallel region.
    summary = json.load(open(profile + '.summary.json'))
    growth = [w for w in summary['warnings'] if w.startswith('live memory grew')]
    assert growth, result.stdout[-3000:]
    held_by = growth[0].split('held by:')[1]
    first_holder = held_by.split('(')[0].strip()
    assert first_holder.startswith('aten::') and 'conv' in first_holder, growth[0]
    assert ' > aten::conv2d > ' in held_by.split(');')[0], growth[0]
    assert '[[1, 16, ' in held_by  # the input shapes that made new primitives


def test_record_stacks_under_native_gives_the_growth_holder_native_frames(tmp_path):
    import os
    preload = os.path.join(os.path.dirname(paddle_prof.__file__), 'libpaddle_prof_preload.so')
    if not os.path.exists(preload):
        pytest.skip('no preload library built')
    example = os.path.join(os.path.dirname(__file__), '..', '..', 'examples', 'shape_growth.py')
    profile = str(tmp_path / 'growth.json')
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--native',
                             '--record-stacks', '--', example, '--inputs', '16',
                             '--profile-path', profile],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    summary = json.load(open(profile + '.summary.json'))
    growth = [w for w in summary['warnings'] if w.startswith('live memory grew')]
    assert growth, result.stdout[-3000:]
    # The first holder's text: up to where the next holder's name begins.
    first = re.split(r'\); (?=aten::|\[|nn\.Module)', growth[0].split('held by:')[1])[0]
    assert 'conv' in first.split('(')[0], growth[0]
    assert '; path: nn.Module: Sequential > ' in first and ' > aten::conv2d > ' in first, first
    assert 'shape_growth.py:' in first.split('; source: ')[1], first
    native = first.split('; native: ')[1].split(' < ')
    assert 1 <= len(native) <= 8
    # Named where torch has symbols (1.13), else by library and offset (PyPI's 2.x).
    assert any('dnnl' in f or 'at::' in f or f.startswith('libtorch_cpu.so+0x')
               for f in native), native
    # The native place's entries at the peak that are still live carry their frames.
    place = next(p for p in summary['places'] if p['place'] == 'native')
    framed = [h for h in place['at_peak'] if h.get('native_stack')]
    assert framed, place['at_peak'][:5]
    assert all(1 <= len(h['native_stack']) <= 16 for h in framed)


def test_under_native_a_tensor_counts_on_cpu_only(tmp_path):
    import json
    import os
    preload = os.path.join(os.path.dirname(paddle_prof.__file__), 'libpaddle_prof_preload.so')
    if not os.path.exists(preload):
        pytest.skip('no preload library built')
    script = tmp_path / 'tensor.py'
    script.write_text(textwrap.dedent('''
        import io, json, sys, torch, paddle_prof, paddle_prof.torch
        with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
            x = torch.empty(1000, 784)
        row = next(e for e in prof.report.events if e.name == 'aten::empty')
        print(json.dumps(row.memory))
    '''))
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--native', '--',
                             str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    memory = json.loads(result.stdout.strip().splitlines()[-1])
    assert memory['CPU']['alloc_bytes'] == 3136000
    assert memory['native']['alloc_bytes'] < 4096  # the tensor's bookkeeping, not its data


class _FakeCuda:
    """torch.cuda and the bridge's CUDA entry points as a CUDA machine would show them,
    to check which source of GPU memory paddle_prof.torch picks."""

    def __init__(self, monkeypatch, tracker, counters):
        self.calls = []
        bridge = paddle_prof.torch._torch_bridge
        monkeypatch.setattr(torch.cuda, 'is_available', lambda: True)
        monkeypatch.setattr(torch.cuda, 'is_initialized', lambda: True)
        monkeypatch.setattr(torch.cuda, 'init', lambda: self.calls.append('init'))
        monkeypatch.setattr(bridge, 'WITH_CUDA', tracker is not None)
        monkeypatch.setattr(bridge, 'WITH_CUDA_COUNTERS', counters is not None)
        monkeypatch.setattr(bridge, 'install_cuda', lambda: self.calls.append('tracker') or
                            bool(tracker))
        monkeypatch.setattr(bridge, 'count_cuda', lambda: self.calls.append('counters') or
                            bool(counters))
        monkeypatch.setattr(paddle_prof.torch, '_warned_cuda', False)
        monkeypatch.setattr(paddle_prof.torch, '_warned_counters', False)


def test_gpu_memory_comes_from_the_tracker_where_one_attaches(monkeypatch, recwarn):
    cuda = _FakeCuda(monkeypatch, tracker=True, counters=True)
    paddle_prof.torch.track_cuda_memory('GPU')
    assert cuda.calls == ['init', 'tracker']
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize('tracker, why', [(None, 'older than 2.3'),
                                          (False, 'backend takes no tracker')])
def test_allocator_statistics_stand_in_for_the_tracker_with_a_warning(monkeypatch, tracker,
                                                                     why):
    cuda = _FakeCuda(monkeypatch, tracker=tracker, counters=True)
    with pytest.warns(RuntimeWarning, match="allocator's statistics .*" + why):
        paddle_prof.torch.track_cuda_memory('All')
    assert cuda.calls[-1] == 'counters'
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter('always')
        paddle_prof.torch.track_cuda_memory('All')  # the next profile: read, not warned
    assert cuda.calls.count('counters') == 2
    assert not again


def test_gpu_memory_untracked_says_why(monkeypatch):
    _FakeCuda(monkeypatch, tracker=False, counters=False)
    with pytest.warns(RuntimeWarning, match='not tracked.*PYTORCH_NO_CUDA_MEMORY_CACHING'):
        paddle_prof.torch.track_cuda_memory('GPU')
    _FakeCuda(monkeypatch, tracker=None, counters=None)
    with pytest.warns(RuntimeWarning, match='not tracked.*CPU-only PyTorch'):
        paddle_prof.torch.track_cuda_memory('GPU')


def test_an_impossible_torch_empty_writes_the_dump_and_torch_raises_as_it_would(tmp_path):
    oom_path = tmp_path / 'oom.json'
    huge = 1 << 42  # 16 TiB of float32
    with paddle_prof.torch.profiler('CPU', stream=io.StringIO(), oom_path=oom_path) as prof:
        with paddle_prof.record_event('train_step'):
            with pytest.raises(RuntimeError, match='DefaultCPUAllocator: .*17592186044416 bytes'):
                torch.empty(huge, dtype=torch.float32)
    with open(str(oom_path) + '.summary.json') as f:
        dump = json.load(f)
    oom = dump['oom']
    assert oom['place'] == 'CPU'
    assert oom['requested_bytes'] == 4 * huge
    assert oom['event'] == 'aten::empty'
    assert oom['path'] == ['train_step', 'aten::empty']
    assert dump['warnings'][0].startswith(
        'out of memory on CPU asking 17,592,186,044,416 bytes in aten::empty '
        '(train_step > aten::empty); the place held ')
    # The window went on: the calls after the failure are in its report.
    assert {e.name for e in prof.report.events} >= {'train_step', 'aten::empty'}
    assert prof.report.to_dict()['oom'] is None
