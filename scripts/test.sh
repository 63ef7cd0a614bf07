#!/usr/bin/env bash
# The whole test suite, as the README gives it: formatting, lints with warnings denied, then every unit and
# end-to-end test of the workspace (the end-to-end tests drive the real `shootout` binary over loopback, and open
# the HTML report in a headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

# What the tests need from Debian's packages: Chromium (the report test) and procps (pgrep, to prove no server
# process is left behind). Installed only when missing, and only where we may (root, apt).
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v pgrep >/dev/null || missing+=(procps)
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
