"""Every command the README shows works as written, from the checkout's root, after the
main job: each line of its ``sh`` blocks runs, in order, in a copy of the root (links to
its files, ``build`` the build under test), so a command is tested the day it is written.

Left out, each for its reason (SKIPPED): the fresh-machine commands and the build block,
which ``scripts/test.sh`` runs itself. Commands shown inline (benchmarks, which take
minutes or a GPU) are not run, but each file they name must exist.
"""

import os
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / 'README.md'
SKIPPED = {
    'bash scripts/main.sh': 'the main job: its training command runs first, as MAIN_JOB',
    'bash scripts/test.sh': 'this very suite',
    'bash scripts/install_deps.sh': 'scripts/test.sh runs it first',
    'cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=/usr/bin/python3':
        'scripts/test.sh configures, builds and installs the package, and builds a consumer',
    'cmake --build build -j': 'as above',
    'cmake --install build --prefix /usr/local': 'as above, into a temporary prefix',
}


def sh_commands(text):
    """The command lines of the ``sh`` blocks, in order, their comments kept (bash
    drops them)."""
    commands = []
    for block in re.findall(r'^```sh\n(.*?)^```', text, flags=re.M | re.S):
        commands += [line for line in block.splitlines() if line.strip()]
    return commands


def bare(command):
    return command.split('  #')[0].strip()


# An inline span that reads as a command to run: it starts the way one does here.
INLINE = re.compile(r'`((?:PYTHONPATH=\S+ |[A-Z_]+=\S+ )*(?:bash|/usr/bin/python3|python3) '
                    r'[^`]*)`')


def test_the_readme_shows_commands_and_skips_only_known_ones():
    commands = [bare(c) for c in sh_commands(README.read_text())]
    assert 'bash scripts/main.sh' in commands and len(commands) > len(SKIPPED)
    assert set(SKIPPED) <= set(commands), set(SKIPPED) - set(commands)


def test_every_file_an_inline_command_names_exists():
    named = 0
    for span in INLINE.findall(README.read_text()):
        for word in span.split():
            if re.fullmatch(r'(benchmarks|examples|scripts|tests)/[\w./-]+', word):
                assert (ROOT / word).exists(), f'{span}: no {word}'
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
             else set(os.listdir(ROOT)) - {'build'})
    for name in sorted(names):
        (root / name).symlink_to(ROOT / name)
    (root / 'build').symlink_to(build)
    return root


def _run(command, cwd):
    result = subprocess.run(['bash', '-e', '-o', 'pipefail', '-c', command], cwd=cwd,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (f'README command failed ({result.returncode}): {command}\n'
                                    f'{result.stdout[-3000:]}\n{result.stderr[-3000:]}')
    return result


@pytest.mark.torch
def test_every_readme_command_works_from_the_root_after_the_main_job(tmp_path):
    if shutil.which('bash') is None:
        pytest.skip('no bash')
    root = _scratch_root(tmp_path)
    main_job = [line for line in (ROOT / 'scripts' / 'main.sh').read_text().splitlines()
                if line.startswith('PYTHONPATH=build/python')]
    assert len(main_job) == 1, main_job  # the training command of the main job
    _run(main_job[0], root)
    assert (root / 'profile.json.summary.json').exists()
    ran = 0
    for command in sh_commands(README.read_text()):
        if bare(command) in SKIPPED:
            continue
        _run(command, root)
        ran += 1
    assert ran >= 6
    assert (root / 'report.html').stat().st_size > 0
    assert (root / 'prof' / 'merged.json.summary.json').exists()
