#!/usr/bin/env bash
# Builds the one piece Puma lacks to run under Debian's JRuby: its HTTP parser for the JVM, puma_http11.jar.
# Debian's `puma` package ships only the parser compiled for MRI (a C extension), so this fetches Puma's source
# package from Debian's own source archive, compiles its four Java files against JRuby and writes
# lib/puma/puma_http11.jar here. Safe to run again: it does nothing once the jar exists. Needs javac and jar
# (OpenJDK) and the `jruby` and `puma` packages.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar_file="$here/lib/puma/puma_http11.jar"
if [ -f "$jar_file" ]; then
  echo "build-puma-jar: $jar_file is there already"
  exit 0
fi
for tool in javac jar; do
  command -v "$tool" >/dev/null || { echo "build-puma-jar: $tool is missing: install openjdk-17-jdk-headless" >&2; exit 2; }
done
jruby_jar=/usr/share/jruby/lib/jruby.jar
[ -f "$jruby_jar" ] || { echo "build-puma-jar: $jruby_jar is missing: install the jruby package" >&2; exit 2; }
version="$(dpkg-query -W -f '${Version}' puma 2>/dev/null | sed 's/-.*//')"
[ -n "$version" ] || { echo "build-puma-jar: the puma package is not installed" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A private source list, so the machine's own apt configuration is left as it is.
echo "deb-src http://deb.debian.org/debian $(. /etc/os-release && echo "$VERSION_CODENAME") main" > "$work/sources.list"
mkdir -p "$work/lists/partial"
apt_private=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/nonexistent
  -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root)
apt-get "${apt_private[@]}" -qq update
(cd "$work" && apt-get "${apt_private[@]}" -qq source --download-only "puma=$(dpkg-query -W -f '${Version}' puma)" 2>/dev/null ||
  apt-get "${apt_private[@]}" -qq source --download-only puma)
tar xzf "$work"/puma_"$version".orig.tar.gz -C "$work"
src="$(dirname "$(find "$work" -path '*ext/puma_http11/PumaHttp11Service.java' -not -path '*no_ssl*' | head -1)")"
mkdir -p "$work/classes" "$(dirname "$jar_file")"
javac -nowarn -source 8 -target 8 -cp "$jruby_jar" -d "$work/classes" \
  "$src/PumaHttp11Service.java" "$src"/org/jruby/puma/*.java 2>&1 | grep -v '^warning\|^Note:\|^[0-9]* warning' || true
jar cf "$jar_file" -C "$work/classes" .
echo "build-puma-jar: wrote $jar_file (Puma $version's parser for the JVM)"
