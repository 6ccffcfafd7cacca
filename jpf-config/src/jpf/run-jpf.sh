#!/usr/bin/env bash
# Runs every JPF application configuration in this folder with RunJPF and fails unless each one
# reports "no errors detected". Called by the jpf profile of jpf-config/pom.xml:
#   run-jpf.sh <jpf-core folder> <java executable>
set -u
jpf_home=$1
java=${2:-java}
runner="$jpf_home/build/RunJPF.jar"
if [ ! -f "$runner" ]; then
  echo "jpf.home=$jpf_home has no build/RunJPF.jar: point -Djpf.home at a built jpf-core" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
logs="$here/../../target/jpf"
mkdir -p "$logs"
failed=0
for config in "$here"/*.jpf; do
  name=$(basename "$config" .jpf)
  echo "== JPF: $name"
  "$java" -jar "$runner" "$config" > "$logs/$name.log" 2>&1
  if grep -q "no errors detected" "$logs/$name.log"; then
    echo "   no errors detected ($(grep -m1 'elapsed time' "$logs/$name.log" | tr -s ' '))"
  else
    echo "   FAILED: see $logs/$name.log"
    grep -m5 -E "^error|gov.nasa.jpf" "$logs/$name.log" | sed 's/^/   /'
    failed=1
  fi
done
exit $failed
