#!/usr/bin/env bash
# bench/cpp-baseline.sh [label] [repetitions] [thread counts...]
#
# Builds and runs the C++ baseline of issue 23: ModelExpress's VmmArena design in C++
# (bench/src/main/cpp/modelexpress_arena.cpp, g++ -O2), one to N fresh threads making malloc(4096)+free
# pairs on one arena over a no-op backend, aggregate ns per pair, min and median of the repetitions
# (default 5, at 1 and 2 threads). Never part of ./mvnw verify; bench/compare-kernels.sh runs it
# round by round beside the Java pair's plain loop (PairLoop) for two kernels, and gives the ratios.
# Output: bench/target/cpp/modelexpress-arena.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/bench/target/cpp"
mkdir -p "$out"
g++ -O2 -std=c++17 -pthread -Wall -Wextra -Werror -o "$out/modelexpress_arena" \
  "$root/bench/src/main/cpp/modelexpress_arena.cpp"
{
  echo "# CPU $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores), $(g++ --version | head -1), -O2"
  "$out/modelexpress_arena" "${1:-c++}" "${2:-5}" "${@:3}"
} | tee "$out/modelexpress-arena.txt"
