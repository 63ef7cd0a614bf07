#!/usr/bin/env bash
# The README's first command: builds shootout and runs a real shootout, with its HTML report.
# - With the example servers installed (scripts/setup-examples.sh), the classic one: examples/rack-hello.toml,
#   Puma, Unicorn, Thin and Passenger on a Rack "Hello World": each server's capacity under the SLO, found by
#   search (about 10 minutes).
# - Otherwise examples/target-delays.toml: three built-in `shootout target` servers (answers in 0, 2 and 5 ms)
#   over 1, 4 and 16 users, which needs nothing installed (about 2 minutes, after a build of a few).
# The load generator runs on CPU 0 and the servers on the others. Results go to results/; extra arguments go to
# `shootout run` (--full for the classic long sweep).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked
suite=examples/target-delays.toml
missing=()
for server in puma unicorn thin passenger apache2; do
  command -v "$server" >/dev/null || missing+=("$server")
done
if [ ${#missing[@]} -eq 0 ]; then
  suite=examples/rack-hello.toml
else
  echo "quickstart: ${missing[*]} not installed (scripts/setup-examples.sh installs them): running the built-in $suite" >&2
fi
echo "quickstart: shootout run $suite $*" >&2
exec target/release/shootout run "$suite" "$@"
