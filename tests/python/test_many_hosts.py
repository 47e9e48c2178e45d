"""Ranks on separate hosts: two network hosts made on this machine, each rank of a gloo
job in its own network, UTS and pid namespaces (its own address on a veth pair, its own
host name, and pid 1 in both). The merge keeps the ranks apart, by rank, or by host and
pid where the summaries have no rank; it names the straggler in time and the rank whose
peak is 100 MiB above the other's."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import paddle_prof

torch = pytest.importorskip("torch")

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "host_rank_job.py")
MIB = 1 << 20


def run(*command, timeout=30):
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def can_make_namespaces():
    """Why this machine cannot make network hosts, or None."""
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (iproute2, util-linux)"
    return None


class Hosts:
    """Two network namespaces joined by a veth pair: 10.77.<n>.1 and 10.77.<n>.2."""

    def __init__(self):
        tag = str(os.getpid() % 100000)
        self.names = [f"pp{tag}a", f"pp{tag}b"]
        self.addresses = [f"10.77.{os.getpid() % 250}.{i + 1}" for i in (0, 1)]
        self.made = []

    def make(self):
        for name in self.names:
            self._ip("netns", "add", name)
            self.made.append(name)
        self._ip("link", "add", self.names[0], "type", "veth", "peer", "name", self.names[1])
        for name, address in zip(self.names, self.addresses):
            self._ip("link", "set", name, "netns", name)
            self._ip("-n", name, "addr", "add", f"{address}/24", "dev", name)
            self._ip("-n", name, "link", "set", name, "up")
            self._ip("-n", name, "link", "set", "lo", "up")

    def remove(self):
        for name in self.made:  # the veth pair goes with its namespaces
            run("ip", "netns", "delete", name)

    def command(self, i, host, *argv):
        """`argv` run on host i: in its network namespace, with its own host name (UTS)
        and as pid 1 of a pid namespace of its own."""
        script = f'hostname {host} && exec "$@"'
        return ["ip", "netns", "exec", self.names[i], "unshare", "--uts", "--pid", "--fork",
                "sh", "-c", script, "sh", *argv]

    @staticmethod
    def _ip(*args):
        done = run("ip", *args)
        if done.returncode != 0:
            raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def made_hosts():
    """Two network hosts made (the caller removes them), or the test skipped, saying why."""
    why = can_make_namespaces()
    if why:
        pytest.skip(f"two network hosts cannot be made here: {why}")
    hosts = Hosts()
    try:
        hosts.make()
    except RuntimeError as e:
        hosts.remove()
        pytest.skip(f"two network hosts cannot be made here: {e}")
    return hosts


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory):
    hosts = made_hosts()
    out_dir = tmp_path_factory.mktemp("hosts")
    env = os.environ.copy()
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    try:
        ranks = []
        for rank in (0, 1):
            # Gloo binds the interface of the host's own address: its name has no address
            # to resolve to.
            env_rank = dict(env, GLOO_SOCKET_IFNAME=hosts.names[rank])
            ranks.append(subprocess.Popen(
                hosts.command(rank, f"node{rank + 1}", sys.executable, JOB, str(rank),
                              str(out_dir), hosts.addresses[0], "29517"),
                env=env_rank, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        outputs = []
        for proc in ranks:
            try:  # bounded: a rank that hangs fails the test instead of blocking the suite
                outputs.append(proc.communicate(timeout=240))
            except subprocess.TimeoutExpired:
                for p in ranks:
                    p.kill()
                pytest.fail("a rank of the two-host job hung for 240 s")
        for proc, (_, err) in zip(ranks, outputs):
            assert proc.returncode == 0, err[-4000:]
    finally:
        hosts.remove()
    return out_dir


def summary(path):
    with open(path) as f:
        return json.load(f)


def test_each_rank_is_pid_1_on_its_own_host_with_its_clock_aligned(two_hosts):
    for rank in (0, 1):
        s = summary(two_hosts / f"rank{rank}.json.summary.json")
        assert s["process"]["pid"] == 1
        assert s["process"]["host"] == f"node{rank + 1}"
        assert s["process"]["rank"] == rank
        # One machine's clock under both: the offset measured over the process group is
        # the exchange's error, well under a millisecond.
        assert abs(s["clock"]["offset_ns"]) < 1_000_000
        assert not any("offset" in w for w in s["warnings"]), s["warnings"]


def test_the_merge_keeps_the_ranks_apart_and_names_both_stragglers(two_hosts):
    paths = [two_hosts / f"rank{rank}.json" for rank in (0, 1)]
    merged = paddle_prof.merge(paths).to_dict()
    assert sorted(merged["timeline"]) == ["CPU (rank 0)", "CPU (rank 1)"]
    assert [(p["place"], p["input"], p["process"]) for p in merged["places"]] == [
        ("CPU", "rank 0", 1), ("CPU", "rank 1", 1)]
    assert [(m["label"], m["process"]["host"]) for m in merged["merged_from"]] == [
        ("rank 0", "node1"), ("rank 1", "node2")]
    peaks = merged["peaks_by"]["CPU"]
    # Rank 1 holds 100 MiB more; the rest of each rank's peak differs by a few bytes.
    assert abs(peaks["1"] - peaks["0"] - 100 * MIB) < 64 << 10, peaks
    warnings = merged["warnings"]
    assert any(w.startswith("rank 1 is a straggler in slow_op: ") for w in warnings), warnings
    [memory] = [w for w in warnings if "memory straggler" in w]
    assert memory == (f"rank 1 is a memory straggler on CPU: peak {peaks['1'] / MIB:,.1f} MiB "
                      f"against a median of {peaks['0'] / MIB:,.1f} MiB over 2 ranks")
    for step in merged["steps"]:
        assert sorted(step["wall_ms_by"]) == ["0", "1"]


def test_the_merged_trace_has_a_process_per_rank_though_both_are_pid_1(two_hosts, tmp_path):
    out = tmp_path / "merged.json"
    done = subprocess.run([sys.executable, "-m", "paddle_prof", "merge",
                           str(two_hosts / "rank0.json"), str(two_hosts / "rank1.json"),
                           "--profile-path", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = summary(out)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(names.values()) == ["rank 0", "rank 1"]
    slow = {names[e["pid"]] for e in events if e.get("name") == "slow_op"}
    assert slow == {"rank 0", "rank 1"}


def without_ranks(two_hosts, tmp_path, hosts=("node1", "node2")):
    """Copies of the ranks' summaries and traces with no rank (as a job without
    torch.distributed writes them), on `hosts`."""
    paths = []
    for rank, host in enumerate(hosts):
        s = summary(two_hosts / f"rank{rank}.json.summary.json")
        s["process"].update(rank=None, world_size=None, host=host)
        path = tmp_path / f"copy{rank}.json"
        shutil.copy(two_hosts / f"rank{rank}.json", path)
        (tmp_path / f"copy{rank}.json.summary.json").write_text(json.dumps(s))
        paths.append(path)
    return paths


def test_without_ranks_the_inputs_go_by_host_and_pid(two_hosts, tmp_path):
    merged = paddle_prof.merge(without_ranks(two_hosts, tmp_path)).to_dict()
    assert sorted(merged["timeline"]) == ["CPU (node1 pid 1)", "CPU (node2 pid 1)"]
    assert [m["key"] for m in merged["merged_from"]] == ["node1 pid 1", "node2 pid 1"]
    assert merged["events"][0]["spread"]["by"] == "process"
    assert not any("same process" in w for w in merged["warnings"]), merged["warnings"]
    assert any(w.startswith("node2 pid 1 is a memory straggler on CPU: ")
               for w in merged["warnings"]), merged["warnings"]
    for step in merged["steps"]:
        assert sorted(step["wall_ms_by"]) == ["node1 pid 1", "node2 pid 1"]


def test_two_summaries_of_one_host_and_pid_and_no_rank_stay_apart_with_a_warning(
        two_hosts, tmp_path):
    paths = without_ranks(two_hosts, tmp_path, hosts=("node1", "node1"))
    merged = paddle_prof.merge(paths).to_dict()
    assert sorted(merged["timeline"]) == ["CPU (node1 pid 1 (input 2))", "CPU (node1 pid 1)"]
    assert (f"{paths[0]}.summary.json and {paths[1]}.summary.json claim the same process "
            f"(node1 pid 1) and no rank: kept apart as node1 pid 1 and node1 pid 1 (input 2); "
            f"merge one profile per process, or give each rank its RANK") in merged["warnings"]
    rows = {row["name"]: row for row in merged["events"]}
    both = [{row["name"]: row for row in summary(f"{p}.summary.json")["events"]} for p in paths]
    assert rows["slow_op"]["calls"] == sum(b["slow_op"]["calls"] for b in both)
