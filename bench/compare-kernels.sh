#!/usr/bin/env bash
# bench/compare-kernels.sh COMMIT
#
# The kernel of git commit COMMIT ("landed COMMIT") measured beside the work tree's ("work tree"),
# on the same machine in one go, alternately: the pair in a plain loop (PairLoop) for both kernels
# and for ModelExpress's design in C++ (g++ -O2), round by round, summarised in
# pair-loop-summary.txt; ThreadCountHarness with the landed kernel, then with the work tree's
# (SKIP_THREADS=1 skips it), under SerialGC (the harness's own options) and again under G1, the
# JVM's default collector; then DeviceBufferScaling (DeviceBuffer allocate+close against the raw
# pair, one thread and two, aged arenas) with the landed kernel, then the work tree's, under each
# collector of SCALING_GCS (SKIP_SCALING=1 skips it); then PairReport (PairBenchmark's oneThread, twoThreads and twoThreadsThroughput
# for VmmArena and ModelExpress+AllocationTable) with the landed kernel, then with the work tree's.
# The landed kernel is built by bench/baseline-kernel.sh and put first on the class path, so every
# dev.keel class comes from it; the harness prints where VmmArena was loaded from, and PairReport
# checks that JMH's forks loaded the kernel from there too.
#
# Output, under bench/target/compare-COMMIT/: compare.log (everything printed), pair-loop.txt and
# pair-loop-summary.txt, per kernel
# thread-count-{landed,worktree}.{csv,svg} and pairs-{landed,worktree}.json (JMH), and
# thread-count.svg with both kernels' lines.
#
# Environment (word-split):
#   LOOP_ROUNDS   rounds of the plain loop (default 5)
#   SKIP_THREADS  set: no ThreadCountHarness
#   THREADS_OPTS  system properties for the harness, e.g. "-Dkeel.threads.rounds=5" (default: none,
#                 the harness's defaults; see its class comment)
#   SKIP_SCALING  set: no DeviceBufferScaling
#   SCALING_GCS   collectors for DeviceBufferScaling (default "G1 Parallel Serial")
#   SCALING_REPS  its repetitions per configuration (default 5)
#   JMH_OPTS      JMH options (default: -f 1 -wi 5 -w 1s -i 5 -r 1s)
#   JMH_JVM_ARGS  the forks' extra JVM options, one -jvmArgsAppend (default: -Xms2g -Xmx2g
#                 -XX:+AlwaysPreTouch: a fork that touches its heap for the first time while it
#                 measures pays page faults per object allocated, see docs/decisions.md)
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 COMMIT" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
commit="$(git rev-parse --short "$1^{commit}")"
out="$root/bench/target/compare-$commit"
mkdir -p "$out"
exec > >(tee "$out/compare.log") 2>&1
# shellcheck source=../.mvn/select-jdk.sh
. "$root/.mvn/select-jdk.sh"
set +f   # select-jdk.sh leaves globbing off, as mvnw wants it
java="$JAVA_HOME/bin/java"

bench/baseline-kernel.sh "$commit" "$out/kernel-$commit.jar"
# The work tree's kernel and the bench, and bench/target/classpath.txt (the kernel's jar among it).
./mvnw -q -B -Pbench -pl bench -am package -Dmaven.test.skip=true
work_tree="$root/bench/target/classes:$(cat "$root/bench/target/classpath.txt")"
landed="$out/kernel-$commit.jar:$work_tree"

threads() {   # label, file name part, class path[, extra JVM options]
  # shellcheck disable=SC2086
  "$java" "@$root/bench/src/main/jvm/thread-count.args" ${4:-} -Dkeel.bench.label="$1" \
    -Dkeel.threads.results="$out/thread-count-$2.csv" -Dkeel.threads.svg="$out/thread-count-$2.svg" \
    ${THREADS_OPTS:-} -cp "$3" dev.keel.bench.ThreadCountHarness
}

scaling() {   # label, file name part, class path, collector (G1, Parallel or Serial)
  "$java" -Xms2g -Xmx2g -XX:+AlwaysPreTouch "-XX:+Use$4GC" -Dkeel.bench.label="$1, $4" -cp "$3" \
    dev.keel.bench.DeviceBufferScaling "$out/device-buffer-$2-$4.txt" "${SCALING_REPS:-5}"
}

pairs() {     # label, file name part, class path
  # shellcheck disable=SC2086
  "$java" -Dkeel.bench.label="$1" -cp "$3" dev.keel.bench.PairReport \
    ${JMH_OPTS:--f 1 -wi 5 -w 1s -i 5 -r 1s} -jvmArgsAppend "${JMH_JVM_ARGS:--Xms2g -Xmx2g -XX:+AlwaysPreTouch}" \
    -rf json -rff "$out/pairs-$2.json"
}

# The pair in a plain loop (PairLoop) for both kernels and ModelExpress's design in C++, alternated
# round by round: one repetition each of 1 and 2 threads per round, each in a JVM (or process) of
# its own, so that a change in the machine's load falls on all three.
g++ -O2 -std=c++17 -pthread -Wall -Wextra -Werror -o "$out/modelexpress_arena" \
  "$root/bench/src/main/cpp/modelexpress_arena.cpp"
: > "$out/pair-loop.txt"
for round in $(seq "${LOOP_ROUNDS:-5}"); do
  echo "plain-loop round $round"
  "$java" -cp "$landed" dev.keel.bench.PairLoop "landed-$commit" 1 1 2 | tee -a "$out/pair-loop.txt"
  "$java" -cp "$work_tree" dev.keel.bench.PairLoop work-tree 1 1 2 | tee -a "$out/pair-loop.txt"
  "$out/modelexpress_arena" c++ 1 1 2 | grep '^pair ' | tee -a "$out/pair-loop.txt"
done
"$java" -cp "$work_tree" dev.keel.bench.PairLoop --summarize "$out/pair-loop.txt" work-tree "landed-$commit" c++ \
  | tee "$out/pair-loop-summary.txt"

if [ -z "${SKIP_THREADS:-}" ]; then
  threads "landed $commit" landed "$landed"
  threads "work tree" worktree "$work_tree"
  # The same under G1: the harness's options choose SerialGC, which these options override.
  threads "landed $commit, G1" landed-g1 "$landed" "-XX:-UseSerialGC -XX:+UseG1GC"
  threads "work tree, G1" worktree-g1 "$work_tree" "-XX:-UseSerialGC -XX:+UseG1GC"
fi
if [ -z "${SKIP_SCALING:-}" ]; then
  for gc in ${SCALING_GCS:-G1 Parallel Serial}; do
    scaling "landed $commit" landed "$landed" "$gc"
    scaling "work tree" worktree "$work_tree" "$gc"
  done
  grep -H '^(a)\|^(b)\|^(c)' "$out"/device-buffer-*.txt | tee "$out/device-buffer-summary.txt"
fi
pairs "landed $commit" landed "$landed"
pairs "work tree" worktree "$work_tree"
if [ -z "${SKIP_THREADS:-}" ]; then
  "$java" -cp "$work_tree" dev.keel.bench.ThreadCountChart "$out/thread-count.svg" \
    "$out/thread-count-landed.csv" "$out/thread-count-worktree.csv"
fi
