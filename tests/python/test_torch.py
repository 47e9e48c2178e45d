"""paddle_prof.torch on Debian's PyTorch: ATen ops as events, CPU tensors tracked."""

import io
import json
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


def calls(report, name, tag=None):
    return sum(e.calls for e in report.events if e.name == name and (tag is None or e.tag == tag))


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


def test_record_shapes_shows_the_values_of_a_list_of_ints():
    with paddle_prof.torch.profiler('CPU', record_shapes=True, stream=io.StringIO()) as prof:
        x = torch.empty(64, 16, 28, 28)
        x.view(64, -1)
    empties = [e.tag for e in prof.report.events if e.name == 'aten::empty']
    assert len(empties) == 1 and empties[0].startswith('[[64, 16, 28, 28], '), empties
    assert calls(prof.report, 'aten::view', '[[64, 16, 28, 28], [64, -1]]') == 1


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


def test_tensors_made_before_the_wrapper_are_freed_safely():
    script = textwrap.dedent('''
        import io, torch, paddle_prof, paddle_prof.torch
        early = [torch.ones(256, 256) for _ in range(4)]
        with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
            del early[:2]                      # freed by their original deleter
            late = torch.ones(256, 256)
        del early, late
        assert prof.report.places[0].untracked_frees == 0
        print('ok')
    ''')
    result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == 'ok'


def test_shape_growth_names_a_convolution_op(tmp_path):
    import os
    preload = os.path.join(os.path.dirname(paddle_prof.__file__), 'libpaddle_prof_preload.so')
    if not os.path.exists(preload):
        pytest.skip('no preload library built')
    example = os.path.join(os.path.dirname(__file__), '..', '..', 'examples', 'shape_growth.py')
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--native', '--',
                             example, '--inputs', '16'],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    explanation = result.stdout.split('Why memory grew:')[-1]
    growth = [line for line in explanation.splitlines() if 'live memory grew' in line]
    assert growth, result.stdout[-3000:]
    held_by = growth[0].split('held by:')[1]
    first_holder = held_by.split('(')[0].strip()
    assert 'convolution' in first_holder, growth[0]
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
    growth = [line for line in result.stdout.splitlines() if 'live memory grew' in line]
    assert growth, result.stdout[-3000:]
    first = growth[0].split('held by:')[1].split(');')[0]
    assert 'convolution' in first.split('(')[0], growth[0]
    assert '; path: aten::conv2d > ' in first, first
    assert 'shape_growth.py:' in first.split('; source: ')[1], first
    native = first.split('; native: ')[1].split(' < ')
    assert 1 <= len(native) <= 8
    assert any('dnnl' in f or 'at::' in f for f in native), native
    # The native place's entries at the peak that are still live carry their frames.
    summary = json.load(open(profile + '.summary.json'))
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
    paddle_prof.torch._track_cuda_memory('GPU')
    assert cuda.calls == ['init', 'tracker']
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize('tracker, why', [(None, 'older than 2.3'),
                                          (False, 'backend takes no tracker')])
def test_allocator_statistics_stand_in_for_the_tracker_with_a_warning(monkeypatch, tracker,
                                                                     why):
    cuda = _FakeCuda(monkeypatch, tracker=tracker, counters=True)
    with pytest.warns(RuntimeWarning, match="allocator's statistics .*" + why):
        paddle_prof.torch._track_cuda_memory('All')
    assert cuda.calls[-1] == 'counters'
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter('always')
        paddle_prof.torch._track_cuda_memory('All')  # the next profile: read, not warned
    assert cuda.calls.count('counters') == 2
    assert not again


def test_gpu_memory_untracked_says_why(monkeypatch):
    _FakeCuda(monkeypatch, tracker=False, counters=False)
    with pytest.warns(RuntimeWarning, match='not tracked.*PYTORCH_NO_CUDA_MEMORY_CACHING'):
        paddle_prof.torch._track_cuda_memory('GPU')
    _FakeCuda(monkeypatch, tracker=None, counters=None)
    with pytest.warns(RuntimeWarning, match='not tracked.*CPU-only PyTorch'):
        paddle_prof.torch._track_cuda_memory('GPU')


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
