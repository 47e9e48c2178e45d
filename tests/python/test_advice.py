"""Advice: each kind on a program that has the problem and on a control that does not;
varying_shapes and malloc_retention also with their fix applied, which then shows neither
the advice nor the growth. Programs run in their own process, so that the settings a fix
names apply from its start."""

import json
import os
import re
import subprocess
import sys

import pytest

import paddle_prof
from helpers import run_script

EXAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'examples')
PRELOAD = os.path.join(os.path.dirname(paddle_prof.__file__), 'libpaddle_prof_preload.so')


def run(tmp_path, source, *, env=None, native=False, name='program'):
    """Runs `source` (which writes its summary to PROFILE) and returns the summary."""
    profile = tmp_path / f'{name}.json'
    run_script(tmp_path, source.replace('PROFILE', repr(str(profile))),
               run=['--native'] if native else None, env=env, name=name, timeout=300)
    with open(f'{profile}.summary.json') as f:
        return json.load(f)


def advice_of(summary, kind):
    return [a for a in summary['advice'] if a['kind'] == kind]


def grew(summary, what):
    return [w for w in summary['warnings'] if w.startswith(what)]


# ---- varying_shapes ----

# Inputs 192 wide (18,432 elements and up) take oneDNN's path on every CPU and thread
# count; smaller ones may take torch's slow path, whose growth is MKL's sgemm buffers,
# which oneDNN's caps do not bound.
SHAPES = f'''
    import sys, torch, paddle_prof, paddle_prof.torch
    sys.path.insert(0, {EXAMPLES!r})
    from shape_growth import make_model
    torch.manual_seed(0)
    model = make_model()
    with torch.no_grad(), paddle_prof.torch.profiler(
            'CPU', 'live_memory', profile_path=PROFILE, record_shapes=True, row_limit=5):
        for i in range(24):
            model(torch.randn(1, 3, 32 + i * VARY, 192))
            paddle_prof.mark_step()
'''

ONEDNN_CAPS = {'LRU_CACHE_CAPACITY': '1', 'ONEDNN_PRIMITIVE_CACHE_CAPACITY': '0'}


@pytest.mark.torch
@pytest.mark.skipif(not os.path.exists(PRELOAD), reason='no preload library built')
def test_varying_shapes_names_the_op_its_shapes_and_the_cache_caps_that_end_it(tmp_path):
    summary = run(tmp_path, SHAPES.replace('VARY', '1'), native=True)
    [advice] = advice_of(summary, 'varying_shapes')
    assert advice['message'].startswith('aten::mkldnn_convolution holds ')
    assert ' different input shapes (most under [[1, 16, ' in advice['message']
    assert 'LRU_CACHE_CAPACITY=1 ONEDNN_PRIMITIVE_CACHE_CAPACITY=0' in advice['fix']
    assert advice['ms'] is None
    # What is at stake: every block the op still holds, on every place.
    held = sum(m['live_bytes'] for row in summary['events']
               if row['name'] == 'aten::mkldnn_convolution' for m in row['memory'].values())
    assert advice['bytes'] == held > 0
    assert grew(summary, 'live memory grew')

    # The fix: oneDNN's caches capped, both of them.
    fixed = run(tmp_path, SHAPES.replace('VARY', '1'), native=True, env=ONEDNN_CAPS,
                name='fixed')
    assert not advice_of(fixed, 'varying_shapes'), fixed['advice']
    assert not grew(fixed, 'live memory grew'), fixed['warnings']

    # The control: one shape all along.
    same = run(tmp_path, SHAPES.replace('VARY', '0'), native=True, name='same')
    assert not advice_of(same, 'varying_shapes'), same['advice']
    assert not grew(same, 'live memory grew'), same['warnings']


# ---- malloc_retention ----

# Each step allocates buffers a little larger than the last step's, keeps a 1 KiB head
# of each (shrunk in place) and drops the rest: the freed tails are too small for the
# next step's buffers, so malloc keeps them, pinned between the heads. The control keeps
# nothing.
RETENTION = '''
    import paddle_prof
    heads = []
    with paddle_prof.profiler('CPU', 'total', profile_path=PROFILE, row_limit=5):
        for step in range(24):
            batch = [bytearray((100 + step) << 10) for _ in range(12)]
            for buffer in batch:
                if KEEP:
                    del buffer[1024:]
            if KEEP:
                heads += batch
            del batch
            paddle_prof.mark_step()
'''


def floor_rise(summary, figure):
    values = [step['process'][figure] for step in summary['steps']]
    third = max(len(values) // 3, 1)
    return min(values[-third:]) - min(values[:third])


def test_malloc_retention_cites_what_malloc_kept_and_its_fix_ends_the_growth(tmp_path):
    summary = run(tmp_path, RETENTION.replace('KEEP', 'True'))
    if 'heap_free_bytes' not in summary['steps'][0]['process']:
        pytest.skip("malloc is not glibc's here")
    [advice] = advice_of(summary, 'malloc_retention')
    kept = floor_rise(summary, 'heap_free_bytes')
    assert advice['bytes'] == kept >= 8 << 20
    assert floor_rise(summary, 'rss_bytes') >= 16 << 20
    assert 'MALLOC_MMAP_THRESHOLD_=65536' in advice['fix']
    assert grew(summary, "the process's resident memory grew")

    fixed = run(tmp_path, RETENTION.replace('KEEP', 'True'), name='fixed',
                env={'MALLOC_MMAP_THRESHOLD_': '65536'})
    assert not advice_of(fixed, 'malloc_retention'), fixed['advice']
    assert not grew(fixed, "the process's resident memory grew"), fixed['warnings']

    control = run(tmp_path, RETENTION.replace('KEEP', 'False'), name='control')
    assert not advice_of(control, 'malloc_retention'), control['advice']
    assert not grew(control, "the process's resident memory grew"), control['warnings']


@pytest.mark.torch
def test_the_profilers_own_memory_is_not_the_programs(tmp_path):
    """A training loop whose memory is flat unprofiled: many small layers, so that small
    blocks the profiler kept per step or per name would pin the holes torch frees, and
    the heap would grow because it was profiled."""
    summary = run(tmp_path, '''
        import torch, paddle_prof, paddle_prof.torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(64, 64),
                                                          torch.nn.ReLU()) for _ in range(200)])
        optimizer = torch.optim.Adam(model.parameters())
        batches = [torch.randn(32, 64) for _ in range(8)]
        with paddle_prof.torch.profiler('CPU', 'total', profile_path=PROFILE,
                                        record_shapes=True, row_limit=5) as prof:
            for step in range(120):
                model(batches[step % 8]).sum().backward()
                optimizer.step()
                optimizer.zero_grad()
                prof.step()
    ''')
    assert len(summary['steps']) == 120
    assert not grew(summary, "the process's resident memory grew"), summary['warnings']
    assert not advice_of(summary, 'malloc_retention'), summary['advice']


# ---- data_bound ----

DATA = '''
    import time, torch, paddle_prof, paddle_prof.torch

    class Slow(torch.utils.data.Dataset):
        def __len__(self):
            return 64
        def __getitem__(self, i):
            time.sleep(SLEEP)  # decoding, say
            return torch.full((512,), float(i))

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(LAYERS)])
    loader = torch.utils.data.DataLoader(Slow(), batch_size=8)
    with paddle_prof.torch.profiler('CPU', 'total', profile_path=PROFILE, row_limit=5) as prof:
        for x in loader:
            model(x).sum().backward()
            prof.step(num_samples=len(x))
'''


@pytest.mark.torch
def test_data_bound_when_the_steps_wait_for_their_batches(tmp_path):
    summary = run(tmp_path, DATA.replace('SLEEP', '0.004').replace('LAYERS', '1'))
    [advice] = advice_of(summary, 'data_bound')
    assert advice['ms'] == summary['phases_ms']['data']
    step_ms = sum(step['wall_ms'] for step in summary['steps'])
    assert advice['ms'] >= 0.3 * step_ms
    assert 'of step time' in advice['message'] and 'num_workers' in advice['fix']

    control = run(tmp_path, DATA.replace('SLEEP', '0').replace('LAYERS', '24'), name='control')
    assert not advice_of(control, 'data_bound'), control['advice']
    assert control['phases_ms']['data'] < 0.3 * sum(s['wall_ms'] for s in control['steps'])


# ---- activation_bound ----

ACTIVATIONS = '''
    import torch, paddle_prof, paddle_prof.torch
    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Conv2d(3 if i == 0 else 32, 32, 3, padding=1),
                                  torch.nn.ReLU()) for i in range(DEPTH)]
    model = torch.nn.Sequential(*blocks, torch.nn.Flatten(),
                                torch.nn.Linear(32 * SIZE * SIZE, WIDTH))
    x = torch.randn(BATCH, 3, SIZE, SIZE)
    with paddle_prof.torch.profiler('CPU', 'total', profile_path=PROFILE, row_limit=5) as prof:
        for _ in range(2):
            model(x).sum().backward()
            prof.step()
'''


@pytest.mark.torch
def test_activation_bound_names_the_modules_that_keep_the_most(tmp_path):
    # Each block keeps its ReLU's output for backward: 2 MiB a block.
    summary = run(tmp_path, ACTIVATIONS.replace('DEPTH', '8').replace('SIZE', '32')
                  .replace('WIDTH', '2').replace('BATCH', '16'))
    [advice] = advice_of(summary, 'activation_bound')
    cpu = next(p for p in summary['places'] if p['place'] == 'CPU')
    assert advice['bytes'] == cpu['categories_at_peak']['activation'] >= cpu['peak_bytes'] / 2
    # The module (not the root) whose forward left the most alive comes first.
    kept = sorted((m for m in summary['modules'] if m['depth'] > 0),
                  key=lambda m: -m['memory'].get('CPU', {}).get('activation_bytes', 0))
    assert f"the most: {kept[0]['path']} (" in advice['fix'], advice['fix']
    assert 'torch.utils.checkpoint' in advice['fix']

    # Parameters dominate: a wide layer on a small input.
    control = run(tmp_path, ACTIVATIONS.replace('DEPTH', '1').replace('SIZE', '8')
                  .replace('WIDTH', '4096').replace('BATCH', '1'), name='control')
    assert not advice_of(control, 'activation_bound'), control['advice']


# ---- small_ops ----

OPS = '''
    import torch, paddle_prof, paddle_prof.torch
    x = torch.ones(SIZE, SIZE)
    with paddle_prof.torch.profiler('CPU', 'total', profile_path=PROFILE, row_limit=5):
        for _ in range(CALLS):
            x = torch.mm(x, x) * 0.0001 + 1
'''


@pytest.mark.torch
def test_small_ops_when_calling_ops_costs_more_than_their_work(tmp_path):
    summary = run(tmp_path, OPS.replace('SIZE', '2').replace('CALLS', '3000'))
    [advice] = advice_of(summary, 'small_ops')
    small = sum(r['self_ms'] for r in summary['events']
                if r['calls'] > 0 and r['p50_ms'] is not None and 0 < r['p50_ms'] < 0.020)
    assert advice['ms'] == pytest.approx(small, rel=1e-9)
    assert advice['ms'] >= 0.5 * sum(r['self_ms'] for r in summary['events'])
    assert 'torch.compile' in advice['fix']

    control = run(tmp_path, OPS.replace('SIZE', '400').replace('CALLS', '20'), name='control')
    assert not advice_of(control, 'small_ops'), control['advice']


# ---- the seed's report, read as a newcomer reads it ----

@pytest.mark.torch
@pytest.mark.skipif(not os.path.exists(PRELOAD), reason='no preload library built')
def test_the_shape_growth_report_says_each_thing_once_in_order_within_120_columns(tmp_path):
    example = os.path.join(EXAMPLES, 'shape_growth.py')
    result = subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', '--native', '--',
                             example, '--inputs', '24'],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    text = result.stdout
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 120, max(lines, key=len)
    # In order, each once: header, memory, table, why memory grew, advice; the native
    # place's peak is exact, with no note to qualify it.
    order = ['Place: CPU', 'Memory on native:', 'Event ', 'Why memory grew:', 'Advice:']
    assert 'Note: native' not in text
    at = [text.find('\n' + heading) for heading in order]
    assert all(i >= 0 for i in at) and at == sorted(at), list(zip(order, at))
    for heading in order[3:]:
        assert text.count(heading) == 1, heading
    assert text.count('live memory grew over 24 steps') == 1
    assert 'Warning: live memory' not in text and 'Warning: native' not in text
    # Shape tags: no runs of empty arguments; the convolutions told apart by their input.
    assert ', [], [' not in text and ', []]' not in text
    # (The name may be cut to fit 120 columns, as the numbers' widths leave it room.)
    rows = [line.split('  ')[0] for line in lines
            if line.startswith('aten::mkld') and '_convolution [[1,' in line]
    assert len(rows) >= 8 and len(set(rows)) == len(rows), rows
    # The input's shape, then what all of them share, elided.
    assert all(re.fullmatch(r'aten::mkld(nn|…)_convolution \[\[1, ?16, ?\d+, ?32\], ?…\]', row)
               for row in rows), rows
    # The growth's advice, with the fix for this machine's torch.
    advice = text.split('\nAdvice:\n')[1]
    assert advice.startswith('  - varying_shapes: aten::mkldnn_convolution holds ')
    assert 'LRU_CACHE_CAPACITY=1\n' in advice or 'LRU_CACHE_CAPACITY=1 ' in advice
