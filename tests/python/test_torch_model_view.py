"""paddle_prof.torch's model view: module events and Report.modules, step phases and
throughput, on whichever torch runs the suite (Debian's 1.13, or PyPI's 2.x)."""

import io
import os
import statistics
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")
paddle_prof = pytest.importorskip("paddle_prof")
import paddle_prof.torch  # noqa: E402

STEPS = 3
BATCH = 4


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 32)
        self.fc2 = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3)   # 1x10x10 -> 4x8x8
        self.block = Block()
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv(x).flatten(1)[:, :64]
        return self.head(self.block(x))


PARAMS = {  # elements, biases included
    "Net": 40 + 2080 + 528 + 170, "Net.conv": 4 * 9 + 4, "Net.block": 2080 + 528,
    "Net.block.fc1": 64 * 32 + 32, "Net.block.fc2": 32 * 16 + 16, "Net.head": 16 * 10 + 10,
}


def train(modules=True, steps=STEPS):
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(BATCH, 1, 10, 10), torch.randint(0, 10, (BATCH,))
    with paddle_prof.torch.profiler("CPU", "total", stream=io.StringIO(),
                                    modules=modules) as prof:
        for _ in range(steps):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step(num_samples=BATCH)
    return prof.report


@pytest.fixture(scope="module")
def report():
    return train()


def test_every_module_has_a_row_per_call_and_exact_parameters(report):
    modules = {m.path: m for m in report.modules}
    assert list(modules) == ["Net", "Net.conv", "Net.block", "Net.block.fc1",
                             "Net.block.fc2", "Net.head"]  # order of first call
    for path, m in modules.items():
        assert m.calls == STEPS, path
        assert m.params == PARAMS[path], path
        assert m.param_bytes == 4 * PARAMS[path], path
        assert m.depth == path.count("."), path
        assert m.forward_ms > 0 and m.backward_ms > 0, path
    assert modules["Net.block.fc1"].type == "Linear"
    assert modules["Net.conv"].type == "Conv2d"
    rows = {e.name: e for e in report.events}
    for path in PARAMS:
        assert rows["nn.Module: " + path].calls == STEPS
        assert rows["nn.Module: " + path + ".backward"].calls >= STEPS
    # A parent's forward holds its children's.
    assert modules["Net.block"].forward_ms >= (modules["Net.block.fc1"].forward_ms +
                                               modules["Net.block.fc2"].forward_ms)


def test_a_linear_keeps_at_least_its_output_alive_as_activation(report):
    fc1 = next(m for m in report.modules if m.path == "Net.block.fc1")
    output_bytes = BATCH * 32 * 4
    assert fc1.memory["CPU"]["activation_bytes"] >= output_bytes
    assert fc1.memory["CPU"]["peak_bytes"] >= fc1.memory["CPU"]["activation_bytes"]


def test_ops_nest_under_their_module_in_call_paths():
    torch.manual_seed(0)
    model = Net()
    model.block.fc1 = torch.nn.Linear(64, 4096)  # its output is the largest block held
    model.block.fc2 = torch.nn.Linear(4096, 16)
    x = torch.randn(BATCH, 1, 10, 10)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        out = model(x)  # the graph keeps fc1's output alive to the end
    del out
    paths = [" > ".join(h["path"]) for h in prof.report.to_dict()["places"][0]["at_peak"]]
    assert any(p.startswith("nn.Module: Net > nn.Module: Net.block > "
                            "nn.Module: Net.block.fc1 > aten::linear") for p in paths), paths


def test_modules_false_leaves_no_module_event():
    report = train(modules=False, steps=1)
    assert report.modules == []
    assert not [e.name for e in report.events if e.name.startswith("nn.Module: ")]
    assert report.to_dict()["modules"] == []


def test_a_module_that_raises_leaves_no_event_open():
    class Broken(torch.nn.Module):
        def forward(self, x):
            raise ValueError("broken")

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Broken()

        def forward(self, x):
            return self.inner(x)

    model, lin = Outer(), torch.nn.Linear(2, 2)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(2):
            with pytest.raises(ValueError):
                model(torch.ones(1))
            lin(torch.ones(2))  # a root again, not under the broken calls
    rows = {e.name: e.calls for e in prof.report.events}
    assert rows["nn.Module: Outer"] == 2 and rows["nn.Module: Outer.inner"] == 2
    assert rows["nn.Module: Linear"] == 2
    assert not prof.report.warnings


def test_the_module_table_is_a_tree(report):
    table = report.table(view="modules")
    lines = table.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Module "))
    for column in ("Type", "Calls", "Forward", "Backward", "Params", "Peak Mem.", "Activations"):
        assert column in lines[header]
    body = lines[header + 1:]
    assert [line.split()[0] for line in body] == ["Net", "conv", "block", "fc1", "fc2", "head"]
    indent = {line.split()[0]: len(line) - len(line.lstrip()) for line in body}
    assert indent["Net"] < indent["conv"] == indent["block"] == indent["head"] < indent["fc1"]
    assert "2,080" in next(line for line in body if line.split()[0] == "fc1")
    with pytest.raises(ValueError):
        report.table(view="layers")


class SlowData(torch.utils.data.Dataset):
    def __len__(self):
        return STEPS * BATCH

    def __getitem__(self, i):
        time.sleep(0.02)
        return torch.randn(1, 10, 10), i % 10


@pytest.fixture(scope="module")
def loader_report():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(SlowData(), batch_size=BATCH)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step(num_samples=len(x))
    return prof.report


def test_phases_add_up_to_each_steps_wall_time(loader_report):
    steps = loader_report.to_dict()["steps"]
    assert len(steps) == STEPS
    names = {"data", "forward", "backward", "optimizer", "other"}
    totals = dict.fromkeys(names, 0.0)
    for step in steps:
        phases = step["phases_ms"]
        assert set(phases) == names
        assert all(v >= 0 for v in phases.values())
        assert abs(sum(phases.values()) - step["wall_ms"]) < 1e-3  # 1 µs
        assert phases["data"] >= BATCH * 20  # the dataset sleeps 20 ms per item
        assert phases["forward"] > 0 and phases["backward"] > 0 and phases["optimizer"] > 0
        assert step["samples"] == BATCH
        for name in names:
            totals[name] += phases[name]
    for name in names:
        assert loader_report.phases_ms[name] == pytest.approx(totals[name])


def test_throughput_is_the_median_over_steps(loader_report):
    steps = loader_report.to_dict()["steps"]
    t = loader_report.throughput
    assert t.samples_per_s == pytest.approx(
        statistics.median(s["samples"] / (s["wall_ms"] / 1e3) for s in steps))
    assert t.reader_cost_ms == pytest.approx(statistics.median(s["phases_ms"]["data"] for s in steps))
    assert t.batch_cost_ms == pytest.approx(statistics.median(s["wall_ms"] for s in steps))
    header = loader_report.table().split("Memory on")[0]
    assert f"ips: {t.samples_per_s:,.1f} samples/s, reader {t.reader_cost_ms:.2f} ms, " \
           f"batch {t.batch_cost_ms:.2f} ms" in header


def test_the_phase_table_is_paddles_model_summary(loader_report):
    table = loader_report.table(view="phases")
    for row in ("Dataloader", "Forward", "Backward", "Optimization", "Other"):
        assert any(line.startswith(row + " ") for line in table.splitlines()), table
    ratios = [float(line.split()[-1].rstrip("%")) for line in table.splitlines()
              if line.split() and line.split()[0] in
              ("Dataloader", "Forward", "Backward", "Optimization", "Other")]
    assert sum(ratios) == pytest.approx(100, abs=0.05)


def test_steps_without_samples_have_no_samples_per_second():
    model = torch.nn.Linear(2, 2)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        model(torch.ones(2))
        paddle_prof.mark_step()
    assert prof.report.to_dict()["steps"][0]["samples"] is None
    assert prof.report.throughput.samples_per_s is None
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError):
            paddle_prof.mark_step(num_samples=bad)


@pytest.mark.skipif(not hasattr(torch, "compile"), reason="torch.compile is torch 2.x's")
def test_a_compiled_model_runs_under_the_profiler():
    torch.manual_seed(0)
    model = Net()
    compiled = torch.compile(model, backend="aot_eager")
    x = torch.randn(BATCH, 1, 10, 10)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(2):
            compiled(x).sum().backward()
            prof.step()
    paths = [m.path for m in prof.report.modules]
    assert any(p == "OptimizedModule" or p.startswith("Net") or ".block" in p for p in paths), paths
    assert torch.allclose(compiled(x), model(x))


def test_a_bridge_built_for_another_torch_names_both_versions():
    other = os.environ.get("PADDLE_PROF_OTHER_TORCH_BUILD")
    if not other:
        pytest.skip("no build for another torch given (PADDLE_PROF_OTHER_TORCH_BUILD)")
    env = dict(os.environ, PYTHONPATH=other)
    result = subprocess.run([sys.executable, "-c", "import paddle_prof.torch"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    built = open(os.path.join(other, "paddle_prof", "_torch_build.py")).read().split('"')[-2]
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("ImportError: paddle_prof.torch was built for torch "), message
    assert built in message and torch.__version__ in message, message


def test_a_path_keeps_one_index_in_the_bridge_over_windows():
    from paddle_prof import _torch_bridge
    first = _torch_bridge.register_module("Again", -1, "Linear", 6, 24)
    assert _torch_bridge.register_module("Again", -1, "Linear", 6, 24) == first
    for _ in range(2):  # each window names the same modules, and registers nothing new
        report = train(steps=1)
        assert [m.calls for m in report.modules] == [1] * len(PARAMS)
    assert _torch_bridge.register_module("Net.block.fc1", -1, "Linear", 2080, 8320) != first


def test_each_thread_names_calls_under_its_own_root():
    import threading
    a, b = torch.nn.Sequential(torch.nn.Linear(2, 2)), Block()
    go = threading.Barrier(2)

    def run(model, x):
        go.wait()
        for _ in range(50):
            model(x)

    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        threads = [threading.Thread(target=run, args=(a, torch.ones(2))),
                   threading.Thread(target=run, args=(b, torch.ones(64)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    calls = {m.path: m.calls for m in prof.report.modules}
    assert calls == {"Sequential": 50, "Sequential.0": 50, "Block": 50, "Block.fc1": 50,
                     "Block.fc2": 50}


def test_a_module_that_cannot_be_named_runs_unrecorded(monkeypatch):
    class Odd(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.box = torch.nn.ModuleDict({"lin": torch.nn.Linear(2, 2)})

        def named_modules(self, *args, **kwargs):
            if kwargs == {"remove_duplicate": False}:  # as naming a grandchild walks them
                raise RuntimeError("no walking here")
            return super().named_modules(*args, **kwargs)

        def forward(self, x):
            return self.box["lin"](x)  # held by a child: found by a walk

    model = Odd()
    seen = []  # reported, not raised into the program
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(str(u.exc_value)))
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(2):
            assert model(torch.ones(2)).shape == (2,)
    assert seen == ["no walking here"]  # once in the window, not at every call
    assert {m.path: m.calls for m in prof.report.modules} == {"Odd": 2}
    rows = {e.name: e.calls for e in prof.report.events}
    assert rows["aten::linear"] == 2  # the child's ops, under the root


def test_a_module_made_where_a_dead_one_was_gets_its_own_name():
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(20):  # each new model may take the address of the one before
            model = Block() if _ % 2 else torch.nn.Sequential(torch.nn.Linear(64, 16))
            model(torch.ones(64))
            del model
    calls = {m.path: m.calls for m in prof.report.modules}
    assert calls == {"Sequential": 10, "Sequential.0": 10, "Block": 10, "Block.fc1": 10,
                     "Block.fc2": 10}


def test_a_shared_module_is_named_by_the_module_that_calls_it():
    class Shared(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = torch.nn.Linear(4, 4)
            self.l2 = self.l1  # one module, held under two names
            self.seq = torch.nn.Sequential(self.l1, torch.nn.ReLU())

        def forward(self, x):
            return self.seq(self.l2(self.l1(x)))

    model = Shared()
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(2):
            model(torch.ones(4))
    calls = {m.path: m.calls for m in prof.report.modules}
    assert calls == {"Shared": 2, "Shared.{l1,l2}": 4, "Shared.seq": 2, "Shared.seq.0": 2,
                     "Shared.seq.1": 2}, calls
    seq = next(m for m in prof.report.modules if m.path == "Shared.seq")
    assert seq.params == 4 * 4 + 4


def test_a_scripted_submodule_has_a_backward_for_every_backward_pass():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(4, 4),
                                                          torch.nn.ReLU()))
            self.b = torch.nn.Linear(4, 1)

        def forward(self, x):
            return self.b(self.a(x))

    model, x = Net(), torch.randn(2, 4, requires_grad=True)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(3):  # profiled, then run as one differentiable graph
            model(x).sum().backward()
    rows = {e.name: e.calls for e in prof.report.events}
    for path in ("Net", "Net.a", "Net.b"):
        assert rows[f"nn.Module: {path}"] == 3, rows
        assert rows[f"nn.Module: {path}.backward"] == 3, rows
