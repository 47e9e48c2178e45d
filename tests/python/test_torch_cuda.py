"""paddle_prof.torch on a CUDA GPU: GPU memory and GPU time per ATen op. Skipped where
PyTorch has no usable GPU (benchmarks/gpu_check.sh runs it on a machine with one)."""

import io
import json

import pytest

torch = pytest.importorskip('torch', reason='PyTorch is not installed')
pytest.importorskip('paddle_prof._torch_bridge', reason='paddle_prof was built without Torch')
if not torch.cuda.is_available():
    pytest.skip('PyTorch sees no CUDA GPU here', allow_module_level=True)

import paddle_prof  # noqa: E402
import paddle_prof.torch  # noqa: E402
from paddle_prof import _torch_bridge  # noqa: E402


def rows(report, name):
    return [e for e in report.events if e.name == name]


def test_cpu_state_tracks_gpu_tensors_once_cuda_is_in_use():
    # First in the file: the tracker, once attached, stays for the process.
    torch.zeros(1, device='cuda')  # the program uses CUDA before profiling
    with paddle_prof.torch.profiler('CPU', stream=io.StringIO()) as prof:
        with paddle_prof.record_event('make_weights'):
            w = torch.empty(512, 1024, dtype=torch.float32, device='cuda')
    make = rows(prof.report, 'make_weights')[0]
    assert make.memory['CUDA:0']['peak_bytes'] == 512 * 1024 * 4, prof.report.table()
    assert make.gpu_total_ms is None  # no GPU timing in a CPU profile
    del w


def test_gpu_tensor_of_a_known_size_reads_exactly():
    assert _torch_bridge.WITH_CUDA, 'the bridge was built without CUDA tensor tracking'
    with paddle_prof.torch.profiler('GPU', stream=io.StringIO()) as prof:
        with paddle_prof.record_event('fill_constant'):
            x = torch.empty(1000, 784, dtype=torch.float32, device='cuda')
            torch.cuda.synchronize()
    assert _torch_bridge.cuda_tracking()
    fill = rows(prof.report, 'fill_constant')[0]
    assert fill.memory['CUDA:0']['peak_bytes'] == 3136000, prof.report.table()
    assert fill.memory['CUDA:0']['live_bytes'] == 3136000
    assert fill.memory['CUDA:0']['alloc_count'] == 1
    del x


def test_training_step_reports_gpu_memory_and_time_per_op(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.randn(256, 784, device='cuda')
    target = torch.randint(0, 10, (256,), device='cuda')

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(data), target)
        loss.backward()
        opt.step()

    step()  # cuBLAS handles and kernels loaded outside the window
    torch.cuda.synchronize()
    path = str(tmp_path / 'gpu_profile.json')
    with paddle_prof.torch.profiler('All', profile_path=path, stream=io.StringIO()) as prof:
        for _ in range(3):
            with paddle_prof.record_event('train_step'):
                step()
                torch.cuda.synchronize()
            paddle_prof.mark_step()
    report = prof.report
    print(report.table())

    assert [p.place for p in report.places].count('CUDA:0') == 1
    addmm = rows(report, 'aten::addmm')
    assert addmm and sum(r.calls for r in addmm) == 6  # two Linear layers, three steps
    for r in addmm:
        assert r.gpu_total_ms > 0
        assert r.gpu_min_ms <= r.gpu_ave_ms <= r.gpu_max_ms
        # The output (256x512 or 256x10 float32) is allocated inside the op, on the GPU.
        assert r.memory['CUDA:0']['peak_bytes'] >= 256 * 10 * 4
    # Synchronised inside the scope: its GPU time (kernels merged, not summed) lies
    # within its wall time.
    train = rows(report, 'train_step')[0]
    assert 0 < train.gpu_total_ms <= train.total_ms
    assert train.gpu_max_ms <= train.max_ms
    assert any('CUDA:0' in r.memory and r.memory['CUDA:0']['peak_bytes'] > 0
               for r in report.events if r.name.startswith('aten::'))
    trace = json.load(open(path))['traceEvents']
    assert any(e.get('cat') == 'kernel' for e in trace)
    assert any(e.get('ph') == 's' for e in trace) and any(e.get('ph') == 'f' for e in trace)



def test_gpu_time_survives_a_torch_profiler_session_before_it():
    # Kineto registers CUPTI's process-wide buffer callbacks as its own; ours must win
    # them back at the next window.
    x = torch.randn(512, 512, device='cuda')
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]):
        (x @ x).sum().item()
    with paddle_prof.torch.profiler('GPU', stream=io.StringIO()) as prof:
        y = x @ x
        torch.cuda.synchronize()
    mm = rows(prof.report, 'aten::mm')
    assert mm and mm[0].gpu_total_ms > 0, prof.report.table()
    del y


# Runs in a child: the allocator backend is chosen once per process, from the environment.
_COUNTERS_CHILD = r'''
import io, json, warnings
import torch
import paddle_prof, paddle_prof.torch
from paddle_prof import _torch_bridge
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    with paddle_prof.torch.profiler('GPU', stream=io.StringIO()) as prof:
        x = torch.empty(1000, 784, dtype=torch.float32, device='cuda')
        y = torch.relu(x)
        del x
        torch.cuda.synchronize()
        z = torch.zeros(1, device='cuda')  # its first read sees x freed
place = [p for p in prof.report.places if p.place == 'CUDA:0'][0]
print(json.dumps({
    'tracking': _torch_bridge.cuda_tracking(),
    'warnings': [str(w.message) for w in caught],
    'rows': {e.name: e.memory.get('CUDA:0') for e in prof.report.events},
    'net': place.end_bytes - place.start_bytes,
}))
'''


def test_allocator_statistics_stand_in_where_no_tracker_attaches():
    import os
    import subprocess
    import sys
    if not _torch_bridge.WITH_CUDA_COUNTERS:
        pytest.skip('the bridge was built against a CPU-only torch')
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF='backend:cudaMallocAsync')
    out = subprocess.run([sys.executable, '-c', _COUNTERS_CHILD], env=env, check=True,
                         capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert not result['tracking']
    assert any("allocator's statistics" in w for w in result['warnings']), result['warnings']
    rows = result['rows']
    # The driver's pool rounds up a little; a 3,136,000-byte tensor is never read smaller.
    for op in ('aten::empty', 'aten::relu'):
        assert 3136000 <= rows[op]['peak_bytes'] < 3136000 + (2 << 20), rows
    assert rows['aten::relu']['alloc_bytes'] == rows['aten::relu']['peak_bytes']
    # x's free is read as aten::zeros begins, with no event open around it.
    assert rows['[no event]']['free_bytes'] >= 3136000, rows
    assert 3136000 <= result['net'] < 3136000 + (2 << 20) + 4096, result


def test_a_cuda_out_of_memory_writes_the_dump_before_torch_raises(tmp_path):
    oom_path = tmp_path / 'oom.json'
    with paddle_prof.torch.profiler('GPU', stream=io.StringIO(), oom_path=oom_path):
        with paddle_prof.record_event('train_step'):
            with pytest.raises(RuntimeError, match='out of memory'):
                torch.empty(1 << 50, dtype=torch.uint8, device='cuda')  # 1 PiB
    assert _torch_bridge.cuda_tracking(), 'no observer without the tracker'
    with open(str(oom_path) + '.summary.json') as f:
        oom = json.load(f)['oom']
    assert oom['place'] == 'CUDA:0'
    assert oom['requested_bytes'] >= 1 << 50
    assert oom['event'] == 'aten::empty'
    assert oom['path'] == ['train_step', 'aten::empty']


def test_memory_kinds_on_the_gpu_are_exact_for_a_model_moved_there_before_the_window(tmp_path):
    # A fresh process: the tracker attaches at its first window, after the model exists.
    import subprocess
    import sys
    import textwrap
    script = textwrap.dedent('''
        import io, json, torch, paddle_prof.torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                    torch.nn.Linear(512, 10)).cuda()
        optimizer = torch.optim.Adam(model.parameters())
        x = torch.randn(64, 784, device="cuda")
        model(x).sum().backward()
        optimizer.step()                          # GPU moments, CPU step counts
        with paddle_prof.torch.profiler("GPU", stream=io.StringIO()) as prof:
            for _ in range(2):
                optimizer.zero_grad(set_to_none=False)
                model(x).sum().backward()
                optimizer.step()
                prof.step()
        def on_gpu(tensors):
            return sum(t.numel() * t.element_size() for t in tensors if t.is_cuda)
        state = [v for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v)]
        place = next(p for p in prof.report.to_dict()["places"] if p["place"] == "CUDA:0")
        print(json.dumps({"place": place, "params": on_gpu(model.parameters()),
                          "state": on_gpu(state),
                          "allocated": torch.cuda.memory_allocated()}))
    ''')
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    place = out["place"]
    for moment in ("categories_at_peak", "categories_end"):
        assert place[moment]["parameter"] == out["params"], place
        assert place[moment]["gradient"] == out["params"], place
        assert place[moment]["optimizer_state"] == out["state"], place
    assert place["end_bytes"] == out["allocated"] == sum(place["categories_end"].values())
    assert sum(place["categories_at_peak"].values()) == place["peak_bytes"]
