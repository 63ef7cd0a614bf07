#!/usr/bin/env bash
# The whole test suite, as the README gives it: formatting, lints with warnings denied, every unit and
# end-to-end test of the workspace (the end-to-end tests drive the real `shootout` binary over loopback, and open
# the HTML report in a headless Chromium), then, where the example servers are installed
# (scripts/setup-examples.sh), a smoke run of every example suite on its real servers, and last a short run of
# every fuzz target (scripts/fuzz.sh: 6 s each from its committed corpus).
set -euo pipefail
cd "$(dirname "$0")/.."

# The release binary and the fuzz targets, which the steps after the tests run, are compiled in the background
# (scripts/build-ahead.sh) while the packages install and the lints and the tests' own build run; the tests start
# only once it is done. Its own process group, stopped however this script ends.
mkdir -p target
setsid bash scripts/build-ahead.sh >target/build-ahead.log 2>&1 &
ahead=$!
trap 'kill -- -"$ahead" 2>/dev/null || true' EXIT

# What the tests need from Debian's packages: Chromium (the report test), procps (pgrep, to prove no server
# process is left behind), openssh-server, openssh-client and iproute2 (the ssh agents test runs a real sshd in
# each of three network namespaces and reaches it with ssh), slurmctld, slurmd, slurm-client and munge (the Slurm
# agents test runs a controller and three nodes of its own), faketime (the agents' clock tests skew an agent's
# wall clock), apache2-utils (ab, the seeds' own tool, must finish against the built-in target), postgresql (the
# services tests start a PostgreSQL of their own, in their own folder, beside the servers), docker.io (the
# containers test starts a Docker daemon of its own and runs a server in a container), linux-perf (the profile
# tests attach perf to the built-in target under load), wrk and nghttp2-client (h2load: the peers of
# bench/floor.py, the benchmark behind the README's performance table, run here for one short round), caddy (the
# HTTP/3 tests load a Caddy of their own and count its log), gunicorn (the limit column's truth tests read its
# sync and threaded workers). Under CI
# every one of these tests must run. Installed only when missing, and only where we may (root, apt), by
# scripts/apt-install.sh: no daemon is started by the install, since each test starts its own.
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v pgrep >/dev/null || missing+=(procps)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh >/dev/null || missing+=(openssh-client)
command -v ip >/dev/null || missing+=(iproute2)
[ -x /usr/sbin/slurmctld ] || missing+=(slurmctld)
[ -x /usr/sbin/slurmd ] || missing+=(slurmd)
command -v srun >/dev/null || missing+=(slurm-client)
[ -x /usr/sbin/munged ] || missing+=(munge)
command -v faketime >/dev/null || missing+=(faketime)
command -v ab >/dev/null || missing+=(apache2-utils)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)
[ -x /usr/sbin/dockerd ] || missing+=(docker.io)
command -v perf >/dev/null || missing+=(linux-perf)
command -v wrk >/dev/null || missing+=(wrk)
command -v h2load >/dev/null || missing+=(nghttp2-client)
command -v caddy >/dev/null || missing+=(caddy)
command -v gunicorn >/dev/null || missing+=(gunicorn)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${missing[*]} for the tests" >&2
    bash scripts/apt-install.sh "${missing[@]}" >/dev/null
  else
    echo "the tests need: ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi

# The Kubernetes manifest is checked against the API's schema with the `kubernetes` Python package (from PyPI,
# pinned), in a virtualenv of the tests' own under target/.
python=target/test-python/bin/python
if ! "$python" -c 'import kubernetes' 2>/dev/null; then
  python3 -m venv target/test-python 2>/dev/null || {
    bash scripts/apt-install.sh python3-venv >/dev/null
    python3 -m venv target/test-python
  }
  "$python" -m pip install -q --disable-pip-version-check kubernetes==31.0.0
fi
export SHOOTOUT_TEST_PYTHON="$PWD/$python"

# Each phase says how long it took (CI's whole run, .ci/run, is kept under 40 minutes: CONTRIBUTING.md).
timed() {
  local start=$SECONDS
  "$@"
  echo "test: '$*' took $((SECONDS - start)) s"
}
timed cargo fmt --all -- --check
timed cargo fmt --manifest-path fuzz/Cargo.toml -- --check
timed cargo clippy --workspace --all-targets --locked -- -D warnings
timed cargo test --workspace --locked --no-run
# The tests read where the CPUs' time went: nothing of ours compiles beside them.
started=$SECONDS
wait "$ahead" || echo "test: the build ahead failed (target/build-ahead.log); the steps that need it build again" >&2
echo "test: waiting for the build ahead (scripts/build-ahead.sh) took $((SECONDS - started)) s"
# The tests that read where the CPUs' time went (the capacity search, the limit column, profiles) are a binary of
# their own, tests/quiet/, whose tests take turns; cargo runs it apart from the others.
timed cargo test --workspace --locked

# Under CI (CI=true, where .ci/run has run setup-examples.sh first) every example must load and run; elsewhere a
# machine without the example servers skips their smoke runs, and says so.
if bash scripts/setup-examples.sh --check; then
  timed bash scripts/smoke-examples.sh
  # One short round of the engine floor against its peers on nginx (bench/floor.py; its figures here are too
  # short to quote): the benchmark behind the README's performance table must keep running.
  timed python3 bench/floor.py --rounds 1 --seconds 1
elif [ -n "${CI:-}" ]; then
  echo "test: the example suites' checks failed under CI (above): scripts/setup-examples.sh must make them pass" >&2
  exit 1
else
  echo "test: the example suites' smoke runs were skipped: their servers are not installed (scripts/setup-examples.sh)" >&2
fi

timed bash scripts/fuzz.sh 6
