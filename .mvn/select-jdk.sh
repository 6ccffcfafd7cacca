# Sourced by ./mvnw before anything else. Keel builds with JDK 22 or newer (the
# backends use the final java.lang.foreign API; JDK 25 is what CI uses).
# - JAVA_HOME set: it must point at such a JDK, or the build stops here.
# - JAVA_HOME unset: the newest JDK 22+ under /usr/lib/jvm is used.
set +f   # mvnw runs with globbing off; the search below needs it
keel_required=22
keel_feature() {   # feature release of the JDK at $1 (e.g. 25), or nothing
  [ -x "$1/bin/java" ] || return 0
  "$1/bin/java" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = \([0-9][0-9]*\).*/\1/p' | head -n 1
}
keel_fail() {
  echo "[keel] This build needs JDK $keel_required or newer (JDK 25 recommended)." >&2
  echo "[keel] Looked at: $1" >&2
  echo "[keel] Install one (e.g. Temurin 25) and set JAVA_HOME to it, or unset JAVA_HOME to search /usr/lib/jvm." >&2
  exit 1
}
if [ -n "${JAVA_HOME:-}" ]; then
  keel_v=$(keel_feature "$JAVA_HOME")
  if [ -z "$keel_v" ] || [ "$keel_v" -lt "$keel_required" ]; then
    keel_fail "JAVA_HOME=$JAVA_HOME (Java ${keel_v:-not found there})"
  fi
else
  keel_best=""; keel_bestv=0; keel_looked=""
  for keel_d in /usr/lib/jvm/*; do
    [ -d "$keel_d" ] && [ ! -L "$keel_d" ] || continue
    keel_v=$(keel_feature "$keel_d")
    keel_looked="$keel_looked $keel_d (Java ${keel_v:-?})"
    if [ -n "$keel_v" ] && [ "$keel_v" -ge "$keel_required" ] && [ "$keel_v" -gt "$keel_bestv" ]; then
      keel_best="$keel_d"; keel_bestv="$keel_v"
    fi
  done
  [ -n "$keel_best" ] || keel_fail "JAVA_HOME (unset) and /usr/lib/jvm:${keel_looked:- nothing there}"
  export JAVA_HOME="$keel_best"
fi
set -f
unset keel_required keel_v keel_best keel_bestv keel_looked keel_d
