#!/usr/bin/env bash
# Makes (once) and prints the virtual environment that holds PyPI's newest PaddlePaddle
# 3.x (its CPU wheel, with numpy and pytest), kept outside the checkout so that every
# clone reuses it: ${PADDLE_PROF_CACHE_DIR:-~/.cache/paddle_prof}/paddle-venv. It is made
# from Debian's python3, so the package built for that interpreter imports in it.
# The environment counts as made only once pip has installed every package listed here.
set -euo pipefail
packages=("paddlepaddle>=3,<4" numpy pytest)
cache="${PADDLE_PROF_CACHE_DIR:-$HOME/.cache/paddle_prof}"
venv="$cache/paddle-venv"
marker="$venv/.paddle_prof-packages"
if [ "$(cat "$marker" 2>/dev/null)" != "${packages[*]}" ]; then
  mkdir -p "$cache"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${packages[@]}" >&2
  echo "${packages[*]}" > "$marker"
fi
echo "$venv"
