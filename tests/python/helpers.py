"""What the Python tests share: a script run in a fresh interpreter, and the rows of a
report (a Report, or a summary's dict) found by name."""

import os
import subprocess
import sys
import textwrap

import paddle_prof

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(paddle_prof.__file__)))

ANY = object()  # a tag or process that any row matches


def run_script(tmp_path, source, *args, run=None, env=None, name='script', cwd=None,
               timeout=120, check=True):
    """Writes `source` (dedented) as tmp_path/<name>.py and runs it with `args` in a fresh
    interpreter, from `cwd` (tmp_path by default): the package under test and tmp_path
    importable, none of this process's FLAGS_paddle_prof_*, `env` on top. `run`: the
    options of `python3 -m paddle_prof run` to run it under (None: plainly). With `check`,
    a non-zero exit fails the test with the script's output. Returns the
    CompletedProcess."""
    script = tmp_path / f'{name}.py'
    script.write_text(textwrap.dedent(source))
    environment = {k: v for k, v in os.environ.items() if not k.startswith('FLAGS_paddle_prof')}
    environment['PYTHONPATH'] = os.pathsep.join(
        filter(None, [str(tmp_path), PACKAGE_ROOT, environment.get('PYTHONPATH')]))
    environment.update(env or {})
    launcher = [] if run is None else ['-m', 'paddle_prof', 'run', *run, '--']
    result = subprocess.run([sys.executable, *launcher, str(script), *args],
                            capture_output=True, text=True, timeout=timeout, env=environment,
                            cwd=tmp_path if cwd is None else cwd)
    if check:
        assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return result


def _field(row, key):
    return row.get(key) if isinstance(row, dict) else getattr(row, key, None)


def rows(report, name, tag=ANY, process=ANY):
    """The rows named `name`, with `tag` and of `process` where those are given (None: no
    tag, no process)."""
    events = report['events'] if isinstance(report, dict) else report.events
    return [e for e in events if _field(e, 'name') == name
            and (tag is ANY or _field(e, 'tag') == tag)
            and (process is ANY or _field(e, 'process') == process)]


def row(report, name, tag=ANY, process=ANY):
    """The one row rows() finds; fails the test, naming the rows there are, otherwise."""
    found = rows(report, name, tag, process)
    events = report['events'] if isinstance(report, dict) else report.events
    assert len(found) == 1, [(_field(e, 'name'), _field(e, 'tag')) for e in events]
    return found[0]


def calls(report, name, tag=ANY, process=ANY):
    """The calls of the rows rows() finds, summed."""
    return sum(_field(e, 'calls') for e in rows(report, name, tag, process))
