#!/usr/bin/env bash
# Installs what the example suites need. Each suite says it in its own [requires] table: Debian's packages, the
# build steps for what Debian lacks (Puma's JVM parser), and the commands that prove each piece really loads
# (`ruby -e 'require "sinatra/base"'`, a configuration test of Apache with its modules), which are what
# --check runs: an installed package whose library does not load is still missing. Safe to run again: it
# installs only what is missing. Services are kept from starting on install (scripts/apt-install.sh: the
# examples start their own servers on free ports). The profilers `--profile` attaches come too: perf from
# Debian, rbspy from crates.io, py-spy from PyPI, async-profiler from Maven Central.
#
#     scripts/setup-examples.sh                    # as root: install the union of every suite's packages, build,
#                                                  # then check every suite (exit 1 when a check fails)
#     scripts/setup-examples.sh --check [SUITE…]   # exit 0 when every check of those suites (default: all)
#                                                  # passes, else name each failed check and its fix
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
requires=(python3 "$root/scripts/requires.py")

# Runs every check of the suites given (default: all); names each failure with the packages that suite needs.
check() {
  local failed=() suite command output checks
  checks="$("${requires[@]}" check "$@")" || return 2
  while IFS=$'\t' read -r suite command; do
    [ -n "$command" ] || continue
    if ! output="$(cd "$(dirname "$suite")" && sh -c "$command" 2>&1 </dev/null)"; then
      echo "setup-examples: $suite: \`$command\` failed: $(printf '%s\n' "$output" | grep -v '^\s*$' | head -1 | cut -c1-300)" >&2
      [[ " ${failed[*]} " == *" $suite "* ]] || failed+=("$suite")
    fi
  done <<< "$checks"
  for suite in "${failed[@]}"; do
    echo "setup-examples: $suite needs $("${requires[@]}" packages "$suite" | tr '\n' ' ')(scripts/setup-examples.sh installs them)" >&2
  done
  [ ${#failed[@]} -eq 0 ]
}

if [ "${1:-}" = --check ]; then
  shift
  check "$@"
  exit
fi
if [ "$(id -u)" != 0 ]; then
  echo "setup-examples: run as root (it calls apt-get install $("${requires[@]}" packages | tr '\n' ' '))" >&2
  exit 2
fi

mapfile -t packages < <("${requires[@]}" packages)
packages+=(linux-perf) # perf, the profiler `shootout run --profile` attaches to native servers
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q '^install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-examples: every package is installed (${packages[*]})"
else
  # Redmine's package would ask which database to configure: none (each suite runs its own PostgreSQL).
  printf '%s\n' 'redmine redmine/instances/default/dbconfig-install boolean false' \
    'redmine redmine/instances/default/database-type select pgsql' | debconf-set-selections
  apt-get update -qq
  for package in "${missing[@]}"; do
    if ! apt-cache show "$package" >/dev/null 2>&1; then
      echo "setup-examples: Debian has no package '$package' on this machine; the suites that need it will fail to start" >&2
    fi
  done
  bash "$root/scripts/apt-install.sh" "${missing[@]}"
  echo "setup-examples: installed ${missing[*]}"
fi
builds="$("${requires[@]}" build)"
while IFS=$'\t' read -r suite command; do
  [ -z "$command" ] || (cd "$(dirname "$suite")" && sh -c "$command")
done <<< "$builds"
# The profilers `shootout run --profile` attaches to Ruby and Python servers (README: "Where each server's CPU
# went"): rbspy from crates.io into cargo's bin folder, py-spy's binary wheel from PyPI beside python3's pip.
if ! command -v rbspy >/dev/null; then
  echo "setup-examples: installing rbspy from crates.io (about 2 minutes)"
  cargo install rbspy --locked --quiet
fi
if ! command -v py-spy >/dev/null; then
  echo "setup-examples: installing py-spy from PyPI"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore py-spy
  if command -v pyenv >/dev/null; then pyenv rehash; fi
fi
# async-profiler, loaded into JVM servers through jcmd: Maven Central's jar holds its library for each platform;
# the one for this machine goes where shootout looks first (/usr/local/lib/libasyncProfiler.so).
async_profiler=/usr/local/lib/libasyncProfiler.so
if [ ! -f "$async_profiler" ]; then
  version=4.6
  case "$(uname -m)" in aarch64) platform=linux-arm64 ;; *) platform=linux-x64 ;; esac
  echo "setup-examples: installing async-profiler $version from Maven Central"
  jar_dir="$(mktemp -d)"
  (cd "$jar_dir" && mvn -B -q dependency:copy -Dartifact="tools.profiler:async-profiler:$version" -DoutputDirectory=. 2>&1 | sed 's/\x1b\[0m//g')
  python3 -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
    "$jar_dir/async-profiler-$version.jar" "$platform/libasyncProfiler.so" "$async_profiler"
  rm -rf "$jar_dir"
fi
if check; then
  echo "setup-examples: every example suite's checks pass"
else
  echo "setup-examples: some checks failed after installing: see above" >&2
  exit 1
fi
