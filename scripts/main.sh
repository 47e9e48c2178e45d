#!/usr/bin/env bash
# The main job on a fresh machine: install, build, and train a small CNN on synthetic
# MNIST-sized data under paddle_prof.torch; prints the report and writes a Chrome trace
# (profile.json), its summary (profile.json.summary.json) and its HTML report
# (profile.json.html). The package is also installed into .venv, which gives the
# command .venv/bin/paddle-prof.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
# pip's build compiles the same sources with the same flags: ccache serves it.
export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPADDLE_PROF_BUILD_TESTS=OFF \
      -DPADDLE_PROF_BUILD_BENCHMARKS=OFF -DPython_EXECUTABLE=/usr/bin/python3
cmake --build build -j"$(nproc)"
/usr/bin/python3 -m venv --system-site-packages .venv
.venv/bin/python -m pip install -q --no-build-isolation . > /dev/null
PYTHONPATH=build/python /usr/bin/python3 examples/train_cnn.py --profile-path profile.json
echo "Open profile.json.html in a browser, or profile.json in https://ui.perfetto.dev"
