"""Ranks of torch.distributed (gloo, two processes on this machine): each rank's profile
names its rank, carries distributedInfo, and measures its clock against rank 0's; Holistic
Trace Analysis reads the ranks' traces and their merged trace."""

import collections
import json
import os
import re
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ddp_job.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_job(out_dir, slow_rank=None):
    env = os.environ.copy()
    env.pop("RANK", None)
    env.pop("WORLD_SIZE", None)
    if slow_rank is not None:
        env["SLOW_RANK"] = str(slow_rank)
    # Bounded: a rank that hangs fails the test instead of blocking the suite.
    proc = subprocess.run([sys.executable, JOB, str(out_dir), str(free_port())], env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return [json.load(open(out_dir / f"rank{r}.json.summary.json")) for r in (0, 1)]


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("ddp")
    return out_dir, run_job(out_dir, slow_rank=1)


def test_each_rank_names_itself_and_its_trace_carries_distributed_info(two_ranks):
    out_dir, summaries = two_ranks
    for rank, summary in enumerate(summaries):
        assert summary["process"]["rank"] == rank
        assert summary["process"]["world_size"] == 2
        assert summary["process"]["role"] == "main"
        assert len(summary["steps"]) == 5
        trace = json.load(open(out_dir / f"rank{rank}.json"))
        assert trace["distributedInfo"] == {"backend": "gloo", "rank": rank, "world_size": 2}
    assert summaries[0]["process"]["pid"] != summaries[1]["process"]["pid"]


def test_each_rank_names_the_users_module_inside_the_ddp_wrapper(two_ranks):
    _, summaries = two_ranks
    for summary in summaries:
        modules = {m["path"]: m for m in summary["modules"]}
        user = modules["DistributedDataParallel.module"]
        assert user["type"] == "Linear" and user["params"] == 16 * 4 + 4
        assert user["calls"] == 5 and user["backward_ms"] > 0
        assert modules["DistributedDataParallel"]["depth"] == 0
        # The user's Linear(16, 4), through the wrapper: its weight and bias; their
        # gradients, twice: in .grad and in the Reducer's bucket, rebuilt at the second
        # forward; plain SGD keeps no state. Nothing outlives the steps as activation.
        cpu = next(p for p in summary["places"] if p["place"] == "CPU")
        end, peak = cpu["categories_end"], cpu["categories_at_peak"]
        assert (end["parameter"], end["gradient"], end["optimizer_state"]) == (272, 544, 0)
        assert end["activation"] == 0
        assert (peak["parameter"], peak["gradient"]) == (272, 544)
        for step in summary["steps"]:
            assert step["phases_ms"]["forward"] > 0 and step["phases_ms"]["backward"] > 0


def ops_by_pid(analysis, rank):
    """{pid: Counter of event names} of one rank of an HTA TraceAnalysis."""
    names = analysis.t.symbol_table.get_sym_table()
    df = analysis.t.get_trace(rank)
    by_pid = collections.defaultdict(collections.Counter)
    for pid, name in zip(df["pid"], df["name"]):
        by_pid[int(pid)][names[name]] += 1
    return by_pid


def calls_by_name(summary):
    calls = collections.Counter()
    for row in summary["events"]:
        calls[row["name"]] += row["calls"]
    return calls


def test_holistic_trace_analysis_reads_each_rank_with_its_ops_and_steps(two_ranks, tmp_path,
                                                                      trace_analysis):
    TraceAnalysis = trace_analysis
    out_dir, summaries = two_ranks
    steps = {f"ProfilerStep#{i}": 1 for i in range(5)}  # Kineto's names, HTA's iterations
    # The ranks' own traces, one per rank as PyTorch's: HTA finds each rank in its file.
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for rank in (0, 1):
        (ranks / f"rank{rank}.json").write_bytes((out_dir / f"rank{rank}.json").read_bytes())
    analysis = TraceAnalysis(trace_dir=str(ranks), include_last_profiler_step=True)
    assert sorted(analysis.t.traces) == [0, 1]
    assert list(analysis.get_profiler_steps()) == [0, 1, 2, 3, 4]
    for rank, summary in enumerate(summaries):
        (pid, ops), = ops_by_pid(analysis, rank).items()
        assert pid == summary["process"]["pid"]
        assert {name: ops.pop(name) for name in steps} == steps
        assert ops == calls_by_name(summary)  # every call, exactly as the rank's rows count it
        df = analysis.t.get_trace(rank)
        slow = df[df["name"] == analysis.t.symbol_table.get_sym_id_map()["slow_op"]]
        assert (slow["dur"].sum() >= 5 * 50_000) == (rank == 1)  # microseconds
    # The merged trace is one file: HTA reads it as one trace, each rank a process of it.
    merged_dir = tmp_path / "merged"
    merged_dir.mkdir()
    inputs = [str(out_dir / f"rank{rank}.json.summary.json") for rank in (0, 1)]
    done = subprocess.run([sys.executable, "-m", "paddle_prof", "merge", *inputs, "--profile-path",
                           str(merged_dir / "merged.json")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    for extra in ("merged.json.summary.json", "merged.json.html"):
        (merged_dir / extra).unlink()
    merged = TraceAnalysis(trace_dir=str(merged_dir), include_last_profiler_step=True)
    by_pid = ops_by_pid(merged, 0)
    assert set(by_pid) == {s["process"]["pid"] for s in summaries}
    for summary in summaries:
        ops = by_pid[summary["process"]["pid"]]
        assert {name: ops.pop(name) for name in steps} == steps
        assert ops == calls_by_name(summary)


def test_the_clock_offset_to_rank_0_is_measured_and_small_on_one_host(two_ranks):
    _, summaries = two_ranks
    assert summaries[0]["clock"]["offset_ns"] == 0
    # One host, one CLOCK_REALTIME: the true offset is 0, so what is measured is the error.
    assert abs(summaries[1]["clock"]["offset_ns"]) < 1_000_000
    assert not any("clock offset" in w for s in summaries for w in s["warnings"])
    # The windows opened together: their starts are within the exchange of each other.
    starts = [s["clock"]["unix_ns"] + s["clock"]["offset_ns"] for s in summaries]
    assert abs(starts[0] - starts[1]) < 2_000_000_000


def test_a_rank_whose_peer_does_not_answer_goes_on_with_a_warning(tmp_path):
    script = tmp_path / "lonely.py"
    script.write_text(f"""
import os, sys, datetime
import torch.distributed as dist
import torch.multiprocessing as mp
import paddle_prof
from paddle_prof import distributed
distributed.TIMEOUT = datetime.timedelta(seconds=0.5)

def main(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    if rank == 1:  # rank 0 does not profile
        with paddle_prof.profiler("CPU", stream=open(os.devnull, "w")) as prof:
            pass
        print("WARN", [w for w in prof.report.warnings if "clock offset" in w])
        print("RANK", prof.report.to_dict()["process"]["rank"])
    dist.barrier()
    if rank == 0:  # profiling rank 0 alone costs it the foreground wait, no more
        import time
        began = time.monotonic()
        with paddle_prof.profiler("CPU", stream=open(os.devnull, "w")) as prof:
            pass
        print("ALONE", time.monotonic() - began < 2, prof.report.warnings)
    dist.barrier()
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(main, args=({free_port()},), nprocs=2, join=True)
""")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "RANK 1" in proc.stdout
    assert "rank 0 did not answer within 0.5 s" in proc.stdout
    assert "ALONE True []" in proc.stdout


def test_ranks_alike_have_no_straggler(two_ranks, tmp_path):
    import json
    import paddle_prof
    out_dir, _ = two_ranks
    # Rank 0's profile as both ranks: nobody is behind.
    summary = json.loads((out_dir / "rank0.json.summary.json").read_text())
    summary["process"]["rank"] = 1
    summary["process"]["pid"] += 1
    (tmp_path / "twin.summary.json").write_text(json.dumps(summary))
    merged = paddle_prof.merge([out_dir / "rank0.json.summary.json",
                                tmp_path / "twin.summary.json"])
    assert not [a for a in merged.advice if a.kind == "straggler"], merged.advice
    assert not [w for w in merged.warnings if "is a straggler in" in w], merged.warnings


def test_merge_names_the_slow_rank_its_event_and_its_steps(two_ranks):
    import paddle_prof
    out_dir, _ = two_ranks
    merged = paddle_prof.merge([out_dir / "rank0.json.summary.json",
                                out_dir / "rank1.json.summary.json"])
    slow = next(row for row in merged.events if row.name == "slow_op")
    assert slow.calls == 10  # 5 steps on each rank
    assert slow.spread["by"] == "rank"
    assert slow.spread["total_ms"]["argmax"] == 1
    assert slow.spread["total_ms"]["max"] >= 5 * 50
    stragglers = [w for w in merged.warnings if "is a straggler in" in w]
    assert any(w.startswith("rank 1 is a straggler in slow_op: ") for w in stragglers), stragglers
    # The last step's collective may end on gloo's thread just after the window closes,
    # and is then left out, as every call still open at the stop is.
    assert any(re.match(r"rank 1 is a straggler in [45] of 5 steps", w) for w in stragglers), \
        stragglers
    # Rank 0 waits for rank 1 in communication: that is not straggling.
    assert not any(w.startswith(("rank 0 is a straggler in gloo:", "rank 0 is a straggler in c10d",
                                 "rank 0 is a straggler in DistributedDataParallel"))
                   or re.match(r"rank 0 is a straggler in \d+ of 5 steps", w)
                   for w in stragglers), stragglers
    # The advice names the rank to look at, once, with what it lost.
    stragglers = [a for a in merged.advice if a.kind == "straggler"]
    assert [a.message.split(" is behind")[0] for a in stragglers] == ["rank 1"], merged.advice
    assert re.match(r"rank 1 is behind the others in [45] of 5 steps and in \d+ ops?, by ",
                    stragglers[0].message), stragglers[0].message
    assert stragglers[0].ms > 0 and stragglers[0].bytes is None
    assert stragglers[0].fix.startswith("Look at rank 1 first")
    assert [step.slowest for step in merged.steps][:4] == [1] * 4
    for step in merged.steps:
        assert set(step.wall_ms_by) == {"0", "1"}
        # Phases per rank; the step's own are its slowest rank's.
        assert set(step.phases_ms_by) == {"0", "1"}
        assert step.phases_ms == step.phases_ms_by[str(step.slowest)]
        assert step.wall_ms == max(step.wall_ms_by.values())
    user = next(m for m in merged.modules if m.path == "DistributedDataParallel.module")
    assert user.calls == 10 and user.type == "Linear"
    assert [p["process"]["rank"] for p in merged.to_dict()["merged_from"]] == [0, 1]
    assert [m.process["rank"] for m in merged.merged_from] == [0, 1]
    assert merged.clock.offset_ns == 0


def test_each_rank_captures_into_its_own_directory_and_names_its_rank(tmp_path):
    script = tmp_path / "captured.py"
    script.write_text(f"""
import os, sys
import torch.distributed as dist
import torch.multiprocessing as mp
import paddle_prof

def main(rank, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    with paddle_prof.profiler("CPU", stream=open(os.devnull, "w")):
        with paddle_prof.record_event("captured_op"):
            pass
        meta = open(os.path.join(out, f"cap{{rank}}", "pp_capture.meta")).read()
        with open(os.path.join(out, f"meta{{rank}}.txt"), "w") as said:  # the ranks print at once
            said.write(repr([line for line in meta.splitlines() if line.startswith("rank")]))
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(main, args=({free_port()}, sys.argv[1]), nprocs=2, join=True)
""")
    env = os.environ.copy()
    env["FLAGS_paddle_prof_capture_dir"] = str(tmp_path / "cap{rank}")
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (tmp_path / "meta0.txt").read_text() == "['rank 0 2']"
    assert (tmp_path / "meta1.txt").read_text() == "['rank 1 2']"


# A training script that knows nothing of paddle_prof, as torchrun starts it.
PLAIN_DDP = '''
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(8, 16)
for _ in range(4):
    loss = model(data).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
dist.destroy_process_group()
'''


def test_torchrun_with_run_gives_each_rank_a_complete_profile(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(PLAIN_DDP)
    env = os.environ.copy()
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    # The documented recipe; bounded, so that a hang fails instead of blocking the suite.
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
         # Not 0 (the default), which torch 1.13 cannot read on Python 3.11.
         "--redirects", "2", "--tee", "2", "--log_dir", str(tmp_path / "logs"),
         "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
         "-m", "paddle_prof", "run", "--profile-path", str(tmp_path / "rank{rank}.json"),
         "--", str(script)],
        env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-4000:]
    params = (16 * 32 + 32 + 32 * 4 + 4) * 4
    for rank in (0, 1):
        summary = json.load(open(tmp_path / f"rank{rank}.json.summary.json"))
        assert summary["process"]["rank"] == rank
        assert summary["process"]["world_size"] == 2
        assert len(summary["steps"]) == 4  # one per optimizer step
        paths = [m["path"] for m in summary["modules"]]
        assert "DistributedDataParallel.module.0" in paths, paths
        cpu = next(p for p in summary["places"] if p["place"] == "CPU")
        assert cpu["categories_end"]["parameter"] == params
        # .grad, and the Reducer's bucket of the same size.
        assert cpu["categories_end"]["gradient"] == 2 * params
        assert cpu["categories_end"]["activation"] == 0
