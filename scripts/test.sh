#!/usr/bin/env bash
# The whole test suite, as the README gives it: formatting, lints with warnings denied, then every unit and
# end-to-end test of the workspace (the end-to-end tests drive the real `shootout` binary over loopback).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
