"""Profiling a running process from outside: listen (the API, the environment, run
--listen), ps, trigger; with real processes, each bounded by a timeout."""

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest

import paddle_prof
from paddle_prof import listen_protocol
from paddle_prof.listener import FLIGHT_RECORDER_STEPS as TOP_STEPS

HERE = os.path.dirname(os.path.abspath(__file__))

# Two linears per step; marks its steps when MARK is set, else only the optimizer steps.
TORCH_LOOP = textwrap.dedent("""
    import os, sys, time
    import paddle_prof
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 16)
    print("ready", os.getpid(), flush=True)
    for step in range(int(sys.argv[1])):
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if os.environ.get("MARK"):
            paddle_prof.mark_step()
        time.sleep(0.005)
""")

PLAIN_LOOP = textwrap.dedent("""
    import os, sys, time
    import paddle_prof
    if os.environ.get("LISTEN_CALL"):
        paddle_prof.listen(job="job-7")
    print("ready", os.getpid(), flush=True)
    for step in range(int(sys.argv[1])):
        with paddle_prof.record_event("work"):
            x = paddle_prof.empty((1000,), dtype="float32")
        paddle_prof.mark_step()
        time.sleep(0.005)
""")


@pytest.fixture
def sockets(monkeypatch):
    """A socket directory of the test's own (short: a Unix socket's path is at most 107
    bytes)."""
    parent = tempfile.mkdtemp(prefix="pp")
    directory = os.path.join(parent, "s")
    monkeypatch.setenv("PADDLE_PROF_LISTEN_DIR", directory)
    yield directory
    shutil.rmtree(parent, ignore_errors=True)


class Listening:
    """A process started with `argv` that prints 'ready <pid>' once it listens."""

    def __init__(self, tmp_path, source, steps, env=None, run_listen=False):
        script = self.script = tmp_path / f"loop{id(self)}.py"
        script.write_text(source)
        command = [sys.executable, str(script), str(steps)]
        if run_listen:
            command = [sys.executable, "-m", "paddle_prof", "run", "--listen", str(script),
                       str(steps)]
        self.proc = subprocess.Popen(command, env=dict(os.environ, **(env or {})),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("ready"), line + self.proc.stderr.read()
        self.pid = int(line.split()[1])

    def finish(self, timeout=60):
        out, err = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, err[-3000:]
        return out, err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def started(tmp_path):
    processes = []

    def start(*args, **kwargs):
        processes.append(Listening(tmp_path, *args, **kwargs))
        return processes[-1]

    yield start
    for p in processes:
        p.kill()


def cli(*args, timeout=120, env=None):
    return subprocess.run([sys.executable, "-m", "paddle_prof", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def wait_for_window(pid, state, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = cli("ps")
        row = [line for line in done.stdout.splitlines() if line.split()[:1] == [str(pid)]]
        if row and state in row[0]:
            return row[0]
        time.sleep(0.1)
    pytest.fail(f"pid {pid} never showed a window {state!r}: {done.stdout}")


def ask(path, payload, timeout=10):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(payload)
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def summary(path):
    with open(path) as f:
        return json.load(f)


def test_ps_lists_a_plain_process_listening_by_the_api_and_trigger_records_its_steps(
        sockets, started, tmp_path):
    proc = started(PLAIN_LOOP, 4000, env={"LISTEN_CALL": "1"})
    time.sleep(0.3)
    listed = cli("ps")
    assert listed.returncode == 0, listed.stderr
    [row] = [line for line in listed.stdout.splitlines() if line.startswith(str(proc.pid))]
    fields = row.split()
    assert fields[2:4] == ["-", "job-7"] and int(fields[4]) > 0 and fields[5] == "none", row
    assert row.endswith(f"{proc.script} 4000"), row
    out = tmp_path / "out"
    done = cli("trigger", "--pid", str(proc.pid), "--steps", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "Profiling Report" in done.stdout and "Steps: 3" in done.stdout, done.stdout
    name = f"{socket.gethostname()}-{proc.pid}"
    s = summary(out / f"{name}.summary.json")
    assert len(s["steps"]) == 3
    [work] = [e for e in s["events"] if e["name"] == "work"]
    assert work["calls"] == 3  # one per step, the window from one mark to the third after
    assert work["memory"]["CPU"]["alloc_bytes"] == 3 * 4000
    assert os.path.exists(out / name)  # the trace
    assert not os.path.exists(out / f"{name}.capture")  # stopped normally: no capture left
    merged = summary(out / "merged.summary.json")
    assert [e["calls"] for e in merged["events"] if e["name"] == "work"] == [3]
    assert os.path.exists(out / "merged.html")
    # The program is unchanged: it runs to its end, and listens no more.
    proc.finish()
    assert cli("ps").stdout.splitlines()[1:] == []


def test_the_socket_is_the_users_alone(sockets, started):
    proc = started(PLAIN_LOOP, 4000, env={"PADDLE_PROF_LISTEN": "1"})
    assert stat.S_IMODE(os.stat(sockets).st_mode) == 0o700
    [name] = os.listdir(sockets)
    assert name == f"{socket.gethostname()}-{proc.pid}.sock"
    assert stat.S_IMODE(os.stat(os.path.join(sockets, name)).st_mode) == 0o600


def test_a_directory_open_to_others_is_refused(sockets, tmp_path):
    os.makedirs(sockets, mode=0o755)
    os.chmod(sockets, 0o755)
    done = subprocess.run([sys.executable, "-c", "import paddle_prof; paddle_prof.listen()"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"{sockets} is open to other users (mode 755): it must be 0700" in done.stderr
    # Through the environment the program runs on, with a warning.
    done = subprocess.run([sys.executable, "-c", "import paddle_prof; print('ran')"],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PADDLE_PROF_LISTEN="1"))
    assert done.returncode == 0 and done.stdout == "ran\n"
    assert "it must be 0700" in done.stderr


def test_listen_takes_a_job_name_or_none():
    with pytest.raises(TypeError, match="job must be a str or None; got 3"):
        paddle_prof.listen(job=3)


def test_optimizer_steps_that_cannot_be_watched_are_warned_of():
    from paddle_prof import step_boundaries

    def failing():
        raise AttributeError("this build has no Optimizer.step")

    with pytest.warns(RuntimeWarning, match=r"cannot watch torch's optimizer steps "
                                            r"\(AttributeError.*mark_step\(\) only"):
        step_boundaries._warning_on_failure("torch", failing)()


def test_a_jobs_watcher_leaves_the_store_before_the_interpreter_exits():
    from paddle_prof import job_requests

    calls = []

    class SlowStore:  # each call takes a while, as a round trip to another host
        def add(self, key, value):
            calls.append(key)
            time.sleep(0.2)
            return 0

    watcher = threading.Thread(target=job_requests.watch,
                               args=(SlowStore(), 0, lambda request: {}), daemon=True)
    watcher.start()
    deadline = time.monotonic() + 10
    while len(calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        job_requests._stop_watchers()  # what the interpreter's exit runs
        assert not watcher.is_alive()
        made = len(calls)
        time.sleep(0.5)
        assert made >= 2 and len(calls) == made
    finally:
        job_requests._exiting.clear()


@pytest.mark.skipif(os.geteuid() != 0, reason="running as another user needs root")
def test_another_user_is_refused(sockets, started):
    proc = started(PLAIN_LOOP, 4000, env={"PADDLE_PROF_LISTEN": "1"})
    nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    # The directory keeps them out: they see no process and can trigger none.
    done = subprocess.run(nobody + [sys.executable, "-m", "paddle_prof", "trigger", "--pid",
                                    str(proc.pid)], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", "")))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"no process of this user listens as pid {proc.pid}" in done.stderr
    # Past the directory (opened up here), the listener checks who connects.
    [name] = os.listdir(sockets)
    path = os.path.join(sockets, name)
    for opened in (os.path.dirname(sockets), sockets):
        os.chmod(opened, 0o755)
    os.chmod(path, 0o777)
    code = ("import json, socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]);"
            "s.sendall(b'{\"request\": \"status\"}\\n'); print(s.recv(4096).decode())")
    done = subprocess.run(nobody + [sys.executable, "-c", code, path], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer == {"ok": False, "error": f"refused: uid 65534 is not this process's user "
                                            f"(uid {os.getuid()})"}
    os.chmod(sockets, 0o700)
    proc.finish()


def test_garbage_gets_an_error_and_the_program_runs_on(sockets, started):
    proc = started(PLAIN_LOOP, 600, env={"PADDLE_PROF_LISTEN": "1"})
    [name] = os.listdir(sockets)
    path = os.path.join(sockets, name)
    answers = [ask(path, payload) for payload in (
        b"\xff\xfe\x00garbage\n", b"[1, 2]\n", b'{"request": "rm -rf"}\n',
        b'{"request": "trigger", "steps": 0, "out": "/tmp/x"}\n',
        b'{"request": "trigger", "steps": 2, "out": "relative"}\n',
        b'{"request": "trigger", "steps": true, "out": "/tmp/x"}\n',
        b'{"request": "trigger", "wait": NaN, "out": "/tmp/x"}\n',
        b"[" * 60000 + b"\n", b"x" * (200 << 10) + b"\n")]
    assert all(a["ok"] is False for a in answers), answers
    errors = [a["error"] for a in answers]
    assert errors[0] == "a request is UTF-8"
    assert errors[1] == "a request is a JSON object"
    assert errors[2].startswith("'request' must be one of status, trigger, top, view")
    assert errors[3] == "'steps' must be 1 to 1000000; got 0"
    assert errors[4] == "'out' must be an absolute path; got 'relative'"
    assert errors[5] == "'steps' must be an integer; got True"
    assert errors[6].startswith("a request is one JSON object on one line: NaN is not JSON")
    assert errors[7] == "a request nests too deeply"
    assert errors[8] == f"a line is at most {listen_protocol.MAX_LINE} bytes"
    # A peer that connects and says nothing, or leaves at once, changes nothing either.
    for _ in range(3):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
    assert ask(path, b'{"request": "status"}\n')["pid"] == proc.pid
    proc.finish()


@pytest.mark.torch
def test_a_torch_loop_listening_through_the_environment_is_profiled_at_its_marks(
        sockets, started, tmp_path):
    proc = started(TORCH_LOOP, 3000, env={"PADDLE_PROF_LISTEN": "1", "MARK": "1"})
    out = tmp_path / "out"
    done = cli("trigger", "--pid", str(proc.pid), "--steps", "4", "--out", str(out),
               "--record-shapes", "--modules")
    assert done.returncode == 0, done.stderr
    s = summary(out / f"{socket.gethostname()}-{proc.pid}.summary.json")
    assert len(s["steps"]) == 4
    calls = {}
    for e in s["events"]:  # a row per input shapes
        calls[e["name"]] = calls.get(e["name"], 0) + e["calls"]
    assert calls["aten::linear"] == 8, calls  # two per step
    assert calls["nn.Module: Sequential.0"] == 4, calls
    assert any(e["tag"] for e in s["events"] if e["name"] == "aten::linear")  # shapes
    kinds = s["places"][0]
    assert kinds["peak_bytes"] > 0
    proc.kill()


@pytest.mark.torch
def test_a_script_under_run_listen_is_profiled_at_its_optimizer_steps(
        sockets, started, tmp_path):
    proc = started(TORCH_LOOP, 3000, run_listen=True)
    listed = cli("ps").stdout
    assert f"{proc.pid} " in listed and " none " in listed, listed
    out = tmp_path / "out"
    done = cli("trigger", "--all", "--steps", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    s = summary(out / f"{socket.gethostname()}-{proc.pid}.summary.json")
    assert len(s["steps"]) == 3  # optimizer steps: the program marks none
    calls = {e["name"]: e["calls"] for e in s["events"]}
    assert calls["aten::linear"] == 6, calls
    assert "nn.Module: Sequential" not in calls  # modules only when asked for
    proc.kill()


def test_a_trigger_while_the_program_profiles_itself_is_answered_busy(
        sockets, started, tmp_path):
    source = PLAIN_LOOP.replace("for step in", "prof = paddle_prof.profiler('CPU', stream=open("
                                "os.devnull, 'w'))\nprof.__enter__()\nfor step in")
    proc = started(source, 400, env={"PADDLE_PROF_LISTEN": "1"})
    done = cli("trigger", "--pid", str(proc.pid), "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "busy: a window is open (program's)" in done.stderr
    assert cli("ps").stdout.split("\n")[1].split()[5] == "program's"
    proc.kill()


def test_a_process_that_dies_mid_window_leaves_its_capture_and_is_named(
        sockets, started, tmp_path):
    proc = started(PLAIN_LOOP, 100000, env={"PADDLE_PROF_LISTEN": "1"})
    out = tmp_path / "out"
    trigger = subprocess.Popen([sys.executable, "-m", "paddle_prof", "trigger", "--pid",
                                str(proc.pid), "--steps", "100000", "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_window(proc.pid, "trigger (open)")
    time.sleep(0.3)
    proc.proc.send_signal(signal.SIGKILL)
    _, err = trigger.communicate(timeout=60)
    assert trigger.returncode == 1
    capture = out / f"{socket.gethostname()}-{proc.pid}.capture"
    assert (f"pid {proc.pid} on {socket.gethostname()}: ended before its window was written; "
            f"what it recorded is in {capture}") in err
    recovered = paddle_prof.recover(capture)
    assert [e.calls > 0 for e in recovered.events if e.name == "work"] == [True]


def test_trigger_names_what_it_cannot_reach(sockets, tmp_path):
    done = cli("trigger", "--pid", "999999999", "--out", str(tmp_path))
    assert done.returncode == 2
    assert "no process of this user listens as pid 999999999" in done.stderr
    done = cli("trigger", "--all", "--steps", "0")
    assert done.returncode == 2 and "must be at least 1" in done.stderr


class Terminal:
    """A tmux session of its own running `command`, 200 columns by 40 rows: wide enough for
    a place's every memory kind, live and at the peak, on its one line (the view cuts
    lines at the terminal's width, and a transient `other` may come first)."""

    def __init__(self, command):
        self.name = f"pp{os.getpid()}x{id(self) % 10000}"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "200", "-y", "40",
                        command], check=True, timeout=30)

    def screen(self):
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name],
                              capture_output=True, text=True, timeout=30).stdout

    def wait_for(self, *texts, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(t in screen for t in texts):
                return screen
            time.sleep(0.2)
        pytest.fail(f"the terminal never showed {texts}: {screen}")

    def keys(self, *keys):
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True, timeout=30)

    def pid(self):
        return int(subprocess.run(["tmux", "display-message", "-p", "-t", self.name,
                                   "#{pane_pid}"], capture_output=True, text=True,
                                  timeout=30).stdout)

    def close(self):
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True,
                       timeout=30)


@pytest.fixture
def terminals():
    made = []

    def make(command):
        made.append(Terminal(command))
        return made[-1]

    yield make
    for t in made:
        t.close()


@pytest.mark.torch
def test_top_shows_the_last_steps_live_and_its_window_closes_with_it(
        sockets, started, terminals):
    proc = started(TORCH_LOOP, 6000, run_listen=True)
    command = (f"env PADDLE_PROF_LISTEN_DIR={sockets} PYTHONPATH={os.environ['PYTHONPATH']} "
               f"{sys.executable} -m paddle_prof top {proc.pid}; sleep 30")
    view = terminals(command)
    screen = view.wait_for("TOP OPS BY SELF TIME", "aten::addmm", "TOP OPS BY PEAK MEMORY",
                           f"{TOP_STEPS} steps kept")
    assert f"paddle_prof top: pid {proc.pid} on {socket.gethostname()}" in screen
    cpu = [line for line in screen.splitlines() if line.startswith("CPU ")]
    assert cpu and "parameter" in cpu[0] and "gradient" in cpu[0], screen
    # Redrawn each second: the step count goes on.
    def steps_so_far(text):
        return int(text.split("steps so far ")[1].split()[0])
    time.sleep(1.5)
    assert steps_so_far(view.screen()) > steps_so_far(screen)
    wait_for_window(proc.pid, "top (open)")
    view.keys("q")
    wait_for_window(proc.pid, "none")
    # A view killed with SIGKILL closes its window too.
    killed = terminals(command.replace("; sleep 30", ""))
    killed.wait_for("TOP OPS BY SELF TIME")
    wait_for_window(proc.pid, "top (open)")
    os.kill(killed.pid(), signal.SIGKILL)
    wait_for_window(proc.pid, "none")
    proc.kill()


JOB = os.path.join(HERE, "listen_job.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Job:
    """The two ranks of listen_job.py, each started by `command(rank, argv)`."""

    def __init__(self, tmp_path, command, master, env):
        self.stop = tmp_path / "stop"
        port = str(free_port())
        self.ranks = [subprocess.Popen(command(rank, [sys.executable, JOB, str(rank), master,
                                                       port, str(self.stop)]),
                                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True) for rank in (0, 1)]
        for proc in self.ranks:
            line = proc.stdout.readline()
            assert line.startswith("ready"), line + proc.stderr.read()

    def finish(self):
        self.stop.write_text("")
        for proc in self.ranks:
            try:  # bounded: a rank that hangs fails the test instead of blocking the suite
                _, err = proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                self.kill()
                pytest.fail("a rank of the job hung for 120 s")
            assert proc.returncode == 0, err[-3000:]

    def kill(self):
        for proc in self.ranks:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def trigger_job(tmp_path, job, prefix=()):
    out = tmp_path / "out"
    started = time.monotonic()
    done = subprocess.run([*prefix, sys.executable, "-m", "paddle_prof", "trigger", "--job", job,
                           "--steps", "5", "--out", str(out)], capture_output=True, text=True,
                          timeout=180)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Merged from 2 profiles" in done.stdout and "Steps: 5" in done.stdout, done.stdout
    print(f"trigger --job, 2 ranks x 5 steps: {seconds:.2f} s to the merged report")
    for rank in (0, 1):
        s = summary(out / f"rank{rank}.summary.json")
        assert s["process"]["rank"] == rank
        assert len(s["steps"]) == 5
        assert [e["calls"] for e in s["events"] if e["name"] == "slow_op"] == [5]
        assert os.path.getsize(out / f"rank{rank}") > 0  # the trace
    merged = summary(out / "merged.summary.json")
    assert [m["label"] for m in merged["merged_from"]] == ["rank 0", "rank 1"]
    return out


@pytest.mark.torch
def test_trigger_by_job_reaches_every_rank_through_the_jobs_store(sockets, tmp_path):
    env = dict(os.environ, PADDLE_PROF_LISTEN="1", TORCHELASTIC_RUN_ID="job-42")
    for name in ("RANK", "WORLD_SIZE"):
        env.pop(name, None)
    job = Job(tmp_path, lambda rank, argv: argv, "127.0.0.1", env)
    try:
        listed = cli("ps").stdout
        assert sorted(line.split()[2] for line in listed.splitlines()[1:]) == ["0/2", "1/2"]
        assert all(line.split()[3] == "job-42" for line in listed.splitlines()[1:]), listed
        trigger_job(tmp_path, "job-42")
        job.finish()
    finally:
        job.kill()


@pytest.mark.torch
def test_trigger_by_job_reaches_a_rank_on_another_network_host(sockets, tmp_path):
    """Rank 0 on host node1, rank 1 on node2 (test_many_hosts.py's hosts), rank 1 with a
    /tmp of its own as another machine has: its files reach the trigger's directory only
    through the job's store. The trigger runs on node1."""
    from test_many_hosts import made_hosts

    hosts = made_hosts()
    private = tmp_path / "out"  # rank 1 sees an empty directory of its own here
    private.mkdir()

    def command(rank, argv):
        if rank == 0:
            return hosts.command(0, "node1", *argv)
        mounted = ["unshare", "--mount", "sh", "-c",
                   f'mount -t tmpfs none {private} && exec "$@"', "sh", *argv]
        return hosts.command(1, "node2", *mounted)

    env = dict(os.environ, PADDLE_PROF_LISTEN="1", TORCHELASTIC_RUN_ID="job-hosts")
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    job = None
    try:
        job = Job(tmp_path, lambda rank, argv: ["env", f"GLOO_SOCKET_IFNAME={hosts.names[rank]}",
                                               *command(rank, argv)],
                  hosts.addresses[0], env)
        out = trigger_job(tmp_path, "job-hosts", prefix=["ip", "netns", "exec", hosts.names[0]])
        assert summary(out / "rank1.summary.json")["process"]["host"] == "node2"
        job.finish()
    finally:
        if job is not None:
            job.kill()
        hosts.remove()
