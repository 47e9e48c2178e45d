#!/usr/bin/env bash
# The main job on a fresh machine: install, build, run a profiled training loop that
# prints the report and writes a Chrome trace (profile.json) and its summary
# (profile.json.summary.json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPADDLE_PROF_BUILD_TESTS=OFF \
      -DPADDLE_PROF_BUILD_BENCHMARKS=OFF -DPython_EXECUTABLE=/usr/bin/python3
cmake --build build -j"$(nproc)"
./build/examples/fake_training_loop profile.json
echo "Trace: $(pwd)/profile.json (open in https://ui.perfetto.dev); summary: profile.json.summary.json"
