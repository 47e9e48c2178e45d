#!/usr/bin/env bash
# Makes (once) and prints the virtual environment that holds PyPI's newest PaddlePaddle
# 3.x (its CPU wheel, with numpy and pytest): ~/.cache/paddle_prof/paddle-venv
# (scripts/cached_venv.sh). Made from Debian's python3, so the package built for that
# interpreter imports in it.
exec bash "$(dirname "$0")/cached_venv.sh" paddle-venv "paddlepaddle>=3,<4" numpy pytest
