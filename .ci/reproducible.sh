#!/usr/bin/env bash
# Reproducible-build check (issue 14): builds the published artifacts (keel-bom, keel-parent,
# keel-kernel, keel-backends) twice, from two copies of this work tree at different paths,
# at different times, under different time zones and umasks, and compares every jar and SBOM
# the two builds wrote under target/ byte for byte. Exits non-zero on any difference, on a
# failed build, or when a build made no jar to compare.
#
#   bash .ci/reproducible.sh [MAVEN ARGS...]      e.g. -o (offline: Maven then skips the SBOMs),
#                                                 or -Dproject.build.outputTimestamp=x to see it fail
# The work tree's own target/ folders are not touched; only ~/.m2 is read.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
unset JAVA_HOME   # let ./mvnw pick the JDK, as .ci/run does
work=$(mktemp -d "${TMPDIR:-/tmp}/keel-repro.XXXXXX")
trap 'rm -rf "$work"' EXIT

copy_tree() {   # the files git would commit (tracked and new, not ignored), as they are now
  mkdir -p "$1"
  if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$root" && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf -) | tar -C "$1" -xf -
  else
    (cd "$root" && tar --exclude=./.git --exclude='*/target' --exclude=./target -cf - .) | tar -C "$1" -xf -
  fi
}

build() {   # $1: copy, $2: time zone, $3: umask
  local start=$SECONDS
  copy_tree "$work/$1"
  (cd "$work/$1" && umask "$3" && TZ="$2" ./mvnw -B -q -pl bom,kernel,backends -am -DskipTests package "${maven_args[@]}") \
    > "$work/$1.log" 2>&1 || { echo "[reproducible] build $1 failed:" >&2; tail -n 40 "$work/$1.log" >&2; exit 1; }
  echo "[reproducible] build $1 (in $work/$1, TZ=$2, umask $3): $((SECONDS - start)) s"
}

maven_args=("$@")
set --
build a UTC 022
sleep 2   # zip entry times have a resolution of 2 s: make a clock-dependent build show
build b Pacific/Kiritimati 002

outputs=('kernel/target/*.jar' 'backends/target/*.jar' target/bom.json bom/target/bom.json kernel/target/bom.json backends/target/bom.json)   # globbed below, in each copy
compared=0 differ=0 jars=0
for pattern in "${outputs[@]}"; do
  for a in $work/a/$pattern; do
    [ -f "$a" ] || continue
    rel=${a#"$work/a/"}
    b="$work/b/$rel"
    compared=$((compared + 1))
    case "$rel" in *.jar) jars=$((jars + 1)) ;; esac
    if [ ! -f "$b" ]; then
      echo "[reproducible] DIFFERS: $rel exists only in build a"; differ=$((differ + 1)); continue
    fi
    if cmp -s "$a" "$b"; then
      echo "[reproducible] same: $rel $(sha256sum < "$a" | cut -c1-16)"
    else
      differ=$((differ + 1))
      echo "[reproducible] DIFFERS: $rel ($(sha256sum < "$a" | cut -c1-16) vs $(sha256sum < "$b" | cut -c1-16))"
      case "$rel" in
        *.jar) # the entries that differ, a's line (<) above b's (>): name, CRC-32, date, time
               diff <(unzip -v "$a" | awk 'NR>3 && NF==8 {print $8, $7, $5, $6}') \
                    <(unzip -v "$b" | awk 'NR>3 && NF==8 {print $8, $7, $5, $6}') \
                 | grep '^[<>]' | sort -s -k2,2 | head -n 12 | sed 's/^/    /' || true ;;
        *) diff "$a" "$b" | head -n 12 | sed 's/^/    /' || true ;;
      esac
    fi
  done
done
for b in $work/b/{kernel,backends}/target/*.jar; do   # a jar that only the second build made
  [ -f "$b" ] && [ ! -f "$work/a/${b#"$work/b/"}" ] && { echo "[reproducible] DIFFERS: ${b#"$work/b/"} exists only in build b"; differ=$((differ + 1)); }
done
if [ "$jars" -lt 2 ]; then
  echo "[reproducible] FAILED: expected the kernel and backends jars, found $jars jar(s) to compare" >&2
  exit 1
fi
if [ "$differ" -ne 0 ]; then
  echo "[reproducible] FAILED: $differ of $compared files differ between two builds of the same sources" >&2
  exit 1
fi
echo "[reproducible] OK: $compared files ($jars jars) identical in two builds"
