#!/usr/bin/env bash
# Makes (once) and prints the virtual environment that holds PyPI's newest torch 2.x
# (with numpy, pytest and Holistic Trace Analysis), kept outside the checkout so that
# every clone reuses it: ${PADDLE_PROF_CACHE_DIR:-~/.cache/paddle_prof}/torch2-venv.
# The environment counts as made only once pip has installed every package listed here.
set -euo pipefail
packages=(torch numpy pytest HolisticTraceAnalysis)
cache="${PADDLE_PROF_CACHE_DIR:-$HOME/.cache/paddle_prof}"
venv="$cache/torch2-venv"
marker="$venv/.paddle_prof-packages"
if [ "$(cat "$marker" 2>/dev/null)" != "${packages[*]}" ]; then
  mkdir -p "$cache"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${packages[@]}" >&2
  echo "${packages[*]}" > "$marker"
fi
echo "$venv"
