#!/usr/bin/env bash
# Whole-program native tracking against heaptrack, side by side: native_pairs (N malloc/
# free pairs in a profiled window) plain, under the preload library (profiling on, the
# timeline on), and under heaptrack; wall time (exit included) and peak RSS of each,
# rounds interleaved.
#
#   bash benchmarks/native_vs_heaptrack.sh [build dir=build] [pairs=10000000] [rounds=3]
set -euo pipefail
build="${1:-build}"
pairs="${2:-10000000}"
rounds="${3:-3}"
program="$build/benchmarks/native_pairs"
preload="$(cd "$build" && pwd)/libpaddle_prof_preload.so"
command -v heaptrack > /dev/null || { echo "heaptrack is not installed"; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
measure() {  # label, command...
  local label="$1"
  shift
  # /usr/bin/time runs the command through env, so the preload reaches it, not time.
  /usr/bin/time -o "$out/time" -f "%e %M" "$@" > "$out/stdout" 2> /dev/null
  awk -v label="$label" -v what="$(grep -m1 tracked "$out/stdout")" \
    '{ printf "%-12s %6.2f s  %8.1f MiB peak RSS  (%s)\n", label, $1, $2 / 1024, what }' "$out/time"
}
for round in $(seq "$rounds"); do
  echo "round $round, $pairs pairs"
  measure plain env "$program" "$pairs"
  measure paddle_prof env LD_PRELOAD="$preload" "$program" "$pairs"
  measure heaptrack heaptrack -o "$out/heaptrack" "$program" "$pairs"
  rm -f "$out"/heaptrack*
done
