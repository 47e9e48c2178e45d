#!/usr/bin/env bash
# For a GPU machine without network: gathers the C++ dependencies that it may lack
# (glog, gflags, GoogleTest, nlohmann-json) as Debian packages, unpacked into a prefix
# that benchmarks/gpu_check.sh builds against (PADDLE_PROF_DEPS=<prefix>). Run it here,
# where the package archive is reachable, and carry the prefix to the GPU machine.
set -euo pipefail
prefix="$(realpath -m "${1:-.gpu_deps}")"
debs="$(mktemp -d)"
(cd "$debs" && apt-get download -q libgoogle-glog-dev libgoogle-glog0v6 libgflags-dev \
    libgflags2.2 libunwind-dev libunwind8 libgtest-dev nlohmann-json3-dev > /dev/null)
mkdir -p "$prefix"
for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
rm -rf "$debs" "$prefix/usr/share/doc"
echo "dependencies unpacked in $prefix ($(du -sh "$prefix" | cut -f1))"
