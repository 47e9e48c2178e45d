#!/usr/bin/env bash
# Makes (once) and prints the virtual environment that holds PyPI's newest torch 2.x
# (with numpy, pytest and Holistic Trace Analysis): ~/.cache/paddle_prof/torch2-venv
# (scripts/cached_venv.sh).
exec bash "$(dirname "$0")/cached_venv.sh" torch2-venv torch numpy pytest HolisticTraceAnalysis
