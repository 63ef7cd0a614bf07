#!/usr/bin/env python3
"""Soaks: shootout run for a long time and watched for anything creeping up or left behind.

  open          the open model holding about 10,000 connections open for --minutes (30): --rate (10,000)
                requests/s to `shootout target`'s /delay/1000, each answered a second later, so about as many
                connections are busy at once (at most --connections, 10,500)
  no-keepalive  the closed model with a new connection per request (--connections 64) for --minutes
  trials        a suite of --trials (200) short trials on the built-in target, then a search for any process,
                cgroup, listening port or descriptor of the run left behind

The first two sample the generator's RSS, open descriptors and threads every --every seconds (60) and say
whether each stayed within 5% of its value at the end of the first minute. The target runs on CPU 1 and the
generator on CPU 0. Figures from this machine are in docs/reliability.md.

    python3 bench/soak.py open [--minutes 30] [--rate 10000] [--connections 10500]
    python3 bench/soak.py no-keepalive [--minutes 30] [--connections 64]
    python3 bench/soak.py trials [--trials 200]
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import socket
import tempfile
import time
from dataclasses import dataclass

from common import require_built
from memory import BIN, process_figures, start_target

# How far a figure may move from its value at the end of the first minute and still count as flat.
FLAT = 0.05


@dataclass
class Watched:
    """A finished process and what was seen of it: (seconds since its start, figures) samples."""
    pid: int
    code: int
    samples: list
    out: str
    err: str


def watch(argv, every, seconds=None):
    """Runs `argv`, sampling it every `every` seconds while it runs (for a load, only during its `seconds`),
    until it ends. Its output goes to files, not pipes: a result bigger than a
    pipe's buffer would block its writer while nobody reads."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        run = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
        samples, started = [], time.monotonic()
        while run.poll() is None and (seconds is None or time.monotonic() - started + every <= seconds + 1):
            time.sleep(every)
            try:
                samples.append((time.monotonic() - started, process_figures(run.pid)))
            except FileNotFoundError:
                break  # it ended while asleep
            minute, figures = samples[-1]
            print(f"  {minute / 60:5.1f} min  RSS {figures['rss_mib']:6.1f} MiB  descriptors {figures['fds']:6}"
                  f"  threads {figures['threads']:3}", file=sys.stderr, flush=True)
        run.wait()
        out.seek(0)
        err.seek(0)
        return Watched(run.pid, run.returncode, samples, out.read(), err.read())


def flatness(samples):
    """Per figure: its value after the first minute, its range since, and whether it stayed within FLAT."""
    settled = [figures for elapsed, figures in samples if elapsed >= 60]
    if len(settled) < 2:
        return {}
    verdict = {}
    for name in ("rss_mib", "fds", "threads"):
        first, values = settled[0][name], [figures[name] for figures in settled]
        spread = max(abs(v - first) for v in values) / max(first, 1e-9)
        verdict[name] = (first, min(values), max(values), spread <= FLAT)
    return verdict


def report(title, samples, out):
    result = json.loads(out)
    print(f"{title}: {result['requests']['total']:,} requests, {result['requests']['failed']:,} failed "
          f"{result['errors']}, {result['throughput']['requests_per_s']:,.0f}/s; client busy "
          f"{result['client']['busy']:.0%}")
    print("| minute | RSS MiB | descriptors | threads |\n|---:|---:|---:|---:|")
    for elapsed, figures in samples:
        print(f"| {elapsed / 60:.1f} | {figures['rss_mib']:.1f} | {figures['fds']} | {figures['threads']} |")
    for name, (first, low, high, flat) in flatness(samples).items():
        print(f"- {name}: {first:g} after the first minute, {low:g}–{high:g} since: "
              + ("flat" if flat else f"MOVED more than {FLAT:.0%}"))


def load_soak(args, extra, path, title):
    target, base = start_target()
    try:
        seconds = int(args.minutes * 60)
        argv = ["taskset", "-c", "0", BIN, "load", "-t", "1", "-d", f"{seconds}s", "--connect-timeout", "10s",
                "--json", *extra, f"{base}{path}"]
        print(" ".join(argv), file=sys.stderr)
        load = watch(argv, args.every, seconds)
        if load.code != 0:
            sys.exit(f"{' '.join(argv)} failed ({load.code}): {load.err.strip()}")
        report(title, load.samples, load.out)
    finally:
        target.terminate()
        target.wait()


def marked(marker):
    """The processes whose environment carries `marker`."""
    found = []
    for environ in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(environ, "rb") as file:
                if marker.encode() in file.read().split(b"\0"):
                    found.append(environ.split("/")[2])
        except OSError:
            pass  # gone, or not ours to read
    return found


def taken(ports):
    """The ports among `ports` that something on 127.0.0.1 still listens on."""
    still = []
    for port in ports:
        with socket.socket() as probe:
            # SO_REUSEADDR: a connection in TIME_WAIT on the port is the kernel's, not a server left running;
            # only a socket still listening makes the bind fail.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                still.append(port)
    return still


def trials_soak(args):
    repeats = max(1, args.trials // 10)
    marker = f"SOAK=shootout-soak-{os.getpid()}"
    suite = f"""name = "soak"
repeats = {repeats}
duration = "300ms"
warmup = "0s"
sample_every = "100ms"
connections = [1, 2, 4, 8, 16]
[load]
path = "/hello"
[[server]]
name = "one thread"
command = "{BIN} target --port {{port}} --threads 1"
env = {{ SOAK = "{marker.split('=')[1]}" }}
[[server]]
name = "two threads"
command = "{BIN} target --port {{port}} --threads 2"
env = {{ SOAK = "{marker.split('=')[1]}" }}
"""
    with tempfile.TemporaryDirectory(prefix="shootout-soak-") as work:
        path = os.path.join(work, "suite.toml")
        with open(path, "w") as file:
            file.write(suite)
        argv = [BIN, "run", path, "--results", os.path.join(work, "results")]
        print(" ".join(argv), file=sys.stderr)
        run = watch(argv, args.every)
        trials = glob.glob(os.path.join(work, "results", "*", "trials", "*", "*.json"))
        print(f"{len(trials)} trials (2 servers × 5 levels × {repeats} repeats), exit {run.code}")
        if run.code != 0:
            print(run.err.strip())
        if run.samples:
            fds, rss = [s["fds"] for _, s in run.samples], [s["rss_mib"] for _, s in run.samples]
            print(f"- the run's descriptors every {args.every:g} s: {min(fds)}–{max(fds)} (first {fds[0]}, last "
                  f"{fds[-1]}); its RSS {min(rss):.1f}–{max(rss):.1f} MiB")
        ports = set()
        for trial in trials:
            with open(trial) as file:
                ports.add(int(json.load(file)["result"]["address"].rsplit(":", 1)[1]))
        cgroups = glob.glob(f"/sys/fs/cgroup/shootout-{run.pid}-*")
        processes, listening = marked(marker), taken(sorted(ports))
        print(f"- left behind: {len(cgroups)} cgroups, {len(processes)} server processes, and {len(listening)} of "
              f"the {len(ports)} ports the servers listened on still taken"
              + ("" if not (cgroups or processes or listening) else f": {cgroups} {processes} {listening}"))
        return 0 if run.code == 0 and not (cgroups or processes or listening) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("soak", choices=["open", "no-keepalive", "trials"])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--every", type=float, default=60, help="seconds between samples")
    parser.add_argument("--rate", type=int, default=10000)
    parser.add_argument("--connections", type=int, help="at most 10500 (open), or 64 (no-keepalive)")
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    require_built(BIN)
    if args.soak == "open":
        connections = args.connections or 10500
        load_soak(args, ["-R", str(args.rate), "--max-connections", str(connections)], "/delay/1000",
                  f"open model, {args.rate}/s to /delay/1000 over up to {connections} connections, "
                  f"{args.minutes:g} min")
    elif args.soak == "no-keepalive":
        connections = args.connections or 64
        load_soak(args, ["-c", str(connections), "--no-keepalive"], "/hello",
                  f"closed model, {connections} users, a new connection per request, {args.minutes:g} min")
    else:
        sys.exit(trials_soak(args))


if __name__ == "__main__":
    main()
