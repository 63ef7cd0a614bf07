#!/usr/bin/env python3
"""What sweeping a server's threads costs: the same suite with `thread_states` on and off, interleaved.

Two servers, each pinned to CPU 1 with the client on CPU 0, each kept busy by 16 users:
- the built-in target with 4 threads burning 200 µs a request (CPU-bound: any CPU the sweeps take shows);
- tests/fixtures/limited-server's GIL-bound Python server, a thread per connection (17 threads to sweep).

Each round runs both servers' suites with the sweeps on, then off (the order alternating by round), and keeps
their throughput, the server's CPU per response and shootout's own CPU time (the load and the sweeps together).
Printed, per server: the median over the rounds of on/off for each; the geometric mean of the throughput's
on/off with its 95% interval (Student's t on the logarithms of the rounds' ratios, paired by round); and what one
sweep cost shootout, the difference of its own CPU time on and off over the sweeps of the run with them on.

    python3 bench/thread_states.py [--rounds 5] [--seconds 5]
"""

import argparse
import csv
import glob
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile

from common import SHOOTOUT as BIN, require_built

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMITED = os.path.join(ROOT, "crates/shootout/tests/fixtures/limited-server")

# Student's t at 97.5% by degrees of freedom, for the interval of a few rounds.
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}

SERVERS = {
    "target": ('command = "{shootout} target --port {port} --threads 4"\npath = "/spin/200"', 16),
    "python-gil": (f'command = "{LIMITED} gil --port {{port}}"', 16),
}


def run(name, server, users, sweeps, seconds, directory, round_):
    """One suite of `server`; its throughput, the server's CPU per response, shootout's own CPU seconds, and the
    sweeps of its threads the trial made."""
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
    sweeps = 0
    for trial in glob.glob(os.path.join(folder, "trials", "*", "*.json")):
        with open(trial) as record:
            sweeps += sum(s.get("states", {}).get("sweeps", 0) for s in json.load(record).get("samples", []))
    return float(row["requests_per_s"]), float(row["server_cpu_us_per_request"]), own, sweeps


def interval(ratios):
    """The geometric mean of `ratios` and its 95% interval (Student's t on their logarithms)."""
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    df = len(logs) - 1
    t = T_975[max(k for k in T_975 if k <= df)]
    half = t * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    require_built(BIN)
    ratios = {name: {"req/s": [], "server CPU/req": [], "shootout CPU": []} for name in SERVERS}
    per_sweep_us = {name: [] for name in SERVERS}
    with tempfile.TemporaryDirectory() as directory:
        for round_ in range(args.rounds):
            for name, (server, users) in SERVERS.items():
                order = [True, False] if round_ % 2 == 0 else [False, True]
                figures = {sweeps: run(name, server, users, sweeps, args.seconds, directory, round_) for sweeps in order}
                on, off = figures[True], figures[False]
                for key, a, b in zip(ratios[name], on, off):
                    ratios[name][key].append(a / b if b else float("nan"))
                if on[3]:
                    per_sweep_us[name].append((on[2] - off[2]) / on[3] * 1e6)
                print(f"round {round_ + 1} {name}: on {on[0]:.0f} req/s {on[1]:.1f} µs/req {on[2]:.2f} s "
                      f"({on[3]} sweeps), off {off[0]:.0f} req/s {off[1]:.1f} µs/req {off[2]:.2f} s", flush=True)
    print("median of on/off over the rounds (server on CPU 1, client on CPU 0):")
    for name, figures in ratios.items():
        cells = ", ".join(f"{key} {statistics.median(values):.3f}" for key, values in figures.items())
        print(f"  {name}: {cells}")
    print("throughput on/off, geometric mean [95% interval], and shootout's CPU per sweep (median over the rounds):")
    for name, figures in ratios.items():
        centre, low, high = interval(figures["req/s"])
        cost = statistics.median(per_sweep_us[name]) if per_sweep_us[name] else float("nan")
        print(f"  {name}: {centre:.3f} [{low:.3f}-{high:.3f}], {cost:.0f} µs a sweep")


if __name__ == "__main__":
    main()
