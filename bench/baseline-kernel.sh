#!/usr/bin/env bash
# bench/baseline-kernel.sh COMMIT OUTJAR
#
# Builds the kernel of git commit COMMIT into OUTJAR without touching the work tree: the commit's
# kernel/src/main/java (read by git archive) is compiled in a temporary directory for Java 17, as
# the kernel module is, and jarred. The kernel has no dependencies; its module-info.java (requires
# jdk.jfr) is compiled with it where the commit has one, and javac then builds the module; without
# one the same sources compile on the class path, where jdk.jfr is a default root module. The jar
# works on a class path either way (a class path ignores module-info.class).
# JDK: the one ./mvnw uses (.mvn/select-jdk.sh).
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 COMMIT OUTJAR" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
commit="$1"
out="$(realpath -m "$2")"
# shellcheck source=../.mvn/select-jdk.sh
. "$root/.mvn/select-jdk.sh"
set +f   # select-jdk.sh leaves globbing off, as mvnw wants it

tmp="$(mktemp -d "${TMPDIR:-/tmp}/keel-baseline.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive "$commit" kernel/src/main/java | tar -x -C "$tmp"
find "$tmp/kernel/src/main/java" -name '*.java' > "$tmp/sources"
# Kernels from issue 14 on carry JSpecify annotations (compile-time only, `requires static
# org.jspecify`): compile with the jar the build uses, from the local Maven repository.
annotations=()
version="$(git -C "$root" show "$commit:pom.xml" | sed -n 's:.*<jspecify.version>\(.*\)</jspecify.version>.*:\1:p')"
if [ -n "$version" ]; then
  jspecify="$HOME/.m2/repository/org/jspecify/jspecify/$version/jspecify-$version.jar"
  [ -f "$jspecify" ] || { echo "$0: $jspecify is missing (./mvnw verify fetches it)" >&2; exit 1; }
  annotations=(--module-path "$jspecify" --class-path "$jspecify")
fi
# -g and UTF-8 as the Maven build compiles (maven-compiler-plugin's defaults).
"$JAVA_HOME/bin/javac" --release 17 -g -encoding UTF-8 "${annotations[@]}" -d "$tmp/classes" "@$tmp/sources"
mkdir -p "$(dirname "$out")"
"$JAVA_HOME/bin/jar" --create --file "$out" -C "$tmp/classes" .
echo "kernel of $(git -C "$root" rev-parse --short "$commit") -> $out"
