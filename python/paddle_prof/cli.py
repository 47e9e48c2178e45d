"""``python3 -m paddle_prof run``: profile a Python script or module without touching it;
``python3 -m paddle_prof recover``: the report of one killed before it stopped;
``python3 -m paddle_prof merge``: the profiles of several processes or ranks as one;
``python3 -m paddle_prof html``: a profile (or several, merged) as an HTML page;
``python3 -m paddle_prof diff``: two profiles compared (exit 1 on a regression when asked,
2 when they cannot be read);
``python3 -m paddle_prof ps``, ``trigger``, ``top``: listening processes, profiled on
demand (on_demand.py, top_view.py)."""

from __future__ import annotations

import argparse
import builtins
import io
import os
import runpy
import sys
import traceback
import types
from typing import Any, Dict, List, Optional, Tuple

from paddle_prof import _core, children, listen_protocol, listener, on_demand, run_supervisor
from paddle_prof.on_import import install_paddle_when_imported, install_torch_when_imported
from paddle_prof.diff import MEMORY_THRESHOLD, TIME_THRESHOLD, diff, threshold
from paddle_prof.merge import SUMMARY_SUFFIX, load, merge, summary_path
from paddle_prof.profiler import (SORTED_KEYS, STATES, set_capture_dir, end_implicit_window,
                                  recover, stop_profiler)
from paddle_prof.report import Report
from paddle_prof.trace_merge import write_merged


class _Parser(argparse.ArgumentParser):
    """A bad argument is one line on stderr and exit 2 (argparse adds the usage)."""

    def error(self, message: str) -> None:
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def _prog() -> str:
    """How the user called us: the installed command, or the module."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name.startswith("paddle-prof") else "python3 -m paddle_prof"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=_prog(),
        description="Profile a Python program with paddle_prof and print the report at exit.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", help="run a script or module under the profiler",
        usage="%(prog)s [options] [--] SCRIPT [ARGS...]\n"
              "       %(prog)s [options] -m MODULE [ARGS...]",
        description="Runs SCRIPT, or MODULE as 'python3 -m MODULE' does, under an implicit "
                    "profiler: if the program opens its own profiler, that one takes over "
                    "and this one ends silently. Every word after SCRIPT or MODULE is the "
                    "program's, as python3 would pass it ('--' too); the options come "
                    "before.")
    run.add_argument("--state", default="CPU", choices=STATES)
    run.add_argument("--sorted-key", default="total", choices=[k for k in SORTED_KEYS if k])
    run.add_argument("--profile-path", default=None,
                     help="write the Chrome trace here and the summary at PATH.summary.json")
    run.add_argument("--per-thread", action="store_true", help="one row per thread")
    run.add_argument("--snapshot-signal", default=None, metavar="SIGNAL",
                     help="a signal (USR1, SIGUSR2, ...) that writes a snapshot of the profile "
                          "to PROFILE_PATH.snapshot<N> (default ./paddle_prof.<pid>.json."
                          "snapshot<N>) each time it comes; the script goes on")
    run.add_argument("--native", action="store_true",
                     help="also track every malloc of the program (place 'native') through "
                          "libpaddle_prof_preload.so; programs it starts are not tracked, "
                          "except the children multiprocessing spawns in a window that "
                          "follows them")
    run.add_argument("--capture", default=None, metavar="DIR",
                     help="send the records to memory-mapped files in DIR as they are made "
                          "(the script's own profiler's too), so that a run killed by SIGKILL "
                          "or the OOM killer can be reported by 'recover DIR'; a run that "
                          "ends normally leaves none behind")
    run.add_argument("--record-stacks", action="store_true",
                     help="keep the Python stack of each top-level call: rows name their "
                          "sources, the memory at the peak the line that allocated it, and "
                          "under --native its blocks get native frames")
    run.add_argument("--listen", action="store_true",
                     help="run the program with no window of its own, listening: 'trigger' "
                          "and 'top' profile it while it runs (the options above that shape "
                          "run's own window do not apply)")
    run.add_argument("--no-torch", action="store_true",
                     help="do not install the PyTorch integration (ATen ops as events, tensor "
                          "memory) when the script imports torch")
    recovering = commands.add_parser(
        "recover", help="report a run that ended without stopping its profiler",
        description="Prints the report of a process that was killed (SIGKILL, the OOM "
                    "killer) while its profiler ran with a capture directory "
                    "(run --capture DIR, profiler(capture_dir=DIR)).")
    recovering.add_argument("directory", metavar="DIR", help="the capture directory")
    recovering.add_argument("--sorted-key", default="total",
                            choices=[k for k in SORTED_KEYS if k])
    recovering.add_argument("--profile-path", default=None,
                            help="write the Chrome trace here and the summary at "
                                 "PATH.summary.json")
    recovering.add_argument("--per-thread", action="store_true", help="one row per thread")
    merging = commands.add_parser(
        "merge", help="merge the profiles of several processes or ranks",
        description="Prints the merged report of FILES (summary files, or the trace paths "
                    "beside them): rows summed over the inputs with their spread, steps by "
                    "index, stragglers named.")
    merging.add_argument("files", nargs="+", metavar="FILES", help="the summaries to merge")
    merging.add_argument("--sorted-key", default="total", choices=[k for k in SORTED_KEYS if k])
    merging.add_argument("--profile-path", default=None, metavar="OUT",
                         help="write OUT, a Chrome trace with one process per input on "
                              "aligned clocks, the merged summary at OUT.summary.json and "
                              "its HTML report at OUT.html")
    page = commands.add_parser(
        "html", help="write the HTML report of a profile, or of several merged",
        description="Writes one self-contained HTML page (open it in any browser, from "
                    "file://) for FILES: one summary is drawn as it is, several are merged "
                    "first as 'merge' merges them.")
    page.add_argument("files", nargs="+", metavar="FILES",
                      help="summary files, or the trace paths beside them")
    page.add_argument("-o", "--output", required=True, metavar="OUT.html",
                      help="where to write the page")
    comparing = commands.add_parser(
        "diff", help="compare two profiles: what got slower or took more memory",
        description="Prints the rows of NEW that changed against BASE (summary files, or "
                    "the trace paths beside them): slower or faster beyond the time "
                    "threshold and the base's spread of calls, more or less memory beyond "
                    "the memory threshold, new or gone; then each place's peak.")
    comparing.add_argument("base", metavar="BASE", help="the summary to compare against")
    comparing.add_argument("new", metavar="NEW", help="the summary compared")
    comparing.add_argument("--time-threshold", default=TIME_THRESHOLD, metavar="PCT",
                           help="relative change of a row's median call that counts, a "
                                f"percentage (default {TIME_THRESHOLD}%)")
    comparing.add_argument("--memory-threshold", default=MEMORY_THRESHOLD, metavar="PCT",
                           help="relative change of a peak or live bytes that counts, a "
                                f"percentage (default {MEMORY_THRESHOLD}%: any byte)")
    comparing.add_argument("--fail-on-regression", action="store_true",
                           help="exit 1 when a row is slower or takes more memory, or a "
                                "place's peak grew")
    comparing.add_argument("-o", "--output", default=None, metavar="OUT.html",
                           help="also write a self-contained HTML page of the diff")
    commands.add_parser(
        "ps", help="list this user's processes that listen for profiling requests",
        description="Lists this user's listening processes on this host (paddle_prof."
                    "listen(), PADDLE_PROF_LISTEN=1, run --listen): pid, host, rank and "
                    "world size, job, steps so far, the window open, the command line.")
    asking = commands.add_parser(
        "trigger", help="profile listening processes for a number of steps",
        description="Each chosen process opens a window at its next step boundary "
                    "(mark_step, prof.step, or an optimizer's step), records STEPS steps "
                    "and writes its profile to OUT/rank<r> (or OUT/<host>-<pid>); the "
                    "profiles are merged into OUT/merged, and the merged table's header "
                    "printed. Exit 1 when a process did not answer or write (named), 2 "
                    "when none listens.")
    chosen = asking.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--pid", type=int, nargs="+", metavar="PID", help="these processes")
    chosen.add_argument("--job", metavar="JOB",
                        help="every rank of this job, on every host (through the job's "
                             "torch.distributed or paddle.distributed store)")
    chosen.add_argument("--all", action="store_true", help="every listening process")
    asking.add_argument("--steps", type=_positive_int, default=5, help="steps to record "
                                                                      "(default 5)")
    asking.add_argument("--record-shapes", action="store_true",
                        help="rows per input shapes")
    asking.add_argument("--modules", action="store_true",
                        help="module and layer events (nn.Module, nn.Layer)")
    asking.add_argument("--native", action="store_true",
                        help="also track every malloc of the processes (place 'native')")
    asking.add_argument("--out", default=None, metavar="DIR",
                        help="where the profiles go (default ./paddle_prof-trigger-<time>)")
    asking.add_argument("--wait", type=_positive_float, default=300, metavar="SECONDS",
                        help="how long to wait for the profiles (default 300)")
    viewing = commands.add_parser(
        "top", help="a live view of a listening process",
        description="Redraws each second, until q or Ctrl-C: step time, ips, live and peak "
                    "bytes per place with their kinds, and the ops of the last steps by self "
                    "time and by peak memory. The process keeps a flight-recorder window "
                    "open while the view runs (or shows its own window, if it has one open).")
    viewing.add_argument("pid", type=int, metavar="PID")
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not 0 < value <= listen_protocol.MAX_WAIT_S:
        raise argparse.ArgumentTypeError(
            f"must be more than 0 and at most {listen_protocol.MAX_WAIT_S}; got {text}")
    return value


def _overwritten_input(option: str, given: str, written: List[str], inputs: List[str]
                       ) -> Optional[str]:
    """Why the files `option` `given` writes (`written`) would replace an input's summary
    or the trace beside it (which merge reads), under any spelling or link; else None."""
    for out in written:
        for spelling in inputs:
            summary = summary_path(spelling)
            files = [(summary, "summary")]
            if summary.endswith(SUMMARY_SUFFIX):
                files.append((summary[:-len(SUMMARY_SUFFIX)], "trace"))
            for path, what in files:
                if os.path.exists(out) and os.path.exists(path) and os.path.samefile(out, path):
                    verb = "is" if out == given else f"would write {out}, which is"
                    return (f"{option} {given} {verb} the {what} of the input {spelling}: "
                            f"give another output path")
    return None


def _diff(options: argparse.Namespace) -> int:
    try:
        thresholds = (threshold(options.time_threshold, "--time-threshold"),
                      threshold(options.memory_threshold, "--memory-threshold"))
    except ValueError as e:
        print(f"paddle_prof diff: {e}", file=sys.stderr)
        return 2
    written = [] if options.output is None else [options.output]
    overwritten = _overwritten_input("-o", options.output, written, [options.base, options.new])
    if overwritten:
        print(f"paddle_prof diff: {overwritten}", file=sys.stderr)
        return 2
    try:
        result = diff(options.base, options.new, *thresholds)
    except (TypeError, *_READ_ERRORS) as e:
        print(f"paddle_prof diff: {e}", file=sys.stderr)
        return 2
    print(result.table(), end="")
    if options.output is not None:
        try:
            result.to_html(options.output)
        except OSError as e:
            print(f"paddle_prof diff: cannot write {options.output}: {e.strerror}",
                  file=sys.stderr)
            return 2
        print(f"wrote {options.output}")
    return 1 if options.fail_on_regression and result.regressions else 0


def _print_table(report: Report) -> None:
    table = report.table()
    print(table, end="" if table.endswith("\n") else "\n")


# What reading other processes' files may raise, each said in one line: ValueError for a
# file that is not what it should be, RuntimeError (RecursionError among them) for one
# that no reader should have met.
_READ_ERRORS = (ValueError, RuntimeError)


def _merge(options: argparse.Namespace) -> int:
    out = options.profile_path
    written = [] if out is None else [out, out + SUMMARY_SUFFIX, out + ".html"]
    overwritten = _overwritten_input("--profile-path", out, written, options.files)
    if overwritten:
        print(f"paddle_prof merge: {overwritten}", file=sys.stderr)
        return 2
    try:
        merged = merge(options.files, options.sorted_key)
    except _READ_ERRORS as e:
        print(f"paddle_prof merge: {e}", file=sys.stderr)
        return 1
    if options.profile_path is not None:
        try:
            merged = write_merged(merged, options.profile_path)
        except OSError as e:  # e.filename may be a temporary beside the file
            print(f"paddle_prof merge: cannot write {options.profile_path}: {e.strerror}",
                  file=sys.stderr)
            return 1
    _print_table(merged)
    return 0


def _html(options: argparse.Namespace) -> int:
    overwritten = _overwritten_input("-o", options.output, [options.output], options.files)
    if overwritten:
        print(f"paddle_prof html: {overwritten}", file=sys.stderr)
        return 2
    try:
        if len(options.files) == 1:
            report = load(options.files[0])
        else:
            report = merge(options.files)
    except _READ_ERRORS as e:
        print(f"paddle_prof html: {e}", file=sys.stderr)
        return 1
    try:
        report.to_html(options.output)
    except OSError as e:
        print(f"paddle_prof html: cannot write {options.output}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {options.output}")
    return 0


def _recover(options: argparse.Namespace) -> int:
    try:
        report = recover(options.directory, options.sorted_key, options.profile_path,
                         per_thread=options.per_thread)
    except _READ_ERRORS as e:
        print(e, file=sys.stderr)
        return 1
    _print_table(report)  # its warnings say how the process ended
    return 0



def _preload_library() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libpaddle_prof_preload.so")


def _supervise(argv: List[str], options: argparse.Namespace) -> int:
    """Runs this command again in a child process, the program's, and reports its window
    from its capture if it ends without a report (run_supervisor.py). Under --native the
    child starts with the malloc hooks preloaded (they must be there before the
    interpreter's first allocation)."""
    env = dict(os.environ)
    if options.native:
        library = _preload_library()
        if not os.path.exists(library):
            print(f"paddle_prof run: --native needs {library}, which this build lacks",
                  file=sys.stderr)
            return 2
        env["LD_PRELOAD"] = ":".join(filter(None, [library, env.get("LD_PRELOAD")]))

    def recover_window(directory: str, how: str, ended_unix_ns: int) -> None:
        try:
            report = Report(_core.recover(directory, options.sorted_key,
                                          options.profile_path or "", options.per_thread,
                                          how, ended_unix_ns))
        except _READ_ERRORS as e:
            print(f"paddle_prof run: {how}, and its capture cannot be read: {e}",
                  file=sys.stderr)
            return
        _print_table(report)

    # A name that is no signal: the program says so as it starts.
    snapshot = _core.signal_named(options.snapshot_signal) if options.snapshot_signal else 0
    return run_supervisor.supervise([sys.executable, "-m", "paddle_prof", *argv], env,
                                    options.capture, recover_window, snapshot or None)


# run's options that take a value: the word after one is that value, not the program.
_RUN_VALUE_OPTIONS = ("--state", "--sorted-key", "--profile-path", "--snapshot-signal",
                      "--capture")


def _split_run(words: List[str]) -> Tuple[List[str], List[str]]:
    """run's own options, and the program's command line: from the first word that is
    neither one of run's options nor an option's value (a '--' before it dropped), or from
    `-m`. The program's words are kept as they are, a '--' among them too, as python3
    passes them on; argparse alone would drop that '--'."""
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return words[:i], words[i + 1:]
        if word.startswith("-m") or not word.startswith("-"):
            return words[:i], words[i:]
        # --profile-path P, or an abbreviation (--prof P) as argparse accepts it
        if "=" not in word and any(o.startswith(word) for o in _RUN_VALUE_OPTIONS):
            i += 1
        i += 1
    return words, []


def _set_program(options: argparse.Namespace, program: List[str]) -> Optional[str]:
    """Sets options.script or options.module, and options.args, from the program's
    command line; the usage error, if any."""
    options.script = options.module = None
    if not program:
        return "a script to run is needed: run [options] [--] SCRIPT [ARGS...], " \
               "or run [options] -m MODULE [ARGS...]"
    if program[0].startswith("-m"):
        if program[0] != "-m":  # -mpkg.mod, as python3 accepts it
            program = ["-m", program[0][2:], *program[1:]]
        if len(program) < 2:
            return "-m needs a module name"
        options.module, options.args = program[1], program[2:]
        return None
    options.script, options.args = program[0], program[1:]
    return None


def _script_code(path: str) -> types.CodeType:
    """The script compiled, as the interpreter would run it (its absolute path in
    tracebacks); OSError when it cannot be read."""
    with io.open_code(path) as f:
        return compile(f.read(), os.path.abspath(path), "exec", dont_inherit=True)


def _run_as_main(code: types.CodeType, attributes: Dict[str, Any]) -> None:
    """Runs the program's code as `__main__` in a module that sys.modules keeps after it
    returns, as a plain interpreter does until exit, so that the report sees what the
    program's globals keep (runpy would clear them first). `attributes`: the module's
    __file__ and the others python3 sets."""
    module = types.ModuleType("__main__")
    module.__dict__.update(__builtins__=builtins, **attributes)
    sys.modules["__main__"] = module
    exec(code, module.__dict__)


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    program: List[str] = []
    if argv[:1] == ["run"]:
        own, program = _split_run(argv[1:])
        options = _parser().parse_args(["run", *own])
    else:
        options = _parser().parse_args(argv)
    if options.command == "recover":
        return _recover(options)
    if options.command == "merge":
        return _merge(options)
    if options.command == "html":
        return _html(options)
    if options.command == "diff":
        return _diff(options)
    if options.command == "ps":
        return on_demand.ps()
    if options.command == "top":
        from paddle_prof.top_view import top  # curses, for this command only

        return top(options.pid)
    if options.command == "trigger":
        return on_demand.trigger(options.pid, options.job, options.steps, options.out,
                                 options.wait, options.record_shapes, options.modules,
                                 options.native)
    problem = _set_program(options, program)
    if problem is not None:
        print(f"paddle_prof run: {problem}", file=sys.stderr)
        return 2
    # The program may change directory; its files stay where run was started.
    if options.profile_path:
        options.profile_path = os.path.abspath(options.profile_path)
    if options.capture:
        options.capture = os.path.abspath(options.capture)
    if options.script is not None:
        try:
            code = _script_code(options.script)
        except OSError as e:
            print(f"paddle_prof run: cannot open {options.script}: {e.strerror}",
                  file=sys.stderr)
            return 2
        except SyntaxError as e:  # as the interpreter says it, before any profiling
            print("".join(traceback.format_exception_only(type(e), e)), end="",
                  file=sys.stderr)
            return 1
    capture_dir = os.environ.pop(run_supervisor.CAPTURE_ENV, None)
    if capture_dir is None and not options.listen:
        return _supervise(argv, options)
    if options.module is None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(options.script)))
        sys.argv = [options.script] + options.args
        attributes = dict(__file__=os.path.abspath(options.script), __cached__=None)
    else:
        # Found in this process only, as `python3 -m` finds it: importing its packages
        # runs their code, which the supervisor must not run too. The current directory is
        # already first on sys.path, this process having started as `python3 -m`.
        sys.argv = ["-m"] + options.args  # what python3 -m shows while it looks
        try:  # runpy's own lookup, the one `python3 -m` makes (a package: its __main__)
            _, spec, code = runpy._get_module_details(options.module)
        except ImportError as e:
            print(f"paddle_prof run: {e}", file=sys.stderr)
            return 2
        sys.argv[0] = spec.origin
        attributes = dict(__file__=spec.origin, __cached__=spec.cached, __loader__=spec.loader,
                          __package__=spec.parent, __spec__=spec)
    if options.listen:  # no window until one is asked for
        try:
            listener.listen()
        except RuntimeError as e:
            print(f"paddle_prof run: {e}", file=sys.stderr)
            return 2
        _run_as_main(code, attributes)
        return 0
    if options.native:
        children.native_library = _preload_library()  # followed spawned children track too

    if options.snapshot_signal is not None:
        try:
            _core.catch_snapshot_signal(options.snapshot_signal)
        except ValueError as e:
            raise SystemExit(f"paddle_prof: --snapshot-signal: {e}") from None
    # SIGTERM and SIGHUP report from the C++ side with these; SIGINT stops in `finally`.
    _core.enable_implicit_profiler(options.state, options.sorted_key, options.profile_path or "",
                                   options.per_thread)
    set_capture_dir(capture_dir, every_window=True)  # the program's own profiler too
    if options.record_stacks:
        _core.set_record_stacks(True, every_window=True)  # the program's own profiler too
        os.environ["FLAGS_paddle_prof_record_stacks"] = "1"  # and the children it spawns
    if not options.no_torch:
        install_torch_when_imported(options.state)
    install_paddle_when_imported()
    try:
        _run_as_main(code, attributes)
    finally:
        # The program may have opened its own profiler, which replaced this one.
        if _core.implicit_profiler_running():
            end_implicit_window(stopping=True)
            stop_profiler(options.sorted_key, options.profile_path, per_thread=options.per_thread)
    # The program's SystemExit, if it raised one, goes on to the interpreter, which ends
    # this process as it would have ended the program (sys.exit("message") printed, 1).
    return 0
