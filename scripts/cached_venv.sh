#!/usr/bin/env bash
# cached_venv.sh NAME PACKAGE...: makes (once) and prints a virtual environment that holds
# PACKAGE... from PyPI, kept outside the checkout so that every clone reuses it:
# ${PADDLE_PROF_CACHE_DIR:-~/.cache/paddle_prof}/NAME. It is made from Debian's python3.
# It counts as made only once pip has installed every package asked for.
set -euo pipefail
name="$1"
shift
packages=("$@")
cache="${PADDLE_PROF_CACHE_DIR:-$HOME/.cache/paddle_prof}"
venv="$cache/$name"
marker="$venv/.paddle_prof-packages"
if [ "$(cat "$marker" 2>/dev/null)" != "${packages[*]}" ]; then
  mkdir -p "$cache"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${packages[@]}" >&2
  echo "${packages[*]}" > "$marker"
fi
echo "$venv"
