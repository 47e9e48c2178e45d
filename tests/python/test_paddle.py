"""paddle_prof.paddle on PyPI's PaddlePaddle 3.x (scripts/paddle_env.sh; scripts/test.sh
sets PADDLE_PROF_REQUIRE_PADDLE there, so that a missing Paddle fails instead of
skipping): every op of an eager and of a static program, with exact memory."""

import importlib.util
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

if os.environ.get("PADDLE_PROF_REQUIRE_PADDLE") == "1":
    import paddle
else:
    paddle = pytest.importorskip("paddle")
import numpy as np  # noqa: E402

import paddle_prof  # noqa: E402
import paddle_prof.paddle  # noqa: E402
from helpers import run_script  # noqa: E402

FULL_BYTES = 1000 * 784 * 4  # paddle.full([1000, 784], 1.0): 3,136,000 bytes
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "train_paddle.py")


PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(paddle_prof.__file__)))


def run_profiled(tmp_path, source):
    """The summary of `python3 -m paddle_prof run -- script` of `source`."""
    run_script(tmp_path, source, run=["--profile-path", str(tmp_path / "r.json")], name="train")
    return paddle_prof.load(str(tmp_path / "r.json.summary.json")).to_dict()


def rows_of(report):
    return {e.name: e for e in report.events}


def test_an_eager_training_step_is_its_ops_with_exact_memory():
    paddle.disable_static()
    paddle.seed(0)
    net = paddle.nn.Linear(784, 10)
    optimizer = paddle.optimizer.Adam(parameters=net.parameters())
    with paddle_prof.paddle.profiler("CPU", "total", stream=io.StringIO()) as prof:
        x = paddle.full([1000, 784], 1.0)
        for _ in range(3):
            loss = net(x).mean()
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            paddle_prof.mark_step()
    rows = rows_of(prof.report)
    # Each op by Paddle's own name, its gradient node as the grad op; Adam steps each of
    # the two parameters.
    for name, calls in (("matmul", 3), ("add", 3), ("mean", 3), ("matmul_grad", 3),
                        ("add_grad", 3), ("mean_grad", 3), ("adam_", 6), ("full", 1)):
        assert rows[name].calls == calls, (name, rows[name].calls)
    assert not [name for name in rows if name.endswith(" dygraph") or name.startswith("Global_")]
    full = rows["full"].memory["CPU"]
    assert full["peak_bytes"] == full["live_bytes"] == FULL_BYTES
    # The gradients clear_grad() keeps (zeroed): the weight's 784 x 10 and the bias's 10.
    assert rows["matmul_grad"].memory["CPU"]["live_bytes"] == 784 * 10 * 4
    assert rows["add_grad"].memory["CPU"]["live_bytes"] == 10 * 4
    for row in prof.report.events:
        if row.calls:
            assert row.min_ms <= row.ave_ms <= row.max_ms, row.name
    [cpu] = [p for p in prof.report.to_dict()["places"] if p["place"] == "CPU"]
    assert sum(h["bytes"] for h in cpu["at_peak"]) == cpu["peak_bytes"]
    assert cpu["end_bytes"] - cpu["start_bytes"] == sum(
        r.memory["CPU"]["live_bytes"] for r in prof.report.events if "CPU" in r.memory)


def run_static_program(runs, each_run):
    """The program as examples/train_paddle.py builds it, run `runs` times in a window,
    each_run(i) before each run."""
    spec = importlib.util.spec_from_file_location("train_paddle", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    paddle.enable_static()
    try:
        main, startup, fetch = example.build()
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        feed = {"image": np.ones((32, 784), "float32"), "label": np.ones((32, 1), "int64")}
        with paddle_prof.paddle.profiler("CPU", "total", stream=io.StringIO()) as prof:
            for i in range(runs):
                each_run(i)
                exe.run(main, feed=feed, fetch_list=fetch)
    finally:
        paddle.disable_static()
    return prof.report


def test_the_seeds_static_program_runs_as_written_with_the_profiler_swapped_in():
    report = run_static_program(10, lambda i: i == 2 and paddle_prof.reset_profiler())
    rows = rows_of(report)
    # The 8 runs after the reset: each op once a run, the two fc layers' twice.
    for name in ("matmul", "matmul_grad", "add_", "add_grad", "momentum_"):
        assert rows[name].calls % 16 == 0 and rows[name].calls > 0, (name, rows[name].calls)
    for name in ("relu_", "relu_grad_", "softmax_", "softmax_grad",
                 "cross_entropy_with_softmax", "cross_entropy_with_softmax_grad_"):
        assert rows[name].calls == 8, (name, rows[name].calls)
    assert not [name for name in rows if name.startswith("pd_op.")]
    assert rows["full"].memory["CPU"]["peak_bytes"] == FULL_BYTES


# fc 784->128 and 128->10: weights and biases, float32.
STATIC_PARAM_BYTES = (784 * 128 + 128 + 128 * 10 + 10) * 4  # 407,080


def test_a_static_programs_ops_are_phased_by_role_and_its_parameters_known_by_name():
    report = run_static_program(4, lambda i: i > 0 and paddle_prof.mark_step())
    assert len(report.steps) == 3
    rows = rows_of(report)
    for step in report.steps:
        p = step.phases_ms
        assert sum(p.values()) == pytest.approx(step.wall_ms, abs=1e-6)
        # Feeding the inputs is data; matmul forward, matmul_grad backward, momentum_
        # the optimizer's: each phase has time in every run.
        assert all(p[phase] > 0 for phase in ("data", "forward", "backward", "optimizer")), p
    assert sum(s.phases_ms["data"] for s in report.steps) <= rows["paddle.static.Executor.feed"].total_ms
    assert rows["paddle.static.Executor.run"].calls == 4
    [cpu] = [p for p in report.to_dict()["places"] if p["place"] == "CPU"]
    # The scope's parameters; Momentum's velocity of each, and its 4-byte learning rate.
    assert cpu["categories_end"]["parameter"] == STATIC_PARAM_BYTES
    assert cpu["categories_end"]["optimizer_state"] == STATIC_PARAM_BYTES + 4
    # Each run's feed is an input: its image and label (32 rows) live at once.
    timeline = report.to_dict()["timeline"]["CPU"]["by_category"]
    assert max(timeline["input"]) >= 32 * 784 * 4 + 32 * 8


def test_a_paddle_it_was_not_made_for_is_an_import_error(tmp_path):
    script = tmp_path / "old.py"
    script.write_text(textwrap.dedent("""
        import paddle
        paddle.__version__ = "2.6.2"
        try:
            import paddle_prof.paddle
        except ImportError as e:
            print(e)
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert ("paddle_prof.paddle serves PaddlePaddle 3.x; this is PaddlePaddle 2.6.2"
            in result.stdout), result.stdout


def test_run_installs_the_bridge_when_the_script_imports_paddle(tmp_path):
    source = ("import paddle\nx = paddle.full([1000, 784], 1.0)\n"
              "y = paddle.matmul(x, paddle.ones([784, 10]))\n"
              "net = paddle.nn.Linear(10, 2)\n"
              "optimizer = paddle.optimizer.SGD(parameters=net.parameters())\n"
              "for _ in range(3):\n"
              "    net(y).mean().backward()\n"
              "    optimizer.step()\n"
              "    optimizer.clear_grad()\n")
    summary = run_profiled(tmp_path, source)
    rows = {r["name"]: r for r in summary["events"]}
    # The script's matmul, and the Linear's three.
    assert rows["matmul"]["calls"] == 4
    # paddle.full and paddle.ones are both full: the larger is the [1000, 784] one, kept.
    assert rows["full"]["memory"]["CPU"]["peak_bytes"] == FULL_BYTES
    # Its layer, a step at each optimizer step, and the Linear's weight and bias by kind.
    assert [(m["path"], m["calls"]) for m in summary["modules"]] == [("Linear", 3)]
    assert len(summary["steps"]) == 3
    assert all(s["phases_ms"]["optimizer"] > 0 for s in summary["steps"])
    [cpu] = [p for p in summary["places"] if p["place"] == "CPU"]
    assert cpu["categories_end"]["parameter"] == (10 * 2 + 2) * 4


def test_run_makes_a_step_of_each_run_of_a_static_training_program(tmp_path):
    summary = run_profiled(tmp_path, f"""
        import sys
        import numpy as np, paddle
        sys.path.insert(0, {os.path.dirname(EXAMPLE)!r})
        from train_paddle import build
        paddle.enable_static()
        main, startup, fetch = build()
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        feed = {{"image": np.ones((32, 784), "float32"), "label": np.ones((32, 1), "int64")}}
        for _ in range(3):
            exe.run(main, feed=feed, fetch_list=fetch)
        exe.run(startup)  # no gradient op: ends no step
    """)
    # Three, and the program's building (Momentum.minimize) is none.
    steps = [s["phases_ms"] for s in summary["steps"]]
    assert len(steps) == 3
    assert all(p["backward"] > 0 and p["optimizer"] > 0 for p in steps), steps
    [cpu] = [p for p in summary["places"] if p["place"] == "CPU"]
    assert cpu["categories_end"]["parameter"] == STATIC_PARAM_BYTES


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(784, 128)
        self.fc2 = paddle.nn.Linear(128, 10)
        self.head = self.fc2  # one layer held under two names

    def forward(self, x):
        return self.head(paddle.nn.functional.relu(self.fc1(x)))


def train_net(steps=3, **options):
    paddle.disable_static()
    paddle.seed(0)
    net = Net()
    optimizer = paddle.optimizer.Adam(parameters=net.parameters())
    x = paddle.randn([64, 784])
    with paddle_prof.paddle.profiler("CPU", "total", stream=io.StringIO(), **options) as prof:
        for _ in range(steps):
            loss = net(x).mean()
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            prof.step(num_samples=64)
    return prof.report


def test_layers_are_the_model_view_with_their_ops_memory():
    report = train_net()
    modules = {m.path: m for m in report.modules}
    assert list(modules) == ["Net", "Net.fc1", "Net.{fc2,head}"]
    assert [(m.type, m.calls) for m in modules.values()] == [("Net", 3), ("Linear", 3),
                                                              ("Linear", 3)]
    assert modules["Net.fc1"].params == 784 * 128 + 128
    assert modules["Net.fc1"].param_bytes == 4 * (784 * 128 + 128)
    assert modules["Net"].params == 784 * 128 + 128 + 128 * 10 + 10
    assert modules["Net"].forward_ms >= modules["Net.fc1"].forward_ms
    # fc1's ops ran inside its call: their outputs (64 x 128 floats, kept alive for the
    # backward) are what its forward left alive.
    assert modules["Net.fc1"].memory["CPU"]["activation_bytes"] >= 64 * 128 * 4
    assert not train_net(steps=1, modules=False).modules


def trace_calls(path):
    """The trace's calls of each thread: (name, start, end), by thread id."""
    with open(path) as f:
        trace = json.load(f)
    calls = {}
    for e in trace["traceEvents"] if isinstance(trace, dict) else trace:
        if e.get("ph") == "X" and e.get("tid") != 0:
            calls.setdefault(e["tid"], []).append((e["name"], e["ts"], e["ts"] + e["dur"]))
    return calls


def layers_around(calls, name):
    """For each call of `name` in `calls` (one thread's, trace_calls), the layer backward
    events around it, outermost first."""
    found = []
    for op, start, end in calls:
        if op == name:
            around = [(s, -e, n) for n, s, e in calls if n.startswith("nn.Layer: ")
                      and n.endswith(".backward") and s <= start and end <= e]
            found.append(tuple(n for _, _, n in sorted(around)))
    return found


def backward_thread(path):
    [calls] = [c for c in trace_calls(path).values()
               if any(name == "paddle.autograd.backward" for name, _, _ in c)]
    return calls


def test_a_layers_gradient_computation_is_its_backward_event_around_its_grad_ops(tmp_path):
    report = train_net(profile_path=str(tmp_path / "net.json"))
    modules = {m.path: m for m in report.modules}
    assert all(m.backward_ms > 0 for m in modules.values()), modules
    rows = rows_of(report)
    for path in ("Net", "Net.fc1", "Net.{fc2,head}"):
        assert rows[f"nn.Layer: {path}.backward"].calls == 3
    calls = backward_thread(str(tmp_path / "net.json"))
    fc1 = ("nn.Layer: Net.backward", "nn.Layer: Net.fc1.backward")
    fc2 = ("nn.Layer: Net.backward", "nn.Layer: Net.{fc2,head}.backward")
    # Each Linear's two grad ops under its own layer, relu's under Net alone (relu is a
    # function of Net's forward), the loss's mean outside the model.
    assert sorted(layers_around(calls, "matmul_grad")) == [fc1] * 3 + [fc2] * 3
    assert sorted(layers_around(calls, "add_grad")) == [fc1] * 3 + [fc2] * 3
    assert layers_around(calls, "relu_grad") == [("nn.Layer: Net.backward",)] * 3
    assert layers_around(calls, "mean_grad") == [()] * 3
    # Every event nests: none ends inside another it began before.
    for name, start, end in calls:
        for other, s, e in calls:
            assert not (s < start < e < end), (name, other)
    assert not report.warnings


class Recurrent(paddle.nn.Layer):
    """A layer called again on its own output, then one that passes its input on."""

    def __init__(self):
        super().__init__()
        self.cell = paddle.nn.Linear(16, 16)
        self.skip = paddle.nn.Identity()
        self.head = paddle.nn.Linear(16, 2)

    def forward(self, x):
        for _ in range(3):
            x = self.cell(x)
        return self.head(self.skip(x))


def test_a_layer_called_on_its_own_output_keeps_its_gradients_and_an_identity_takes_none(
        tmp_path):
    paddle.disable_static()
    paddle.seed(0)
    net, x = Recurrent(), paddle.randn([4, 16])
    with paddle_prof.paddle.profiler("CPU", stream=io.StringIO(),
                                     profile_path=str(tmp_path / "rnn.json")):
        net(x).sum().backward()
    calls = backward_thread(str(tmp_path / "rnn.json"))
    cell = ("nn.Layer: Recurrent.backward", "nn.Layer: Recurrent.cell.backward")
    head = ("nn.Layer: Recurrent.backward", "nn.Layer: Recurrent.head.backward")
    assert layers_around(calls, "matmul_grad") == [head] + [cell] * 3
    assert layers_around(calls, "add_grad") == [head] + [cell] * 3
    assert "nn.Layer: Recurrent.skip.backward" not in {name for name, _, _ in calls}


def test_each_step_splits_into_phases_that_add_up_to_it():
    steps = train_net().to_dict()["steps"]
    assert len(steps) == 3
    for step in steps:
        phases = step["phases_ms"]
        assert abs(sum(phases.values()) - step["wall_ms"]) < 1e-3  # 1 µs
        assert phases["forward"] > 0 and phases["backward"] > 0 and phases["optimizer"] > 0
        assert step["samples"] == 64
    # The window's hooks are gone with it.
    assert "recorded" not in paddle.Tensor.backward.__qualname__
    assert paddle.nn.Layer.__call__.__qualname__ == "Layer.__call__"


def test_parameters_gradients_and_adams_state_are_known_by_identity_to_the_byte():
    report = train_net()
    params = 784 * 128 + 128 + 128 * 10 + 10
    [cpu] = [p for p in report.to_dict()["places"] if p["place"] == "CPU"]
    end = cpu["categories_end"]
    assert end["parameter"] == 4 * params
    assert end["gradient"] == 4 * params  # clear_grad() keeps them, zeroed
    # Adam: two moments per parameter, and two 1-element beta powers per weight and bias.
    assert end["optimizer_state"] == 2 * 4 * params + 4 * 2 * 4
    assert sum(end.values()) == cpu["end_bytes"]
    assert sum(cpu["categories_at_peak"].values()) == cpu["peak_bytes"]


class SlowData(paddle.io.Dataset):
    """Eight items of 784 floats, each taking 5 ms to make, as a decoding dataset would."""

    def __len__(self):
        return 8

    def __getitem__(self, index):
        import time
        time.sleep(0.005)
        return np.full([784], index, "float32"), np.array([index % 10], "int64")


def test_a_dataloaders_batches_are_the_data_phase():
    paddle.disable_static()
    net = Net()
    optimizer = paddle.optimizer.SGD(parameters=net.parameters())
    loader = paddle.io.DataLoader(SlowData(), batch_size=4, num_workers=0)
    with paddle_prof.paddle.profiler("CPU", stream=io.StringIO()) as prof:
        for x, y in loader:
            net(x).mean().backward()
            optimizer.step()
            optimizer.clear_grad()
            prof.step(num_samples=4)
    steps = prof.report.to_dict()["steps"]
    assert len(steps) == 2
    # The wait for each batch: Paddle's iterator makes the next ones on a thread of its
    # own while the step computes, but the first is waited for nearly whole (four items of
    # 5 ms, begun as the loop made the iterator, a moment before it asked).
    assert steps[0]["phases_ms"]["data"] >= 0.9 * 4 * 5
    for step in steps:
        assert step["phases_ms"]["data"] > 0
        assert abs(sum(step["phases_ms"].values()) - step["wall_ms"]) < 1e-3


TWO_RANKS = """
import io, os, sys, time
import paddle, paddle.distributed as dist
import paddle_prof, paddle_prof.paddle

def train(out):
    dist.init_parallel_env()
    paddle.seed(0)
    net = paddle.DataParallel(paddle.nn.Linear(16, 4))
    optimizer = paddle.optimizer.SGD(parameters=net.parameters())
    x = paddle.randn([8, 16])
    with paddle_prof.paddle.profiler("CPU", profile_path=os.path.join(out, "rank{rank}.json"),
                                     stream=io.StringIO()) as prof:
        for _ in range(3):
            if dist.get_rank() == 1:
                with paddle_prof.record_event("slow_op"):
                    time.sleep(0.05)  # rank 0 waits for it in the gradients' all-reduce
            net(x).mean().backward()
            optimizer.step()
            optimizer.clear_grad()
            prof.step()

if __name__ == "__main__":
    dist.spawn(train, args=(sys.argv[1],), nprocs=2, backend="gloo")
"""


def test_two_ranks_of_paddle_distributed_each_name_their_rank_and_merge(tmp_path):
    script = tmp_path / "two_ranks.py"
    script.write_text(TWO_RANKS)
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM")}
    # Bounded: a rank that hangs fails the test instead of blocking the suite.
    result = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                            text=True, timeout=240, cwd=tmp_path,
                            env={**env, "PYTHONPATH": PACKAGE_ROOT})
    assert result.returncode == 0, result.stderr[-4000:]
    paths = [str(tmp_path / f"rank{rank}.json") for rank in (0, 1)]
    for rank, path in enumerate(paths):
        summary = paddle_prof.load(path + ".summary.json").to_dict()
        assert (summary["process"]["rank"], summary["process"]["world_size"]) == (rank, 2)
        rows = {r["name"]: r for r in summary["events"]}
        assert rows["matmul"]["calls"] == 3 and rows["matmul_grad"]["calls"] == 3
        assert [m["path"] for m in summary["modules"]] == ["DataParallel", "DataParallel._layers"]
        [cpu] = [p for p in summary["places"] if p["place"] == "CPU"]
        assert cpu["categories_end"]["parameter"] == (16 * 4 + 4) * 4
        # DataParallel all-reduces the gradients once a step, in one bucket, through gloo.
        assert rows["gloo:all_reduce"]["calls"] == 3
        assert all(step["comm_ms"] > 0 for step in summary["steps"])
        if rank == 0:  # the wait for rank 1's sleep is communication
            assert sum(step["comm_ms"] for step in summary["steps"]) >= 2 * 50
        # Each rank's page shows its ops, layers and collectives.
        with open(path + ".html") as f:
            page = f.read()
        for name in ("matmul_grad", "nn.Layer: DataParallel._layers", "gloo:all_reduce"):
            assert name in page, name
    merged = paddle_prof.merge(paths)
    assert merged.to_dict()["process"]["world_size"] == 2
    assert {r["name"]: r["calls"] for r in merged.to_dict()["events"]}["matmul"] == 6
    # Rank 0 waited in communication: not a straggler; rank 1 is the one to look at.
    assert [a.message.split(" is behind")[0] for a in merged.advice
            if a.kind == "straggler"] == ["rank 1"], merged.advice


LAUNCHED = """
import io, os, sys
import paddle, paddle.distributed as dist
import paddle_prof, paddle_prof.paddle

dist.init_parallel_env()
paddle.seed(0)
net = paddle.DataParallel(paddle.nn.Linear(16, 4))
optimizer = paddle.optimizer.SGD(parameters=net.parameters())
x = paddle.randn([8, 16])
with paddle_prof.paddle.profiler("CPU", profile_path=os.path.join(sys.argv[1], "rank{rank}.json"),
                                 stream=io.StringIO()) as prof:
    for _ in range(3):
        net(x).mean().backward()
        optimizer.step()
        optimizer.clear_grad()
        prof.step()
"""


def test_ranks_started_by_paddles_launcher_name_their_rank_and_merge(tmp_path):
    script = tmp_path / "launched.py"
    script.write_text(LAUNCHED)
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM")}
    result = subprocess.run(
        [sys.executable, "-m", "paddle.distributed.launch", "--nproc_per_node", "2",
         "--log_dir", str(tmp_path / "log"), str(script), str(tmp_path)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
        env={**env, "PYTHONPATH": PACKAGE_ROOT})
    logs = "".join(p.read_text() for p in (tmp_path / "log").glob("workerlog.*"))
    assert result.returncode == 0, (result.stderr + logs)[-4000:]
    paths = [str(tmp_path / f"rank{rank}.json") for rank in (0, 1)]
    for rank, path in enumerate(paths):
        summary = paddle_prof.load(path + ".summary.json").to_dict()
        assert (summary["process"]["rank"], summary["process"]["world_size"]) == (rank, 2)
        assert {r["name"]: r["calls"] for r in summary["events"]}["gloo:all_reduce"] == 3
    merged = paddle_prof.merge(paths).to_dict()
    assert merged["process"]["world_size"] == 2
    assert {r["name"]: r["calls"] for r in merged["events"]}["matmul"] == 6


LISTENING_RANKS = """
import os, sys, time
import paddle, paddle.distributed as dist
import paddle_prof  # PADDLE_PROF_LISTEN=1 in the environment: it listens, with no code for it

dist.init_parallel_env()
paddle.seed(0)
net = paddle.DataParallel(paddle.nn.Linear(16, 4))
optimizer = paddle.optimizer.SGD(parameters=net.parameters())
x = paddle.randn([8, 16])
for _ in range(100000):
    if dist.get_rank() == 1:
        with paddle_prof.record_event("slow_op"):
            time.sleep(0.002)
    net(x).mean().backward()
    optimizer.step()
    optimizer.clear_grad()
    stopping = paddle.to_tensor([float(os.path.exists(sys.argv[1]))])
    dist.all_reduce(stopping)  # both ranks stop at the same step
    if stopping.item():
        break
"""


def test_trigger_by_job_reaches_every_rank_of_a_paddle_job_through_its_store(tmp_path,
                                                                            monkeypatch):
    """A job started by Paddle's launcher, listening through the environment with no
    code for it: `trigger --job` records 5 of its optimizer steps on both ranks."""
    sockets = tempfile.mkdtemp(prefix="pp")  # short: a Unix socket's path is at most 107 bytes
    monkeypatch.setenv("PADDLE_PROF_LISTEN_DIR", os.path.join(sockets, "s"))
    script, stop, out = tmp_path / "ranks.py", tmp_path / "stop", tmp_path / "out"
    script.write_text(LISTENING_RANKS)
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM")}
    env.update(PYTHONPATH=PACKAGE_ROOT, PADDLE_PROF_LISTEN="1", PADDLE_JOB_ID="job-pd")
    launcher = subprocess.Popen(
        [sys.executable, "-m", "paddle.distributed.launch", "--nproc_per_node", "2",
         "--log_dir", str(tmp_path / "log"), str(script), str(stop)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True)

    def paddle_prof_cli(*args):
        return subprocess.run([sys.executable, "-m", "paddle_prof", *args], env=env,
                              capture_output=True, text=True, timeout=180)

    try:
        deadline = time.monotonic() + 120
        while True:  # until both ranks listen, in the job, and have stepped
            rows = [line.split() for line in paddle_prof_cli("ps").stdout.splitlines()[1:]]
            if sorted(row[2] for row in rows if row[3] == "job-pd" and row[4] != "0") == [
                    "0/2", "1/2"]:
                break
            assert time.monotonic() < deadline and launcher.poll() is None, rows
            time.sleep(0.2)
        started = time.monotonic()
        done = paddle_prof_cli("trigger", "--job", "job-pd", "--steps", "5", "--out", str(out))
        print(f"trigger --job, 2 Paddle ranks x 5 steps: {time.monotonic() - started:.2f} s")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Merged from 2 profiles" in done.stdout and "Steps: 5" in done.stdout, done.stdout
        for rank in (0, 1):
            summary = paddle_prof.load(str(out / f"rank{rank}.summary.json")).to_dict()
            assert (summary["process"]["rank"], summary["process"]["world_size"]) == (rank, 2)
            assert len(summary["steps"]) == 5
            calls = {r["name"]: r["calls"] for r in summary["events"]}
            assert calls["matmul"] == 5 and calls["matmul_grad"] == 5
            assert calls.get("slow_op", 0) == (5 if rank == 1 else 0)
            # Each step all-reduces the gradients and the flag to stop, through gloo.
            assert calls["gloo:all_reduce"] == 2 * 5
        stop.write_text("")
        _, err = launcher.communicate(timeout=120)  # bounded: a hang fails the test
        logs = "".join(p.read_text() for p in (tmp_path / "log").glob("workerlog.*"))
        assert launcher.returncode == 0, (err + logs)[-4000:]
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.communicate()
        shutil.rmtree(sockets, ignore_errors=True)


def test_a_paddle_test_under_the_pytest_plugin_is_held_to_its_ops_memory(tmp_path):
    (tmp_path / "test_subject.py").write_text(textwrap.dedent("""
        import paddle
        import pytest

        @pytest.mark.limit_op_memory("full", "1 MiB")
        def test_full_is_over():
            kept = paddle.full([1000, 784], 1.0)

        @pytest.mark.limit_op_memory("full", "4 MiB")
        def test_full_is_under():
            kept = paddle.full([1000, 784], 1.0)
    """))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "paddle_prof.pytest_plugin", "-p",
         "no:cacheprovider", "-v", "test_subject.py"], capture_output=True, text=True,
        timeout=300, cwd=tmp_path, env={**os.environ, "PYTHONPATH": PACKAGE_ROOT})
    assert "test_subject.py::test_full_is_over FAILED" in result.stdout, result.stdout[-3000:]
    assert "test_subject.py::test_full_is_under PASSED" in result.stdout, result.stdout[-3000:]
    assert "(3,136,000 bytes)" in result.stdout


def test_diff_of_two_paddle_windows_finds_the_op_that_holds_more():
    paddle.disable_static()
    reports = []
    for rows in (1000, 2000):
        with paddle_prof.paddle.profiler("CPU", stream=io.StringIO()) as prof:
            kept = paddle.full([rows, 784], 1.0)
        del kept
        reports.append(prof.report)
    [full] = [r for r in paddle_prof.diff(*reports).rows if r["name"] == "full"]
    assert "more_memory" in full["status"], full


def test_advice_on_small_ops_names_no_torch_tool():
    paddle.disable_static()
    a, b = paddle.ones([8]), paddle.ones([8])
    with paddle_prof.paddle.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(2000):
            paddle.add(a, b)
    [advice] = [a for a in prof.report.to_dict()["advice"] if a["kind"] == "small_ops"]
    assert "add" in advice["message"]
    # paddle.jit.to_static made small ops slower here: no tool is named, torch's least.
    assert advice["fix"] == "Give each call more work: larger batches, fewer and larger ops."


CONV_NET = """
import io, json, sys
import paddle, paddle_prof, paddle_prof.paddle
from paddle.distributed.fleet.utils import recompute


class ConvNet(paddle.nn.Layer):
    # Eight conv blocks on 32x32 images: each keeps its ReLU's output for backward.
    def __init__(self, recomputed):
        super().__init__()
        self.recomputed = recomputed
        self.blocks = paddle.nn.LayerList([
            paddle.nn.Sequential(paddle.nn.Conv2D(3 if i == 0 else 32, 32, 3, padding=1),
                                 paddle.nn.ReLU()) for i in range(8)])
        self.head = paddle.nn.Linear(32 * 32 * 32, 2)

    def forward(self, x):
        for block in self.blocks:
            x = recompute(block, x) if self.recomputed else block(x)
        return self.head(x.flatten(1))


paddle.seed(0)
model = ConvNet(sys.argv[1] == "recompute")
x = paddle.randn([16, 3, 32, 32])
with paddle_prof.paddle.profiler("CPU", stream=io.StringIO()) as prof:
    for _ in range(2):
        model(x).sum().backward()
        prof.step()
summary = prof.report.to_dict()
[cpu] = [p for p in summary["places"] if p["place"] == "CPU"]
print(json.dumps({"cpu": cpu, "advice": [a for a in summary["advice"]
                                         if a["kind"] == "activation_bound"]}))
"""


def program_output(tmp_path, name, source, *args):
    """The last line of stdout of `source` run as a program of its own, read as JSON:
    its process holds nothing of earlier tests."""
    script = tmp_path / f"{name}.py"
    script.write_text(source)
    result = subprocess.run([sys.executable, str(script), *args], capture_output=True,
                            text=True, timeout=300, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": PACKAGE_ROOT})
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_activation_bound_names_paddles_recompute_which_cuts_the_peak(tmp_path):
    kept = program_output(tmp_path, "conv_net", CONV_NET, "keep")
    cpu, [advice] = kept["cpu"], kept["advice"]
    assert advice["bytes"] == cpu["categories_at_peak"]["activation"] >= cpu["peak_bytes"] / 2
    assert advice["fix"].startswith(
        "Recompute activations in the backward pass instead of keeping them: activation "
        "checkpointing (paddle.distributed.fleet.utils.recompute) around the layers that "
        "keep the most: ConvNet.blocks.")
    assert "torch" not in advice["fix"]
    # The remedy, tried: each block recomputed in backward keeps its input alone.
    recomputed = program_output(tmp_path, "conv_net", CONV_NET, "recompute")["cpu"]
    assert recomputed["peak_bytes"] < cpu["peak_bytes"] / 2
    assert recomputed["categories_at_peak"]["activation"] < advice["bytes"] / 2


SLOW_DATA = """
import io, json, sys, time
import numpy as np, paddle, paddle_prof, paddle_prof.paddle

class Slow(paddle.io.Dataset):
    def __len__(self):
        return 384  # 48 batches: the first one's wait for the workers to start is a small part
    def __getitem__(self, i):
        time.sleep(0.006)  # decoding, say
        return np.full((512,), float(i), "float32")

paddle.seed(0)
model = paddle.nn.Sequential(*[paddle.nn.Linear(512, 512) for _ in range(4)])
loader = paddle.io.DataLoader(Slow(), batch_size=8, num_workers=int(sys.argv[1]))
with paddle_prof.paddle.profiler("CPU", stream=io.StringIO()) as prof:
    for x in loader:
        model(x).sum().backward()
        time.sleep(0.02)  # the rest of the step's work: 20 ms on any machine
        prof.step(num_samples=len(x))
summary = prof.report.to_dict()
print(json.dumps({"data": summary["phases_ms"]["data"],
                  "steps": sum(s["wall_ms"] for s in summary["steps"]),
                  "advice": [a for a in summary["advice"] if a["kind"] == "data_bound"]}))
"""


def test_data_bound_names_paddles_dataloader_workers_which_end_the_wait(tmp_path):
    waited = program_output(tmp_path, "slow_data", SLOW_DATA, "0")
    [advice] = waited["advice"]
    assert advice["ms"] == waited["data"] >= 0.3 * waited["steps"]
    assert "paddle.io.DataLoader(num_workers=N)" in advice["fix"]
    assert "pin_memory" not in advice["fix"]  # Paddle's DataLoader has none
    # The remedy, tried: eight workers load the next batches while the steps run, a
    # batch each 6 ms against a step of over 20 ms (one loader thread: 48 ms).
    loaded = program_output(tmp_path, "slow_data", SLOW_DATA, "8")
    assert not loaded["advice"], loaded
    assert loaded["data"] < waited["data"] / 2


def test_an_optimizer_of_parameter_groups_is_read_too():
    paddle.disable_static()
    net = Net()
    optimizer = paddle.optimizer.Adam(parameters=[
        {"params": net.fc1.parameters()},
        {"params": net.fc2.parameters(), "learning_rate": 0.1}])
    with paddle_prof.paddle.profiler("CPU", stream=io.StringIO()) as prof:
        net(paddle.randn([4, 784])).mean().backward()
        optimizer.step()
        optimizer.clear_grad()
    [cpu] = [p for p in prof.report.to_dict()["places"] if p["place"] == "CPU"]
    assert cpu["categories_end"]["parameter"] == 4 * (784 * 128 + 128 + 128 * 10 + 10)
