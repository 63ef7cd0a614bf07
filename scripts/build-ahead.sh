#!/usr/bin/env bash
# Compiles, ahead of the steps that run them, what the test command runs after its tests: the release binary
# (the example suites' smoke runs, bench/floor.py, the quickstart) and the fuzz targets; with --tests, the tests'
# own build too. scripts/test.sh starts it in the background beside its lints, and .ci/run beside the installs of
# setup-examples.sh, which wait on the network and the disk more than on the CPUs; both wait for it before a test
# runs, since the tests read where the CPUs' time went. It only saves time: a build that fails here fails again,
# with its errors, in the step that needs it. One at a time (a lock under target/): a second one waits for the
# first, then finds everything built.
#
#     scripts/build-ahead.sh [--tests]
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p target
exec 9>target/.build-ahead.lock
flock 9
tests=""
if [ "${1:-}" = --tests ]; then
  nice -n 10 cargo test --workspace --locked --no-run -q &
  tests=$!
fi
nice -n 10 cargo build --release --locked -q
nice -n 10 bash scripts/fuzz.sh --build
[ -z "$tests" ] || wait "$tests"
