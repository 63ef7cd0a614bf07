#!/usr/bin/env python3
"""What sweeping a server's threads costs: the same suite with `thread_states` on and off, interleaved.

Two servers, each pinned to CPU 1 with the client on CPU 0, each kept busy by 16 users:
- the built-in target with 4 threads burning 200 µs a request (CPU-bound: any CPU the sweeps take shows);
- tests/fixtures/limited-server's GIL-bound Python server, a thread per connection (17 threads to sweep).

Each round runs both servers' suites with the sweeps on, then off (the order alternating by round), and keeps
their throughput, the server's CPU per response and shootout's own CPU time (the load and the sweeps together).
Printed: the median over the rounds of on/off for each, per server.

    python3 bench/thread_states.py [--rounds 5] [--seconds 5]
"""

import argparse
import csv
import os
import resource
import statistics
import subprocess
import sys
import tempfile

from common import SHOOTOUT as BIN, require_built

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMITED = os.path.join(ROOT, "crates/shootout/tests/fixtures/limited-server")

SERVERS = {
    "target": ('command = "{shootout} target --port {port} --threads 4"\npath = "/spin/200"', 16),
    "python-gil": (f'command = "{LIMITED} gil --port {{port}}"', 16),
}


def run(name, server, users, sweeps, seconds, directory, round_):
    """One suite of `server`; its throughput, the server's CPU per response and shootout's own CPU seconds."""
    suite = (
        f'name = "{name}"\nrepeats = 1\nduration = "{seconds}s"\nwarmup = "1s"\nconnections = [{users}]\n'
        f'client_cpus = "0"\nthread_states = {"true" if sweeps else "false"}\n'
        f'[[server]]\nname = "{name}"\ncpus = "1"\n{server}\n'
    )
    path = os.path.join(directory, f"{name}.toml")
    with open(path, "w") as out:
        out.write(suite)
    results = os.path.join(directory, f"results-{name}-{sweeps}-{round_}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([BIN, "run", path, "--results", results], capture_output=True, text=True, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(done.stderr)
    folder = os.path.join(results, os.listdir(results)[0])
    with open(os.path.join(folder, "summary.csv")) as summary:
        row = next(csv.DictReader(summary))
    # The server runs under shootout, so its CPU is in the children's too: take it out.
    server_cpu_s = float(row["server_cpu_us_per_request"]) * float(row["requests_per_s"]) * seconds / 1e6
    own = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) - server_cpu_s
    return float(row["requests_per_s"]), float(row["server_cpu_us_per_request"]), own


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    require_built(BIN)
    ratios = {name: {"req/s": [], "server CPU/req": [], "shootout CPU": []} for name in SERVERS}
    with tempfile.TemporaryDirectory() as directory:
        for round_ in range(args.rounds):
            for name, (server, users) in SERVERS.items():
                order = [True, False] if round_ % 2 == 0 else [False, True]
                figures = {sweeps: run(name, server, users, sweeps, args.seconds, directory, round_) for sweeps in order}
                on, off = figures[True], figures[False]
                for key, a, b in zip(ratios[name], on, off):
                    ratios[name][key].append(a / b if b else float("nan"))
                print(f"round {round_ + 1} {name}: on {on[0]:.0f} req/s {on[1]:.1f} µs/req {on[2]:.2f} s, "
                      f"off {off[0]:.0f} req/s {off[1]:.1f} µs/req {off[2]:.2f} s", flush=True)
    print("median of on/off over the rounds (server on CPU 1, client on CPU 0):")
    for name, figures in ratios.items():
        cells = ", ".join(f"{key} {statistics.median(values):.3f}" for key, values in figures.items())
        print(f"  {name}: {cells}")


if __name__ == "__main__":
    main()
