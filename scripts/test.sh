#!/usr/bin/env bash
# The whole test suite, as the README gives it: formatting, lints with warnings denied, every unit and
# end-to-end test of the workspace (the end-to-end tests drive the real `shootout` binary over loopback, and open
# the HTML report in a headless Chromium), then, where the example servers are installed
# (scripts/setup-examples.sh), a smoke run of every example suite on its real servers.
set -euo pipefail
cd "$(dirname "$0")/.."

# What the tests need from Debian's packages: Chromium (the report test), procps (pgrep, to prove no server
# process is left behind), and openssh-server and iproute2 (the ssh agents test runs a real sshd in each of three
# network namespaces; under CI it must run). Installed only when missing, and only where we may (root, apt).
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v pgrep >/dev/null || missing+=(procps)
[ -x /usr/sbin/sshd ] && command -v ssh >/dev/null || missing+=(openssh-server)
command -v ip >/dev/null || missing+=(iproute2)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${missing[*]} for the tests" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "the tests need: ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked

# Under CI (CI=true, where .ci/run has run setup-examples.sh first) every example must load and run; elsewhere a
# machine without the example servers skips their smoke runs, and says so.
if bash scripts/setup-examples.sh --check; then
  bash scripts/smoke-examples.sh
elif [ -n "${CI:-}" ]; then
  echo "test: the example suites' checks failed under CI (above): scripts/setup-examples.sh must make them pass" >&2
  exit 1
else
  echo "test: the example suites' smoke runs were skipped: their servers are not installed (scripts/setup-examples.sh)" >&2
fi
