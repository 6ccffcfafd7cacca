#!/usr/bin/env bash
# Builds Java PathFinder's core (jpf-core) for Keel's JPF gate, at the commit the gate was
# measured with, the way jpf-core's build.gradle lays it out, with a JDK 17's javac and jar
# (no Gradle, nothing downloaded but the sources), then prints the JPF_HOME to set.
#
#   jpf-config/build-jpf-core.sh [SOURCE [DIR]]
#
# SOURCE: where to clone jpf-core from, a URL or a local git directory (bare or not; default
# https://github.com/javapathfinder/jpf-core). DIR: where the build goes (default
# ~/.cache/keel/jpf-core-<commit>). The commit is KEEL_JPF_CORE_COMMIT (default the pinned one
# below, on jpf-core's java-17 branch); the build stops if SOURCE does not have it. The sources
# are that commit's tree (git archive), never a branch head. The JDK 17 is found by
# find-jdk17.sh (JPF_JAVA, or /usr/lib/jvm).
#
# Layout (build.gradle and gradle/source-sets.gradle of that commit): source sets annotations,
# main, peers, classes (src/classes/gov and org, with --patch-module for the model modules) and
# modules (src/classes/modules, with --module-source-path); examples and tests are not built.
#   build/jpf.jar             main + peers + annotations + the org/junit model classes
#   build/jpf-classes.jar     classes (with modules/java.base, ...) + annotations + six main classes
#   build/jpf-annotations.jar annotations
#   build/RunJPF.jar          the launcher classes, Main-Class gov.nasa.jpf.tool.RunJPF
# and jpf.properties and LICENSE-2.0.txt of that commit beside build/. Entry times are the
# commit's, so two builds of one commit give the same jars.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pinned=7ea25de453111be77d09e12eb196fecf2dc6d365
commit=${KEEL_JPF_CORE_COMMIT:-$pinned}
source=${1:-https://github.com/javapathfinder/jpf-core}
out=${2:-${HOME}/.cache/keel/jpf-core-${commit:0:7}}

jdk=$("$here/find-jdk17.sh")
javac=("$jdk/bin/javac" -nowarn -encoding UTF-8)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "[jpf-core] cloning $source"
git clone --quiet --bare "$source" "$work/git"
if ! git --git-dir="$work/git" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "[jpf-core] $source has no commit $commit" >&2
  exit 1
fi
mkdir -p "$work/src"
git --git-dir="$work/git" archive --format=tar "$commit" | tar -x -C "$work/src"
date=$(git --git-dir="$work/git" log -1 --format=%cI "$commit")
cd "$work/src"
b=$work/build

sources() { find "$@" -name '*.java' | LC_ALL=C sort; }
# --patch-module for each model module the commit has (java.base, java.logging, java.xml).
patches=()
for m in src/classes/modules/*/; do
  m=${m%/}
  patches+=(--patch-module "$(basename "$m")=$m")
done

echo "[jpf-core] compiling $commit with $jdk"
"${javac[@]}" -d "$b/annotations" $(sources src/annotations)
"${javac[@]}" -d "$b/main" -cp "$b/annotations" $(sources src/main)
"${javac[@]}" -d "$b/peers" -cp "$b/main:$b/annotations" \
  --add-exports java.base/jdk.internal.access=ALL-UNNAMED \
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED $(sources src/peers)
"${javac[@]}" -d "$b/classes" -cp "$b/main:$b/annotations" "${patches[@]}" \
  --add-exports java.base/sun.net.www.protocol.http=ALL-UNNAMED \
  --add-reads java.base=ALL-UNNAMED $(sources src/classes/gov src/classes/org)
"${javac[@]}" -d "$b/classes/modules" -cp "$b/annotations:$b/classes:$b/main" \
  --module-source-path src/classes/modules "${patches[@]}" \
  --add-exports java.base/sun.net.www.protocol.http=ALL-UNNAMED \
  --add-reads java.base=ALL-UNNAMED $(sources src/classes/modules)
# build-resources.gradle: the revision, for JPF's reports (Reporter reads gov/nasa/jpf/.version).
echo "$commit" > "$b/main/gov/nasa/jpf/.version"

# pick DIR FILE...: a folder holding those of the files that DIR has (paths relative to it),
# as a Gradle include does: missing ones are left out (TestJPFHelper and JPFTargetException,
# which build.gradle names, are not in the pinned commit).
pick() {
  local from=$1 to f
  to=$(mktemp -d "$work/pick.XXXX")
  shift
  for f in "$@"; do
    if [ -f "$from/$f" ]; then
      (cd "$from" && cp --parents "$f" "$to")
    fi
  done
  echo "$to"
}
junit=$(pick "$b/classes" $(cd "$b/classes" && ls org/junit/*.class))
shell=$(pick "$b/main" gov/nasa/jpf/JPFShell.class gov/nasa/jpf/vm/Verify.class gov/nasa/jpf/util/TypeRef.class \
  gov/nasa/jpf/util/test/TestJPF.class gov/nasa/jpf/util/test/TestMultiProcessJPF.class \
  gov/nasa/jpf/util/test/TestJPFHelper.class)
launcher=$(pick "$b/main" gov/nasa/jpf/tool/Run.class gov/nasa/jpf/tool/RunJPF.class gov/nasa/jpf/Config.class \
  gov/nasa/jpf/ConfigChangeListener.class 'gov/nasa/jpf/Config$MissingRequiredKeyException.class' \
  gov/nasa/jpf/JPFClassLoader.class gov/nasa/jpf/JPFShell.class gov/nasa/jpf/JPFException.class \
  gov/nasa/jpf/JPFConfigException.class gov/nasa/jpf/JPFTargetException.class \
  gov/nasa/jpf/util/JPFSiteUtils.class gov/nasa/jpf/util/FileUtils.class \
  gov/nasa/jpf/util/StringMatcher.class gov/nasa/jpf/util/Pair.class)
jar=("$jdk/bin/jar" --create --date="$date")
rm -rf "$out/build"
mkdir -p "$out/build"
"${jar[@]}" --file "$out/build/jpf.jar" -C "$b/main" . -C "$b/peers" . -C "$b/annotations" . -C "$junit" .
"${jar[@]}" --file "$out/build/jpf-classes.jar" -C "$b/classes" . -C "$b/annotations" . -C "$shell" .
"${jar[@]}" --file "$out/build/jpf-annotations.jar" -C "$b/annotations" .
"${jar[@]}" --file "$out/build/RunJPF.jar" --main-class gov.nasa.jpf.tool.RunJPF -C "$launcher" .
cp jpf.properties LICENSE-2.0.txt "$out/"
cat > "$out/README.md" <<EOF
# jpf-core for Keel's JPF gate

Java PathFinder core, commit \`$commit\` of $source, unmodified (Apache License 2.0,
\`LICENSE-2.0.txt\`), built by Keel's \`jpf-config/build-jpf-core.sh\` with \`javac\` and \`jar\` of
$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.runtime\.version = //p' | head -n 1)
the way its \`build.gradle\` lays it out (annotations, main, peers, classes, modules).
EOF
echo "[jpf-core] built $commit into $out"
echo "export JPF_HOME=$out"
