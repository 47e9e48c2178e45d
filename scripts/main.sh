#!/usr/bin/env bash
# The main job on a fresh machine: install, build, and train a small CNN on synthetic
# MNIST-sized data under paddle_prof.torch; prints the report and writes a Chrome trace
# (profile.json), its summary (profile.json.summary.json) and its HTML report
# (profile.json.html).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPADDLE_PROF_BUILD_TESTS=OFF \
      -DPADDLE_PROF_BUILD_BENCHMARKS=OFF -DPython_EXECUTABLE=/usr/bin/python3
cmake --build build -j"$(nproc)"
PYTHONPATH=build/python /usr/bin/python3 examples/train_cnn.py --profile-path profile.json
echo "Open profile.json.html in a browser, or profile.json in https://ui.perfetto.dev"
