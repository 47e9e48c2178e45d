"""paddle_prof.torch's memory categories, exactly: parameters, gradients and optimizer
state by their storage, inputs, temporaries and activations by when they lived, on
whichever torch runs the suite (Debian's 1.13, or PyPI's 2.x)."""

import copy
import io
import json
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
paddle_prof = pytest.importorskip("paddle_prof")
import paddle_prof.torch  # noqa: E402

BATCH, IN, HIDDEN, OUT = 512, 64, 256, 10
CATEGORIES = {"parameter", "gradient", "optimizer_state", "input", "temporary", "activation",
              "other"}


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
                               torch.nn.Linear(HIDDEN, OUT))


def nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def state_bytes(optimizer):
    return nbytes(v for s in optimizer.state.values() for v in s.values()
                  if isinstance(v, torch.Tensor))


def state_blocks(holder):
    """The blocks of an optimizer's state tensors, or of a state dict's: bytes by address."""
    state = holder["state"] if isinstance(holder, dict) else holder.state
    return {v.data_ptr(): v.numel() * v.element_size() for s in state.values()
            for v in s.values() if isinstance(v, torch.Tensor) and v.numel() > 0}


def cpu(report):
    return next(p for p in report.to_dict()["places"] if p["place"] == "CPU")


@pytest.fixture(scope="module")
def adam_run():
    model = mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(BATCH, IN), torch.randint(0, OUT, (BATCH,))
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(3):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step(num_samples=BATCH)
    return model, optimizer, prof.report


def test_parameters_gradients_and_optimizer_state_are_exact(adam_run):
    model, optimizer, report = adam_run
    params = nbytes(model.parameters())
    end = cpu(report)["categories_end"]
    assert set(end) == CATEGORIES
    assert end["parameter"] == params
    assert end["gradient"] == nbytes(p.grad for p in model.parameters()) == params
    assert end["optimizer_state"] == state_bytes(optimizer)  # exp_avg, exp_avg_sq, step
    assert end["input"] == BATCH * IN * 4  # x, made before the window, handed to the model


def test_categories_add_up_to_the_live_bytes_at_the_peak_and_along_the_timeline(adam_run):
    _, _, report = adam_run
    place = cpu(report)
    assert sum(place["categories_at_peak"].values()) == place["peak_bytes"]
    assert sum(place["categories_end"].values()) == place["end_bytes"]
    line = report.to_dict()["timeline"]["CPU"]
    assert set(line["by_category"]) == CATEGORIES
    for i, total in enumerate(line["bytes"]):
        assert sum(series[i] for series in line["by_category"].values()) <= total
    assert max(line["bytes"]) == place["peak_bytes"]


def test_the_activations_at_the_peak_hold_what_backward_saved():
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # no state: backward peaks
    x = torch.randn(BATCH, IN)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        prof.step()
    at_peak = cpu(prof.report)["categories_at_peak"]
    # The ReLU's output, which the second Linear saves for its weight's gradient.
    assert at_peak["activation"] >= BATCH * HIDDEN * 4
    assert at_peak["parameter"] == nbytes(model.parameters())
    memory_line = next(line for line in prof.report.table(width=None).splitlines()
                       if line.startswith("Memory on CPU"))
    assert "; by kind: " in memory_line and " activation 512.00 KiB (" in memory_line


def test_module_activation_bytes_agree_with_the_category_totals():
    model = mlp()
    x = torch.randn(BATCH, IN)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        out = model(x)  # the forward alone
        prof.step()
    report = prof.report
    place = cpu(report)
    hidden, logits = BATCH * HIDDEN * 4, BATCH * OUT * 4
    # What each layer's call left alive when it returned: its output.
    leaves = {m.path: m.memory["CPU"]["activation_bytes"] for m in report.modules if m.depth == 1}
    assert leaves == {"Sequential.0": hidden, "Sequential.1": hidden, "Sequential.2": logits}
    # The peak is in the last Linear, before Sequential lets the first one's output go
    # (nothing saved it for backward): both hidden outputs, each charged to its layer.
    assert {m["module"]: m["bytes"] for m in place["activations_at_peak"]} == {
        "Sequential.0": hidden, "Sequential.1": hidden}
    assert place["categories_at_peak"]["activation"] == 2 * hidden
    # At the end, the ReLU's output (saved for backward) and the logits: what the model's
    # call left alive.
    root = next(m for m in report.modules if m.depth == 0)
    assert place["categories_end"]["activation"] == hidden + logits == out.numel() * 4 + hidden
    assert root.memory["CPU"]["activation_bytes"] == hidden + logits


def test_the_activations_at_a_training_peak_are_charged_to_their_modules():
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(BATCH, IN)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(2):
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
            prof.step()
    report = prof.report
    place = cpu(report)
    charged = {m["module"]: m["bytes"] for m in place["activations_at_peak"]}
    # Every activation was allocated in one of the three layers: all named, none twice.
    assert sum(charged.values()) == place["categories_at_peak"]["activation"] > 0
    held = {m.path: m.memory["CPU"]["activation_bytes"] for m in report.modules}
    for module, bytes_at_peak in charged.items():
        assert 0 < bytes_at_peak <= held[module]  # what the call left alive, at most


def test_a_data_loader_batch_is_input():
    data = torch.utils.data.TensorDataset(torch.randn(64, IN), torch.randint(0, OUT, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=32)
    model = mlp()
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        kept = []
        for x, y in loader:
            kept.append((x, y))  # alive at the end
            model(x).sum().backward()
            prof.step(num_samples=len(x))
    end = cpu(prof.report)["categories_end"]
    assert end["input"] >= 2 * (32 * IN * 4 + 32 * 8)  # both batches, features and labels


def test_parameters_made_inside_the_window_are_parameters():
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        model = mlp()
        model(torch.randn(4, IN))
        prof.step()
    assert cpu(prof.report)["categories_end"]["parameter"] == nbytes(model.parameters())


def test_zero_grad_to_none_frees_the_gradients_out_of_their_category():
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        model(torch.randn(8, IN)).sum().backward()
        optimizer.step()
        prof.step()
        optimizer.zero_grad(set_to_none=True)
    place = cpu(prof.report)
    assert place["categories_at_peak"]["gradient"] == nbytes(model.parameters())
    assert place["categories_end"]["gradient"] == 0


def test_a_model_and_optimizer_made_before_the_import_are_found_by_identity():
    # A fresh interpreter: this one imported paddle_prof.torch long ago.
    script = textwrap.dedent('''
        import io, json, torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                    torch.nn.Linear(256, 10))
        optimizer = torch.optim.Adam(model.parameters())
        x = torch.randn(32, 64)
        model(x).sum().backward()
        optimizer.step()                                   # the state exists
        freed = torch.ones(1000)
        import paddle_prof.torch
        with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
            del freed
            for _ in range(3):
                optimizer.zero_grad(set_to_none=False)     # the gradients stay
                model(x).sum().backward()
                optimizer.step()
                prof.step()
        place = next(p for p in prof.report.to_dict()["places"] if p["place"] == "CPU")
        state = [v for s in optimizer.state.values() for v in s.values()
                 if isinstance(v, torch.Tensor)]
        print(json.dumps({"place": place,
                          "params": sum(p.numel() * p.element_size()
                                        for p in model.parameters()),
                          "state": sum(v.numel() * v.element_size() for v in state)}))
    ''')
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    place, params, state = out["place"], out["params"], out["state"]
    for moment in ("categories_at_peak", "categories_end"):
        assert place[moment]["parameter"] == params
        assert place[moment]["gradient"] == params
        assert place[moment]["optimizer_state"] == state
    # Live before the window: the parameters, gradients, state, x and the freed tensor.
    assert place["start_bytes"] == 2 * params + state + 32 * 64 * 4 + 1000 * 4
    assert place["end_bytes"] == place["start_bytes"] - 1000 * 4
    assert sum(place["categories_end"].values()) == place["end_bytes"]
    assert sum(place["categories_at_peak"].values()) == place["peak_bytes"]


def test_optimizer_state_loaded_anew_is_told_and_the_old_state_let_go():
    model = mlp()
    optimizer = torch.optim.Adam(model.parameters())
    x = torch.randn(8, IN)

    def train_step():
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()

    train_step()
    saved = copy.deepcopy(optimizer.state_dict())
    before = state_blocks(optimizer) | state_blocks(saved)  # all held as the window opens
    replaced = sum(state_blocks(optimizer).values())
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        train_step()
        prof.step()
        optimizer.load_state_dict(saved)  # the saved tensors, or copies of them
        train_step()
        prof.step()
    place = cpu(prof.report)
    # The state told is the loaded one, and the replaced one is not kept alive: the window
    # ends with the bytes it began with, less the replaced state, plus any copies made.
    assert place["categories_end"]["optimizer_state"] == state_bytes(optimizer)
    assert place["end_bytes"] == sum(place["categories_end"].values())
    copies = sum(b for ptr, b in state_blocks(optimizer).items() if ptr not in before)
    assert place["end_bytes"] - place["start_bytes"] == copies - replaced


def test_a_window_of_plain_paddle_prof_has_no_categories():
    with paddle_prof.profiler("CPU", stream=io.StringIO()) as prof:
        with paddle_prof.record_event("fill"):
            kept = paddle_prof.empty((100,), "float32")
    assert "categories_at_peak" not in cpu(prof.report)
    del kept


def test_a_compiled_model_has_the_plain_models_parameters_gradients_and_state():
    if not hasattr(torch, "compile"):
        pytest.skip("torch.compile came with torch 2.0")

    def run(compiled):
        model = mlp()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        step_model = torch.compile(model, backend="eager") if compiled else model
        x = torch.randn(8, IN)
        with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
            for _ in range(2):
                optimizer.zero_grad()
                step_model(x).sum().backward()
                optimizer.step()
                prof.step()
        end = cpu(prof.report)["categories_end"]
        return {k: end[k] for k in ("parameter", "gradient", "optimizer_state")}

    plain = run(compiled=False)
    assert plain["parameter"] == plain["gradient"] > 0 and plain["optimizer_state"] > 0
    assert run(compiled=True) == plain


def test_a_reset_keeps_the_categories_and_what_was_told_before_it():
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for it in range(3):
            if it == 1:
                paddle_prof.reset_profiler()  # the warm-up step left out
            model(torch.randn(8, IN)).sum().backward()
            optimizer.step()
            prof.step()
    end = cpu(prof.report)["categories_end"]
    assert end["parameter"] == end["gradient"] == nbytes(model.parameters())
    assert end["optimizer_state"] == state_bytes(optimizer)  # the momentum buffers


def test_gradients_live_as_the_window_opens_are_gradients_though_zero_grad_frees_them():
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, IN)

    def step():
        optimizer.zero_grad(set_to_none=True)  # frees the last step's gradients first
        model(x).sum().backward()
        optimizer.step()

    step()  # a warm-up step: its gradients are live as the window opens
    with paddle_prof.torch.profiler("CPU", stream=io.StringIO()) as prof:
        for _ in range(2):
            step()
            prof.step()
    report = prof.report.to_dict()
    by_category = report["timeline"]["CPU"]["by_category"]
    at_start = {name: points[0] for name, points in by_category.items()}
    # (Other tests' tensors may be live too: this process runs them all.)
    assert at_start["gradient"] == nbytes(model.parameters()), at_start
    assert at_start["parameter"] >= nbytes(model.parameters()), at_start
