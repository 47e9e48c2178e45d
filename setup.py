"""Builds paddle_prof._core with the project's CMake build and puts it, with
libpaddle_prof, into the package (the extension finds the library through $ORIGIN)."""

import hashlib
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


def build_key() -> str:
    """The interpreter and the torch it imports, which a CMake build folder's cache keeps
    from its first configure: each pair builds in a folder of its own, so that one
    checkout installed into two environments builds each one's torch bridge against
    its own torch."""
    spec = importlib.util.find_spec("torch")
    torch = ""
    if spec is not None and spec.origin is not None:
        version = pathlib.Path(spec.origin).parent / "version.py"
        torch = spec.origin + (version.read_text() if version.exists() else "")
    text = "\0".join([sys.executable, sys.version, torch])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        target = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve()
        build_dir = pathlib.Path(self.build_temp).resolve() / f"cmake-{build_key()}"
        subprocess.check_call([
            "cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython_EXECUTABLE={sys.executable}", "-DPADDLE_PROF_BUILD_TESTS=OFF",
            "-DPADDLE_PROF_BUILD_BENCHMARKS=OFF", "-DPADDLE_PROF_BUILD_EXAMPLES=OFF"])
        subprocess.check_call(["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 1)])
        built = build_dir / "python" / "paddle_prof"
        target.parent.mkdir(parents=True, exist_ok=True)
        # The extensions (_core, _paddle_bridge, and _torch_bridge with the torch version
        # it was built for, where Torch was found) and the library.
        for f in built.iterdir():
            generated = f.name == "_torch_build.py" or not f.name.endswith(".py")
            if f.name.startswith(("_", "libpaddle_prof")) and generated:
                shutil.copy2(f, target.parent / f.name)


setup(ext_modules=[CMakeExtension("paddle_prof._core")], cmdclass={"build_ext": CMakeBuild})
