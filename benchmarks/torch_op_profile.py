"""Where a profiled small op's time goes, function by function, against torch's floor.

    PYTHONPATH=build/python python3 benchmarks/torch_op_profile.py [--ops 200000] [--windows 4]

Runs the loop of torch_op_overhead.py (torch.add on 8 floats, one intra-op thread) in two
child processes under `perf record` (cpu-clock), sampled only while the loop runs (perf's
control FIFO turns sampling on and off around it, so that neither the window's opening
nor its report is counted, nor the first window, which maps the record chunks): once with torch's floor (an empty global RecordFunction
callback) and once inside `paddle_prof.torch.profiler` windows. Each function's share of
the samples times the loop's time per op gives its ns per op; the table lists the
functions whose ns per op differ most between the two. Needs `perf` (linux-perf).
"""

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time


def child(setup: str, ops: int, windows: int) -> None:
    """The loop, sampled by the perf that started this process; prints its mean ns per op
    over the sampled windows."""
    import io

    import torch

    import paddle_prof.torch
    from paddle_prof import _torch_bridge

    @contextlib.contextmanager
    def floor():
        _torch_bridge._bench_empty_callback(True, False)
        try:
            yield
        finally:
            _torch_bridge._bench_empty_callback(False)

    def window():
        if setup == 'floor':
            return floor()
        return paddle_prof.torch.profiler('CPU', stream=io.StringIO(), modules=False)

    torch.set_num_threads(1)
    control = os.open(os.environ['TORCH_OP_PROFILE_CTL'], os.O_WRONLY)
    ack = os.open(os.environ['TORCH_OP_PROFILE_ACK'], os.O_RDONLY)

    def perf(command: bytes) -> None:
        os.write(control, command)
        os.read(ack, 5)

    a, b = torch.ones(8), torch.ones(8)
    elapsed = []
    for window_index in range(windows + 1):  # the first, unsampled, maps the record chunks
        sampled = window_index > 0
        with window():
            if sampled:
                perf(b'enable\n')
            start = time.perf_counter()
            for _ in range(ops):
                torch.add(a, b)
            if sampled:
                elapsed.append(time.perf_counter() - start)
                perf(b'disable\n')
    print(sum(elapsed) / len(elapsed) / ops * 1e9)  # the samples' time, per op


def profile(setup: str, ops: int, windows: int, folder: str) -> tuple:
    """ns per op of the sampled windows, and {(object, function): ns per op}."""
    ctl, ack, data = (os.path.join(folder, f'{setup}.{n}') for n in ('ctl', 'ack', 'data'))
    for fifo in (ctl, ack):
        os.mkfifo(fifo)
    env = dict(os.environ, TORCH_OP_PROFILE_CTL=ctl, TORCH_OP_PROFILE_ACK=ack)
    out = subprocess.run(
        ['perf', 'record', '-q', '-D', '-1', '--control', f'fifo:{ctl},{ack}', '-e',
         'cpu-clock', '-F', '4000', '-o', data, sys.executable, __file__, '--child', setup,
         '--ops', str(ops), '--windows', str(windows)],
        env=env, check=True, capture_output=True, text=True, timeout=600).stdout
    ns_per_op = float(out.split()[-1])
    report = subprocess.run(['perf', 'report', '-i', data, '--sort', 'dso,sym', '--stdio'],
                            check=True, capture_output=True, text=True, timeout=600).stdout
    shares = {}
    for line in report.splitlines():
        m = re.match(r'\s+([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*)', line)
        if m:
            key = (os.path.basename(m.group(2)), m.group(3).strip()[:70])
            shares[key] = shares.get(key, 0.0) + float(m.group(1)) / 100 * ns_per_op
    return ns_per_op, shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ops', type=int, default=200000)
    parser.add_argument('--windows', type=int, default=4)
    parser.add_argument('--rows', type=int, default=30)
    parser.add_argument('--child', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.ops, args.windows)
        return
    with tempfile.TemporaryDirectory() as folder:
        floor_ns, floor = profile('floor', args.ops, args.windows, folder)
        ours_ns, ours = profile('paddle_prof', args.ops, args.windows, folder)
    print(f'torch.add, ns per op (mean of the sampled windows): floor {floor_ns:.0f}, '
          f'paddle_prof.torch {ours_ns:.0f}, added {ours_ns - floor_ns:+.0f}')
    rows = sorted(set(floor) | set(ours),
                  key=lambda k: ours.get(k, 0.0) - floor.get(k, 0.0), reverse=True)
    print(f'{"added":>7} {"ours":>7} {"floor":>7}  object: function (ns per op)')
    for key in rows[:args.rows]:
        a, b = ours.get(key, 0.0), floor.get(key, 0.0)
        print(f'{a - b:+7.1f} {a:7.1f} {b:7.1f}  {key[0]}: {key[1]}')


if __name__ == '__main__':
    main()
