#!/usr/bin/env bash
# Installs the servers of the example suites from Debian's packages. Safe to run again: it installs only what is
# missing, and says clearly which package could not be had. Services are kept from starting on install (the
# examples start their own servers on free ports), as on machines without systemd's policy file.
#
#     scripts/setup-examples.sh            # as root: install what is missing, build Puma's JVM parser
#     scripts/setup-examples.sh --check    # exit 0 when everything is there, else name what is missing
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
puma_jar="$here/../examples/apps/jruby/lib/puma/puma_http11.jar"

# Ruby app servers and Rails (not the `rails` metapackage: it pulls in webpacker, which the machine's Node.js
# cannot satisfy; ruby-rails is Rails itself), the web servers with mod_lua and mod_passenger, the JVM servers,
# and JRuby.
packages=(
  puma unicorn thin ruby-rack passenger libapache2-mod-passenger ruby-rails ruby-sqlite3
  nginx apache2 tomcat10 jetty9 jruby openjdk-17-jdk-headless
)

missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${1:-}" = --check ]; then
  [ -f "$puma_jar" ] || missing+=("(Puma's JVM parser, $puma_jar)")
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup-examples: missing ${missing[*]}: run scripts/setup-examples.sh as root" >&2
    exit 1
  fi
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "setup-examples: run as root (it calls apt-get install ${packages[*]})" >&2
  exit 2
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-examples: everything is installed (${packages[*]})"
else
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  fi
  apt-get update -qq
  for package in "${missing[@]}"; do
    if ! apt-cache show "$package" >/dev/null 2>&1; then
      echo "setup-examples: Debian has no package '$package' on this machine; the suites that need it will fail to start" >&2
    fi
  done
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  echo "setup-examples: installed ${missing[*]}"
fi
# Puma's HTTP parser for the JVM, which Debian does not package, for examples/jruby.toml.
"$here/../examples/apps/jruby/build-puma-jar.sh"
