#!/usr/bin/env bash
# The README's first command: builds shootout and runs a real shootout, examples/target-delays.toml: three
# built-in `shootout target` servers (answers in 0, 2 and 5 ms) swept over 1, 4 and 16 users, 3 repeats, with
# the load generator on CPU 0 and the servers on the others. Results go to results/.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked
exec target/release/shootout run examples/target-delays.toml "$@"
