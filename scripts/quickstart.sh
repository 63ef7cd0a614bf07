#!/usr/bin/env bash
# The README's first command: builds shootout, starts the built-in reference server (`shootout target`) and loads
# it for a few seconds, the server pinned to one core and the load generator to another where there are two.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked
bin=target/release/shootout
cores=$(nproc)
server_cpu=0 client_cpu=0
if [ "$cores" -ge 2 ]; then server_cpu=1; fi
pin() { if command -v taskset >/dev/null; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }

out=$(mktemp)
pin "$server_cpu" "$bin" target --port 0 --threads 1 >"$out" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.05; done
url="$(sed -E 's|.*listening on (http://[^ ]+)/.*|\1|' "$out")/hello"

echo "shootout target on CPU $server_cpu, shootout load on CPU $client_cpu ($cores CPUs here)"
pin "$client_cpu" "$bin" load -t 1 -c 32 -d 5s --warmup 1s -o quickstart-result.json "$url"
echo "The full result, with the raw latency histogram, is in quickstart-result.json"
