#!/usr/bin/env bash
# Every test on a fresh machine: install, build, run the C++ and Python suites (the
# PyTorch tests again on PyPI's torch 2.x, scripts/torch2_env.sh, and the PaddlePaddle
# tests on PyPI's paddlepaddle 3.x, scripts/paddle_env.sh), check
# the installed CMake package and the pip-installed Python package, then run the C++
# suite again under AddressSanitizer+UndefinedBehaviorSanitizer and under
# ThreadSanitizer, and fuzz every reader of other processes' files (scripts/fuzz.sh).
# PADDLE_PROF_SANITIZERS=0 skips the sanitizer builds and the fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
jobs="$(nproc)"
python=/usr/bin/python3  # Debian's interpreter, which sees Debian's numpy and pytest
# The same sources are compiled for six builds (plain, torch 2.x, pip, two sanitizers,
# fuzzing); ccache's cache outside the checkout serves repeats and later fresh clones.
# Paths are hashed relative to the checkout, so that another build folder or clone hits;
# a miss costs one compile, its includes taken from the compiler's -MD output.
export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-10G}"

run_suite() {  # build-dir, extra cmake args...
  local dir="$1"
  shift
  echo "=== paddle_prof tests in ${dir} $*"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE="$python" "$@"
  cmake --build "$dir" -j"$jobs"
  ctest --test-dir "$dir" -j"$jobs" --output-on-failure --no-tests=error
}

# Every part on: scripts/main.sh configures the same build folder without tests and
# benchmarks, and CMake keeps a folder's options.
run_suite build -DPADDLE_PROF_BUILD_TESTS=ON -DPADDLE_PROF_BUILD_BENCHMARKS=ON \
    -DPADDLE_PROF_BUILD_EXAMPLES=ON -DPADDLE_PROF_BUILD_PYTHON=ON
# The benchmarks must run and speak JSON; a short run checks both.
./build/benchmarks/record_event_benchmark --benchmark_filter=Disabled/threads:1 \
    --benchmark_min_time=0.01 --benchmark_format=json > /dev/null
# PyPI's newest torch 2.x, in an environment kept outside the checkout
# (scripts/torch2_env.sh): the bridge is built against its own headers, and the PyTorch
# tests run on it as they ran on Debian's 1.13 above, bounded so that a hang fails.
torch2_python="$(bash scripts/torch2_env.sh)/bin/python"
echo "=== paddle_prof.torch on $("$torch2_python" -c 'import torch; print("torch", torch.__version__)')"
cmake -S . -B build-torch2 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE="$torch2_python" \
    -DPADDLE_PROF_BUILD_TESTS=OFF -DPADDLE_PROF_BUILD_BENCHMARKS=OFF -DPADDLE_PROF_BUILD_EXAMPLES=OFF
cmake --build build-torch2 -j"$jobs"
PYTHONPATH=build-torch2/python PADDLE_PROF_TEST_BINARIES=build/tests \
  PADDLE_PROF_OTHER_TORCH_BUILD=build/python PADDLE_PROF_REQUIRE_HTA=1 \
  timeout 1200 "$torch2_python" -m pytest -q -p no:cacheprovider tests/python/test_torch.py \
    tests/python/test_torch_model_view.py tests/python/test_torch_memory_kinds.py \
    tests/python/test_distributed.py tests/python/test_advice.py \
    tests/python/test_memory.py tests/python/test_listen.py  # numpy 2.x there, 1.x in Debian's pass
# PyPI's newest PaddlePaddle 3.x, in an environment kept outside the checkout
# (scripts/paddle_env.sh), made from the same python3 as the package above; bounded.
paddle_python="$(bash scripts/paddle_env.sh)/bin/python"
echo "=== paddle_prof.paddle on $("$paddle_python" -c 'import paddle; print("paddle", paddle.__version__)' 2>/dev/null)"
PYTHONPATH=build/python PADDLE_PROF_REQUIRE_PADDLE=1 \
  timeout 600 "$paddle_python" -m pytest -q -p no:cacheprovider tests/python/test_paddle.py
# An installed copy serves another project through find_package(paddle_prof).
prefix="$(mktemp -d)"
cmake --install build --prefix "$prefix" > /dev/null
cmake -S tests/install_consumer -B build/install_consumer -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build build/install_consumer > /dev/null
LD_LIBRARY_PATH="$prefix/lib" ./build/install_consumer/consumer > /dev/null
echo "install: find_package(paddle_prof) consumer passed"
rm -rf "$prefix"
# pip installs the Python package offline into a virtual environment.
venv="$(mktemp -d)"
"$python" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --no-build-isolation . > /dev/null
(cd "$venv" && "$venv/bin/python" -c "
import io, paddle_prof
with paddle_prof.profiler('CPU', stream=io.StringIO()) as prof:
    with paddle_prof.record_event('fill_constant'):
        x = paddle_prof.empty((1000, 784), dtype='float32')
assert prof.report.events[0].memory['CPU']['peak_bytes'] == 3136000, prof.report.table()
")
# Installing gives the command paddle-prof, the same as python3 -m paddle_prof.
(cd "$venv" && printf '%s\n' 'import paddle_prof' \
   'with paddle_prof.record_event("fill_constant"):' \
   '    x = paddle_prof.empty((1000, 784), dtype="float32")' > fill.py &&
   "$venv/bin/paddle-prof" --help | grep '^usage: paddle-prof ' > /dev/null &&
   "$venv/bin/paddle-prof" run -- fill.py | grep 'fill_constant .*2.99 MiB' > /dev/null)
# Installing registers the pytest plugin (entry point pytest11).
# grep reads all of the help: with -q it would stop early and fail the pipe (pipefail).
(cd "$venv" && "$venv/bin/python" -m pytest --help | grep -- --paddle-prof-save > /dev/null)
echo "install: pip install --no-build-isolation . passed"
rm -rf "$venv"
# With build isolation (setuptools from PyPI), in a bare environment: pip wheel, then
# the wheel installed, numpy from PyPI; the command runs a profile.
venv="$(mktemp -d)"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip wheel -q --no-deps -w "$venv/wheels" . > /dev/null
"$venv/bin/python" -m pip install -q "$venv"/wheels/paddle_prof-*.whl > /dev/null
(cd "$venv" && printf '%s\n' 'import paddle_prof' \
   'with paddle_prof.record_event("fill_constant"):' \
   '    x = paddle_prof.empty((1000, 784), dtype="float32")' > fill.py &&
   "$venv/bin/paddle-prof" run -- fill.py | grep 'fill_constant .*2.99 MiB' > /dev/null)
echo "install: pip wheel . with build isolation passed"
rm -rf "$venv"
if [ "${PADDLE_PROF_SANITIZERS:-1}" != 0 ]; then
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_suite build-asan -DPADDLE_PROF_SANITIZE=address,undefined \
      -DPADDLE_PROF_BUILD_BENCHMARKS=OFF -DPADDLE_PROF_BUILD_EXAMPLES=OFF \
      -DPADDLE_PROF_BUILD_PYTHON=OFF
  TSAN_OPTIONS=halt_on_error=1 \
    run_suite build-tsan -DPADDLE_PROF_SANITIZE=thread \
      -DPADDLE_PROF_BUILD_BENCHMARKS=OFF -DPADDLE_PROF_BUILD_EXAMPLES=OFF \
      -DPADDLE_PROF_BUILD_PYTHON=OFF
  # 25 s for each of the five readers keeps the whole command near 30 minutes on two cores.
  PADDLE_PROF_FUZZ_SECONDS=25 PADDLE_PROF_FUZZ_PYTHONPATH=build/python bash scripts/fuzz.sh
fi
