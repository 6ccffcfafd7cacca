#!/usr/bin/env bash
# Consumer check (issue 14): `./mvnw install` of a copy of this work tree into a fresh, empty
# local repository, then examples/consumer (a standalone project: imports keel-bom, depends
# on keel-kernel) built and run offline (-o) against that repository alone for Keel's
# artifacts. The Maven plugins come from ~/.m2 as a read-only tail (Maven 3.9's
# maven.repo.local.tail), where building Keel put them. Fails if an artifact a user needs is
# missing from the install, or if the kernel the consumer ran came from anywhere else.
#
#   bash .ci/consumer.sh        (KEEL_M2_TAIL=DIR: the local repository with the plugins)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
unset JAVA_HOME
tail_repo=${KEEL_M2_TAIL:-$HOME/.m2/repository}
work=$(mktemp -d "${TMPDIR:-/tmp}/keel-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
repo="$work/repository"
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' "$root/pom.xml" | head -n 1)
[ -n "$version" ] || { echo "[consumer] no <version> in $root/pom.xml" >&2; exit 1; }
m2=(-B "-Dmaven.repo.local=$repo" "-Dmaven.repo.local.tail=$tail_repo")

# 1. Install what a user depends on (and the parent POM they inherit through), from a pristine
#    copy, so that the work tree's target/ folders are left alone. Online, so that the SBOMs are
#    made and installed too (the CycloneDX goal needs online mode); everything is already cached.
start=$SECONDS
mkdir -p "$work/src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$root" && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf -) | tar -C "$work/src" -xf -
else
  (cd "$root" && tar --exclude=./.git --exclude='*/target' --exclude=./target -cf - .) | tar -C "$work/src" -xf -
fi
(cd "$work/src" && ./mvnw "${m2[@]}" -q -pl bom,kernel,backends -am -DskipTests install) > "$work/install.log" 2>&1 \
  || { echo "[consumer] ./mvnw install failed:" >&2; tail -n 40 "$work/install.log" >&2; exit 1; }
echo "[consumer] ./mvnw install -pl bom,kernel,backends -am into $repo: $((SECONDS - start)) s"

missing=0
for f in keel-parent/$version/keel-parent-$version.pom \
         keel-bom/$version/keel-bom-$version.pom \
         keel-kernel/$version/keel-kernel-$version.pom keel-kernel/$version/keel-kernel-$version.jar \
         keel-backends/$version/keel-backends-$version.pom keel-backends/$version/keel-backends-$version.jar; do
  [ -f "$repo/dev/keel/$f" ] || { echo "[consumer] MISSING from the install: dev/keel/$f" >&2; missing=1; }
done
for jar in "$work"/src/kernel/target/keel-kernel-*.jar "$work"/src/backends/target/keel-backends-*.jar; do
  # every jar the build made (sources and javadoc jars too, where the modules make them) is installed
  [ -f "$jar" ] || continue
  name=$(basename "$jar"); artifact=${name%%-"$version"*}
  [ -f "$repo/dev/keel/$artifact/$version/$name" ] || { echo "[consumer] MISSING from the install: dev/keel/$artifact/$version/$name" >&2; missing=1; }
done
[ "$missing" -eq 0 ] || exit 1
echo "[consumer] installed:"
(cd "$repo/dev/keel" && find . -type f \( -name '*.jar' -o -name '*.pom' -o -name '*.json' -o -name '*.xml' \) ! -name 'maven-metadata*' ! -name '_remote*' | sort | sed 's:^\./:  :')

# 2. The consumer, offline, against that repository.
start=$SECONDS
out="$work/consumer.log"
"$root/mvnw" "${m2[@]}" -o -f "$root/examples/consumer/pom.xml" "-Dkeel.version=$version" \
    "-Dkeel.consumer.target=$work/consumer-target" clean verify > "$out" 2>&1 \
  || { echo "[consumer] the consumer build failed:" >&2; tail -n 60 "$out" >&2; exit 1; }
grep '^consumer: ' "$out" | sed 's/^/[consumer] /'
runs=$(grep -c '^consumer: OK' "$out" || true)
[ "$runs" -eq 2 ] || { echo "[consumer] FAILED: expected 2 runs that say OK, got $runs" >&2; tail -n 60 "$out" >&2; exit 1; }
if grep '^consumer: OK' "$out" | grep -v -q "kernel from file:$repo/dev/keel/keel-kernel/$version/"; then
  echo "[consumer] FAILED: the kernel was not loaded from the fresh install in $repo" >&2; exit 1
fi
echo "[consumer] OK: examples/consumer built offline and ran against the installed artifacts: $((SECONDS - start)) s"
