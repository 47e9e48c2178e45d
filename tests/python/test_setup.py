"""setup.py: pip builds in a CMake folder keyed to the interpreter and the torch it
imports, so that one checkout installed into two environments builds each one's torch
bridge against its own torch (a CMake cache keeps what its first configure found)."""

import ast
import os
import subprocess
import sys
import textwrap

SETUP = os.path.join(os.path.dirname(__file__), '..', '..', 'setup.py')

# Runs setup.py's build_key() alone (running setup.py would build).
KEY = textwrap.dedent(f'''
    import ast
    tree = ast.parse(open({SETUP!r}).read())
    [function] = [n for n in tree.body
                  if isinstance(n, ast.FunctionDef) and n.name == 'build_key']
    names = {{}}
    exec('import hashlib, importlib.util, pathlib, sys', names)
    exec(compile(ast.Module([function], []), 'setup.py', 'exec'), names)
    print(names['build_key']())
''')


def key(python, *, env=None):
    result = subprocess.run([python, '-c', KEY], capture_output=True, text=True, timeout=60,
                            env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_build_folder_is_keyed_to_the_interpreter_and_its_torch(tmp_path):
    here = key(sys.executable)
    assert here == key(sys.executable)  # the same pair: the same folder, reused
    # Another interpreter (a virtual environment of this one) gets a folder of its own.
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True,
                   timeout=120)
    assert key(str(venv / 'bin' / 'python')) != here
    # The same interpreter importing another torch: a folder of its own too.
    fake = tmp_path / 'site' / 'torch'
    fake.mkdir(parents=True)
    (fake / '__init__.py').write_text('')
    (fake / 'version.py').write_text("__version__ = '9.9.9'\n")
    other = key(sys.executable, env={**os.environ, 'PYTHONPATH': str(tmp_path / 'site')})
    assert other != here
