#!/usr/bin/env bash
# Runs shootout's fuzz targets (fuzz/, see fuzz/README.md) with cargo-fuzz and libFuzzer, on nightly Rust.
#   scripts/fuzz.sh              each target for 6 s from its committed corpus (what scripts/test.sh runs)
#   scripts/fuzz.sh 600 hpack    one target (or several) for 600 s each
#   scripts/fuzz.sh --build      only build them (scripts/build-ahead.sh, before they run)
# New inputs found go to fuzz/target/corpus/<target>, never into the committed corpus (fuzz/corpus); a crash
# stops the run, leaves its input in fuzz/artifacts/<target>/ and fails the script. Installs what it needs when
# missing: the nightly toolchain (rustup) and cargo-fuzz (crates.io).
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=""
[ "${1:-}" != --build ] || build_only=yes
seconds="${1:-6}"
shift || true
targets=("$@")

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: installing the nightly toolchain (libFuzzer's instrumentation needs it)" >&2
  rustup toolchain install nightly --profile minimal >/dev/null
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz from crates.io" >&2
  # A debug build of the tool compiles faster, and its speed does not matter.
  cargo install cargo-fuzz --locked --quiet --debug
fi

if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list) # every target of fuzz/Cargo.toml
fi
mkdir -p fuzz/target
# Optimized, with debug assertions and overflow checks, and without AddressSanitizer: the code the targets reach in
# shootout is safe Rust (its unsafe code, the io_uring ring and the timer, is reached by none), so a sanitizer of
# memory errors would guard only the dependencies' own, while the checks catch the arithmetic a parser gets wrong.
# Built here in 137 s, against 175 s with AddressSanitizer and without the checks; each input runs about three
# times faster. `scripts/fuzz.sh` with FUZZ_SANITIZER=address builds with it, for a long run.
flags=(--sanitizer "${FUZZ_SANITIZER:-none}")
if ! cargo +nightly fuzz build "${flags[@]}" >fuzz/target/build.log 2>&1; then
  tail -n 40 fuzz/target/build.log >&2
  echo "fuzz: the fuzz targets do not build (whole log: fuzz/target/build.log)" >&2
  exit 1
fi
[ -z "$build_only" ] || exit 0
# Runs one target; says how many inputs it ran, or shows the end of its log and fails.
run() {
  local target=$1 max_len found log runs
  # Results and traces can be longer than libFuzzer's default of 4 KiB per input.
  case "$target" in
    load_result | suite_results | agent_messages) max_len=32768 ;;
    *) max_len=4096 ;;
  esac
  found="fuzz/target/corpus/$target"
  mkdir -p "$found"
  log="fuzz/target/$target.log"
  if ! cargo +nightly fuzz run "${flags[@]}" "$target" "$found" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz: $target failed (whole log: $log); its input is in fuzz/artifacts/$target/" >&2
    return 1
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  echo "fuzz: $target: ${runs:-?} inputs in ${seconds} s, no crash"
}
# One target per CPU at a time (each fuzzes on one thread); the first failure fails the script once all have run.
jobs="$(nproc)"
running=()
failed=0
for target in "${targets[@]}"; do
  if [ ${#running[@]} -ge "$jobs" ]; then
    wait "${running[0]}" || failed=1
    running=("${running[@]:1}")
  fi
  run "$target" &
  running+=($!)
done
for pid in "${running[@]}"; do
  wait "$pid" || failed=1
done
exit "$failed"
