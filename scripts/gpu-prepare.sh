#!/usr/bin/env bash
# Builds what the GPU machine (no Java) needs to run scripts/gpu-check.sh, as two folders, each under the device
# tool's carry limit (64 MiB per call), carried in two calls while the machine stays warm:
#   .gpu-runtime/     jre.tar.xz; the first call runs `scripts/gpu-check.sh --unpack-runtime`, which unpacks it into
#                     .gpu-runtime/jre (ignored by git, so it stays on the machine for the next call)
#   .gpu-carry/       everything else; the second call runs `scripts/gpu-check.sh`
#
#   scripts/gpu-prepare.sh            build the project (offline Maven), then assemble and size the carry folder
#   SKIP_BUILD=1 scripts/gpu-prepare.sh   reuse the jars already built
#
# Contents (this script fails when either folder is above LIMIT_MIB):
#   .gpu-runtime/jre.tar.xz        a jlink'ed Java 25 runtime: the modules jdeps finds in the jars plus the logging/management
#                     ones loaded reflectively, --compress=zip-0 (xz compresses better) --strip-debug, libjvm stripped
#   lib/              http-admin's runtime class path (selene burst) + the http-admin and bench jars; jcuda-natives
#                     slimmed to the one library JCuda's driver binding loads (libJCudaDriver)
#   test-classes/     transport's compiled tests (the DeviceCopier contract and the JCuda tests)
#   junit-platform-console-standalone.jar   the JUnit launcher
#   MANIFEST.txt      what was packed, from which commit
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRY="$ROOT/.gpu-carry"
RUNTIME="$ROOT/.gpu-runtime"
LIMIT_MIB="${LIMIT_MIB:-60}"
JUNIT_CONSOLE_VERSION="${JUNIT_CONSOLE_VERSION:-1.14.1}"
VERSION=0.1.0-SNAPSHOT

java_major() {
  [ -x "$1/bin/java" ] || return 0
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p' | head -1
}
find_jdk() {
  if [ -n "${JAVA_HOME:-}" ] && [ "$(java_major "$JAVA_HOME")" -ge 25 ] 2>/dev/null && [ -x "$JAVA_HOME/bin/jlink" ]; then
    echo "$JAVA_HOME"; return 0
  fi
  local d v
  for d in /usr/lib/jvm/* /opt/java/* /opt/jdk* "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/*; do
    [ -x "$d/bin/jlink" ] || continue
    v="$(java_major "$d")"
    if [ -n "$v" ] && [ "$v" -ge 25 ]; then echo "$d"; return 0; fi
  done
  return 1
}
JDK="$(find_jdk)" || { echo "gpu-prepare: no JDK 25 with jlink found; install temurin-25-jdk or set JAVA_HOME" >&2; exit 2; }
export JAVA_HOME="$JDK"
echo "gpu-prepare: JDK $JDK"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "gpu-prepare: building (offline, tests compiled but not run)..."
  MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow" "$ROOT/mvnw" -B -q -o -f "$ROOT/pom.xml" install -DskipTests
fi

APP_JAR="$ROOT/http-admin/target/selene-http-admin-$VERSION.jar"
BENCH_JAR="$ROOT/bench/target/selene-bench-$VERSION.jar"
for f in "$APP_JAR" "$BENCH_JAR" "$ROOT/http-admin/target/lib" "$ROOT/transport/target/test-classes"; do
  [ -e "$f" ] || { echo "gpu-prepare: $f is missing; run without SKIP_BUILD=1" >&2; exit 2; }
done
JUNIT_JAR="$HOME/.m2/repository/org/junit/platform/junit-platform-console-standalone/$JUNIT_CONSOLE_VERSION/junit-platform-console-standalone-$JUNIT_CONSOLE_VERSION.jar"
if [ ! -f "$JUNIT_JAR" ]; then
  "$ROOT/mvnw" -B -q -f "$ROOT/pom.xml" dependency:get \
    -Dartifact="org.junit.platform:junit-platform-console-standalone:$JUNIT_CONSOLE_VERSION" >&2
fi

rm -rf "$CARRY" "$RUNTIME"
mkdir -p "$CARRY/lib" "$CARRY/test-classes" "$RUNTIME"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# Class path: http-admin's runtime dependencies (includes transport, actors, engine, jcuda) + the app and bench jars.
cp "$ROOT"/http-admin/target/lib/*.jar "$CARRY/lib/"
cp "$APP_JAR" "$BENCH_JAR" "$CARRY/lib/"
NATIVES="$(ls "$CARRY"/lib/jcuda-natives-*-linux-x86_64.jar)"
( cd "$WORK" && mkdir natives && cd natives \
  && "$JDK/bin/jar" xf "$NATIVES" && ls lib/libJCudaDriver-*.so >/dev/null \
  && find lib -type f ! -name 'libJCudaDriver-*' -delete \
  && "$JDK/bin/jar" cfm "$WORK/natives.jar" META-INF/MANIFEST.MF lib )
mv "$WORK/natives.jar" "$NATIVES"

cp -r "$ROOT"/transport/target/test-classes/. "$CARRY/test-classes/"
cp "$JUNIT_JAR" "$CARRY/junit-platform-console-standalone.jar"

# Runtime: every module jdeps sees the jars use, plus modules used only reflectively (logging, JMX, XML config).
# The core's jars are Java modules that require Pekko and Scala by module name; here everything is on the class
# path, so jdeps reads their classes without the descriptors (it would look for those modules and stop).
SCAN=()
mkdir -p "$WORK/scan"
for j in "$CARRY"/lib/*.jar; do
  if [[ "$(basename "$j")" == selene-* ]] && "$JDK/bin/jar" tf "$j" | grep -qx module-info.class; then
    d="$WORK/scan/$(basename "$j" .jar)"
    mkdir -p "$d" && (cd "$d" && "$JDK/bin/jar" xf "$j") && rm -f "$d/module-info.class"
    SCAN+=("$d")
  else
    SCAN+=("$j")
  fi
done
CP="$(printf '%s:' "${SCAN[@]}")"
MODULES="$("$JDK/bin/jdeps" --multi-release 25 --print-module-deps --ignore-missing-deps -q -cp "$CP" \
  "${SCAN[@]}" "$CARRY/junit-platform-console-standalone.jar" 2>/dev/null | tail -1)"
MODULES="$MODULES,java.base,java.logging,java.management,java.naming,java.xml,jdk.management,jdk.unsupported"
MODULES="$(echo "$MODULES" | tr ',' '\n' | grep -v '^$' | sort -u | paste -sd, -)"
echo "gpu-prepare: jlink modules: $MODULES"
"$JDK/bin/jlink" --add-modules "$MODULES" --compress=zip-0 --strip-debug --no-header-files --no-man-pages \
  --output "$WORK/jre"
if command -v strip >/dev/null 2>&1; then
  strip --strip-unneeded "$WORK"/jre/lib/server/libjvm.so "$WORK"/jre/lib/*.so 2>/dev/null || true
fi
"$WORK/jre/bin/java" -version 2>&1 | head -1
echo "gpu-prepare: compressing the runtime (xz, about a minute)..."
tar -C "$WORK" -cJf "$RUNTIME/jre.tar.xz" jre

{
  echo "selene gpu carry, prepared $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown) (working tree may differ)"
  echo "jdk: $("$JDK/bin/java" -version 2>&1 | head -1)"
  echo "modules: $MODULES"
  echo "lib:"; ls -1 "$CARRY/lib" | sed 's/^/  /'
} > "$CARRY/MANIFEST.txt"

TOO_LARGE=0
for dir in "$RUNTIME" "$CARRY"; do
  BYTES="$(du -sb "$dir" | cut -f1)"
  MIB=$(( (BYTES + 1048575) / 1048576 ))
  du -sh "$dir"/* | sed 's/^/  /'
  echo "gpu-prepare: $(basename "$dir") is $MIB MiB ($BYTES bytes; limit $LIMIT_MIB MiB per carry)"
  [ "$MIB" -gt "$LIMIT_MIB" ] && TOO_LARGE=1
done
if [ "$TOO_LARGE" = 1 ]; then
  echo "gpu-prepare: too large for the device carry; see docs/gpu.md (trim lib/ or the runtime)" >&2
  exit 1
fi
