"""Every command the README and the pages under docs/ show works as written, from the
checkout's root, after the main job: each line of their ``sh`` blocks runs, in order (the
README first, then the docs pages sorted by name, so a page may use what the README's
commands wrote), in a copy of the root (links to its files, ``build`` the build under
test, and ``.venv/bin/paddle-prof``, which the main job installs, the command of the build
under test), so a command is tested the day it is written.

Left out, each for its reason (SKIPPED): the fresh-machine commands, the build block and
the virtual environment's install, which ``scripts/test.sh`` runs itself. Commands shown
inline or in ``text`` blocks (benchmarks, which take minutes or a GPU; syntax with
placeholders) are not run, but each file an inline one names must exist.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / 'README.md'
# The README first: the pages' commands may read what its commands wrote.
PAGES = [README] + sorted((ROOT / 'docs').glob('*.md'))
SKIPPED = {
    'bash scripts/main.sh': 'the main job: its training command runs first, as MAIN_JOB',
    'bash scripts/test.sh': 'this very suite',
    'bash scripts/install_deps.sh': 'scripts/test.sh runs it first',
    'cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=/usr/bin/python3':
        'scripts/test.sh configures, builds and installs the package, and builds a consumer',
    'cmake --build build -j': 'as above',
    'cmake --install build --prefix /usr/local': 'as above, into a temporary prefix',
    '/usr/bin/python3 -m venv --system-site-packages .venv':
        'scripts/test.sh pip-installs the package into a temporary virtual environment',
    '.venv/bin/python -m pip install --no-build-isolation .': 'as above',
}


def sh_commands(text):
    """The command lines of the ``sh`` blocks, in order, their comments kept (bash
    drops them)."""
    commands = []
    for block in re.findall(r'^```sh\n(.*?)^```', text, flags=re.M | re.S):
        commands += [line for line in block.splitlines() if line.strip()]
    return commands


def all_commands():
    return [c for page in PAGES for c in sh_commands(page.read_text())]


def bare(command):
    return command.split('  #')[0].strip()


# An inline span that reads as a command to run: it starts the way one does here.
INLINE = re.compile(r'`((?:PYTHONPATH=\S+ |[A-Z_]+=\S+ )*(?:bash|/usr/bin/python3|python3) '
                    r'[^`]*)`')


def test_the_pages_show_commands_and_skip_only_known_ones():
    readme = [bare(c) for c in sh_commands(README.read_text())]
    assert readme[:2] == ['bash scripts/main.sh', 'bash scripts/test.sh'], readme[:2]
    commands = [bare(c) for c in all_commands()]
    assert len(commands) > len(SKIPPED)
    # A skip whose command is gone would hide the next command written the same way.
    assert set(SKIPPED) <= set(commands), set(SKIPPED) - set(commands)


def test_no_sh_block_is_indented():
    # An indented fence (inside a list item) is not found by sh_commands: it would go
    # untested.
    for page in PAGES:
        indented = re.findall(r'^[ \t]+```sh\s*$', page.read_text(), flags=re.M)
        assert not indented, f'{page.name}: an indented sh block'


def test_every_file_an_inline_command_names_exists():
    named = 0
    for page in PAGES:
        for span in INLINE.findall(page.read_text()):
            for word in span.split():
                if re.fullmatch(r'(benchmarks|examples|scripts|tests)/[\w./-]+', word):
                    assert (ROOT / word).exists(), f'{page.name}: {span}: no {word}'
                    named += 1
    assert named > 0


def _scratch_root(tmp_path):
    """A copy of the checkout's root: a link per tracked entry, and `build` the build whose
    package these tests import."""
    import paddle_prof
    build = pathlib.Path(paddle_prof.__file__).resolve().parents[2]
    root = tmp_path / 'checkout'
    root.mkdir()
    listed = subprocess.run(['git', '-C', str(ROOT), 'ls-files'], capture_output=True,
                            text=True)
    names = ({p.split('/')[0] for p in listed.stdout.split()} if listed.returncode == 0
             else set(os.listdir(ROOT)) - {'build', '.venv'})
    for name in sorted(names):
        (root / name).symlink_to(ROOT / name)
    (root / 'build').symlink_to(build)
    # What pip's console script does, with the package of the build under test.
    command = root / '.venv' / 'bin' / 'paddle-prof'
    command.parent.mkdir(parents=True)
    command.write_text(
        f'#!/bin/sh\nPYTHONPATH={build / "python"}${{PYTHONPATH:+:$PYTHONPATH}} exec '
        f'{sys.executable} -c "import sys; sys.argv[0] = \'paddle-prof\'; '
        f'from paddle_prof.cli import main; sys.exit(main())" "$@"\n')
    command.chmod(0o755)
    return root


def _run(command, cwd, page='scripts/main.sh'):
    result = subprocess.run(['bash', '-e', '-o', 'pipefail', '-c', command], cwd=cwd,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (f'{page} command failed ({result.returncode}): {command}\n'
                                    f'{result.stdout[-3000:]}\n{result.stderr[-3000:]}')
    return result


@pytest.mark.torch
def test_every_command_works_from_the_root_after_the_main_job(tmp_path):
    if shutil.which('bash') is None:
        pytest.skip('no bash')
    root = _scratch_root(tmp_path)
    main_job = [line for line in (ROOT / 'scripts' / 'main.sh').read_text().splitlines()
                if line.startswith('PYTHONPATH=build/python')]
    assert len(main_job) == 1, main_job  # the training command of the main job
    _run(main_job[0], root)
    assert (root / 'profile.json.summary.json').exists()
    ran = 0
    for page in PAGES:
        for command in sh_commands(page.read_text()):
            if bare(command) in SKIPPED:
                continue
            _run(command, root, page.name)
            ran += 1
    assert ran >= 6
    assert (root / 'report.html').stat().st_size > 0
    assert (root / 'prof' / 'merged.json.summary.json').exists()
