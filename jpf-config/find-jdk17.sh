#!/usr/bin/env bash
# Prints the home of a JDK 17, the JDK that jpf-core's java-17 branch runs on and is built with,
# found the way ./mvnw finds its JDK 22+ (.mvn/select-jdk.sh): JPF_JAVA if set (a JDK 17's
# bin/java; anything else is an error), otherwise the first JDK 17 under /usr/lib/jvm (links
# skipped). With none, says on stderr what it looked at and exits 1. JpfGate looks the same way.
set -euo pipefail
feature() {   # feature release of the JDK at $1 from its release file (e.g. 17), or nothing
  [ -x "$1/bin/java" ] && [ -f "$1/release" ] || return 0
  sed -n 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$1/release" | head -n 1
}
if [ -n "${JPF_JAVA:-}" ]; then
  home=$(dirname "$(dirname "$JPF_JAVA")")
  v=$(feature "$home")
  if [ "$v" != 17 ]; then
    echo "[jpf] JPF_JAVA=$JPF_JAVA is not the java of a JDK 17 (Java ${v:-not found there})." >&2
    exit 1
  fi
  echo "$home"
  exit 0
fi
looked=""
for d in /usr/lib/jvm/*; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  v=$(feature "$d")
  if [ "$v" = 17 ]; then
    echo "$d"
    exit 0
  fi
  looked="$looked $d (Java ${v:-?})"
done
echo "[jpf] Java PathFinder (jpf-core, java-17 branch) needs a JDK 17; none found." >&2
echo "[jpf] Looked at: JPF_JAVA (unset) and /usr/lib/jvm:${looked:- nothing there}" >&2
echo "[jpf] Install one (e.g. Debian's openjdk-17-jdk) or set JPF_JAVA (or -Djpf.java) to its bin/java." >&2
exit 1
