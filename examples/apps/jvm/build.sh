#!/usr/bin/env bash
# Builds the JVM seed servers (pom.xml: jruby-rack in Tomcat, Jetty and Undertow; a Netty server) with Maven,
# which fetches the pinned jars from Maven Central into ~/.m2. Each module's jar and the jars it needs land in
# MODULE/target/lib/ (gitignored), where the launchers beside this script look. Safe to run again: it does
# nothing when every module's output is there and newer than its last change. Needs the `maven` and
# `openjdk-17-jdk-headless` packages; the jruby-rack servers also need `jruby` at run time (Debian's jruby.jar is
# not rebuilt here).
set -euo pipefail
cd "$(dirname "$0")"
modules=(rack tomcat jetty undertow netty)
stamp=target/built
command -v mvn >/dev/null || { echo "jvm/build.sh: mvn is missing: install the maven package" >&2; exit 2; }
built() {
  [ -f "$stamp" ] || return 1
  for module in "${modules[@]:1}"; do [ -d "$module/target/lib" ] || return 1; done
  [ -z "$(find pom.xml "${modules[@]/%//pom.xml}" "${modules[@]/%//src}" -newer "$stamp" -print -quit)" ]
}
if built; then
  echo "jvm/build.sh: the JVM servers are built already ($PWD/*/target/lib)"
  exit 0
fi
# (Debian's Maven 3.8.7 prints bare colour resets even with -B; they are dropped.)
mvn -B -q package 2>&1 | sed 's/\x1b\[0m//g'
mkdir -p target && touch "$stamp"
echo "jvm/build.sh: built ${modules[*]:1} (each in MODULE/target/lib)"
