#!/usr/bin/env bash
# Runs the smoke sweep of every example suite on its real servers (`shootout run --smoke`: the first and last
# level, once, 1 s each or 2 s at an arrival rate) and checks each run with check-smoke.py: every server
# answered, was sampled and is in the report. The suites of `profiled` run with --profile too (a flame graph per
# server and the profiler's cost in the report). The servers come from scripts/setup-examples.sh. Results are kept under the
# folder printed first; each suite's time is printed after it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q
out="$(mktemp -d /tmp/shootout-smoke.XXXXXX)"
echo "smoke-examples: results under $out"
failed=()
profiled=(rack-hello)
for suite in examples/*.toml; do
  name="$(basename "$suite" .toml)"
  echo "smoke-examples: $suite"
  started=$SECONDS
  options=(--smoke)
  [[ " ${profiled[*]} " == *" $name "* ]] && options+=(--profile)
  if ! target/release/shootout run "${options[@]}" "$suite" --results "$out/$name" > "$out/$name.out"; then
    failed+=("$suite (shootout run failed; see $out/$name.out)")
  else
    python3 scripts/check-smoke.py "$suite" "$(ls -d "$out/$name"/*/ | head -1)" || failed+=("$suite")
  fi
  echo "smoke-examples: $suite took $((SECONDS - started)) s"
done
if [ ${#failed[@]} -gt 0 ]; then
  printf 'smoke-examples: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "smoke-examples: every example suite ran end to end"
