#!/usr/bin/env bash
# Installs what paddle_prof builds and tests with, from Debian's packages.
set -euo pipefail
packages=(cmake g++ make pkg-config
          ccache  # scripts/test.sh compiles each file once across its builds and clones
          libgoogle-glog-dev libgflags-dev
          libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
          python3 python3-dev pybind11-dev python3-numpy python3-pytest
          python3-setuptools python3-wheel python3-pip python3-venv
          python3-torch libtorch-dev
          libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0  # other mallocs under the preload library
          libunwind8  # native frames under --native --record-stacks (loaded at run time)
          heaptrack time
          clang libclang-rt-14-dev  # libFuzzer and the sanitizers of scripts/fuzz.sh
          chromium  # the HTML report's tests render it headless
          iproute2 util-linux  # network hosts made on this machine for the many-hosts tests
          tmux  # the live view's tests run it in a terminal
          locales)  # localedef: a program whose locale writes decimals with a comma
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
