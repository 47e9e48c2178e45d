#!/usr/bin/env bash
# Fuzzes every reader of what other processes wrote: recover's capture directories,
# summaries (load, merge, html) and the JSON they are read from (against nlohmann's
# parser), a parent's children's profiles (libFuzzer harnesses in tests/fuzz, under
# ASan+UBSan, built with clang in build-fuzz), merge --profile-path's Chrome traces
# (tests/fuzz/fuzz_trace_merge.py) and the requests and replies on a listening process's
# socket (tests/fuzz/fuzz_listen_requests.py). Each first replays its regressions
# (tests/fuzz/regressions/<reader>), then fuzzes for PADDLE_PROF_FUZZ_SECONDS (60) from
# seeds a real window writes (make_seeds) and the corpus kept in build-fuzz/corpus.
# Exits non-zero on any crash, hang (10 s), leak or memory past 2 GiB; the failing input
# is in build-fuzz/artifacts (build-fuzz/trace_merge and build-fuzz/listen_requests for
# the Python harnesses).
# PADDLE_PROF_FUZZ_PYTHONPATH: a built Python package to fuzz (e.g. build/python), else
# one is built in build-fuzz/python-build.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${PADDLE_PROF_FUZZ_SECONDS:-60}"
jobs="$(nproc)"
out=build-fuzz
python=/usr/bin/python3  # Debian's interpreter, which sees Debian's numpy

cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DPADDLE_PROF_FUZZ=ON -DPADDLE_PROF_WITH_CUDA=OFF -DPADDLE_PROF_BUILD_TESTS=OFF \
    -DPADDLE_PROF_BUILD_BENCHMARKS=OFF -DPADDLE_PROF_BUILD_EXAMPLES=OFF \
    -DPADDLE_PROF_BUILD_PYTHON=OFF > /dev/null
cmake --build "$out" -j"$jobs"

rm -rf "$out/seeds"
"$out/tests/fuzz/make_seeds" "$out/seeds"
mkdir -p "$out/artifacts"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
for reader in capture summary child_profiles json_document; do
  echo "=== fuzz: $reader (${seconds} s)"
  fuzzer="$out/tests/fuzz/${reader}_fuzzer"
  seeds="$out/seeds/$reader"
  [ "$reader" = json_document ] && seeds="$out/seeds/summary"  # JSON as the writers write it
  regressions=(tests/fuzz/regressions/"$reader"/*)
  if [ -e "${regressions[0]}" ]; then "$fuzzer" "${regressions[@]}"; fi
  mkdir -p "$out/corpus/$reader"
  "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_funcs=0 \
      -print_final_stats=1 -artifact_prefix="$out/artifacts/$reader-" "$out/corpus/$reader" \
      "$seeds"
done

echo "=== fuzz: trace_merge (${seconds} s)"
pythonpath="${PADDLE_PROF_FUZZ_PYTHONPATH:-}"
if [ -z "$pythonpath" ]; then
  cmake -S . -B "$out/python-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPython_EXECUTABLE="$python" -DPADDLE_PROF_WITH_CUDA=OFF -DPADDLE_PROF_WITH_TORCH=OFF \
      -DPADDLE_PROF_BUILD_TESTS=OFF -DPADDLE_PROF_BUILD_BENCHMARKS=OFF \
      -DPADDLE_PROF_BUILD_EXAMPLES=OFF > /dev/null
  cmake --build "$out/python-build" -j"$jobs" --target _core paddle_prof_python
  pythonpath="$out/python-build/python"
fi
# atheris where pip can install it (a venv outside the checkout, kept between runs);
# without it the harnesses run their own mutation loop.
venv="${XDG_CACHE_HOME:-$HOME/.cache}/paddle_prof/fuzz-venv"
[ -x "$venv/bin/python" ] || "$python" -m venv --system-site-packages "$venv"
"$venv/bin/python" -c "import atheris" 2> /dev/null ||
  "$venv/bin/python" -m pip install -q atheris ||
  echo "fuzz: atheris could not be installed; trace_merge runs a mutation loop instead"
mkdir -p "$out/trace_merge"
PYTHONPATH="$pythonpath" "$venv/bin/python" tests/fuzz/fuzz_trace_merge.py "$out/seeds/trace" \
    "$out/trace_merge" "$seconds" tests/fuzz/regressions/trace_merge/*
echo "=== fuzz: listen_requests (${seconds} s)"
PYTHONPATH="$pythonpath" "$venv/bin/python" tests/fuzz/fuzz_listen_requests.py \
    "$out/listen_requests" "$seconds" tests/fuzz/regressions/listen_requests/*
echo "fuzz: no crash, hang or leak"
