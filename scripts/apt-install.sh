#!/usr/bin/env bash
# Installs Debian packages for shootout's scripts (test.sh, setup-examples.sh) without starting any daemon they
# ship: the tests and example suites start their own PostgreSQL, sshd, dockerd and web servers, each on a free
# port in a folder of its own. While apt runs, /usr/sbin/policy-rc.d (exit 101) keeps the packages' services
# from starting; when it was not there before, it is removed again however the install ends, so the machine's
# later installs start their services as usual. Needs root.
#
#     scripts/apt-install.sh PACKAGE…
set -euo pipefail
[ $# -gt 0 ] || exit 0
if [ "$(id -u)" != 0 ]; then
  echo "apt-install: installing $* needs root (apt-get install $*)" >&2
  exit 2
fi
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  trap 'rm -f "$policy"' EXIT
  printf '#!/bin/sh\nexit 101\n' > "$policy"
  chmod +x "$policy"
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
