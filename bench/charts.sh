#!/usr/bin/env bash
# bench/charts.sh [pressure|host|all]
#
# Draws the charts of docs/performance.md from a run on this machine and copies them, with the
# figures they were drawn from, to docs/img/:
#   pressure  PressureHarness (about 7 minutes on 2 cores): docs/img/pressure.{svg,csv,txt}
#   host      JMH's HostPathBenchmark and KernelShareBenchmark (about 4 minutes), then HostCharts:
#             docs/img/host-paths.svg, docs/img/kernel-share.svg, docs/img/host.csv
#   all       both (the default)
# Builds the work tree's kernel, backends and bench first. Each chart names the CPU and JDK it ran
# on; docs/performance.md's caption under each chart must name the same run (PerformanceChartsTest).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
what="${1:-all}"
# shellcheck source=../.mvn/select-jdk.sh
. "$root/.mvn/select-jdk.sh"
set +f   # select-jdk.sh leaves globbing off, as mvnw wants it
java="$JAVA_HOME/bin/java"
./mvnw -q -B -Pbench -pl kernel,backends,bench package -Dmaven.test.skip=true
cp="bench/target/classes:$(cat bench/target/classpath.txt)"
out=bench/target/charts
mkdir -p "$out" docs/img
if [ "$what" = pressure ] || [ "$what" = all ]; then
  "$java" -cp "$cp" dev.keel.bench.PressureHarness "$out"
  cp "$out/pressure.svg" "$out/pressure.csv" "$out/pressure.txt" docs/img/
fi
if [ "$what" = host ] || [ "$what" = all ]; then
  "$java" -cp "$cp" org.openjdk.jmh.Main 'HostPathBenchmark|KernelShareBenchmark' \
    -f 1 -wi 3 -w 1s -i 5 -r 1s -rf csv -rff "$out/host.csv"
  "$java" -cp "$cp" dev.keel.bench.HostCharts "$out" "$out/host.csv"
  cp "$out/host-paths.svg" "$out/kernel-share.svg" "$out/host.csv" docs/img/
fi
echo "charts and their figures in docs/img/"
