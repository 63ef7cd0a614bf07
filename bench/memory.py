#!/usr/bin/env python3
"""shootout's own memory under load: many connections, and a long open-model run.

1. 10,000 concurrent connections (closed model, 10 s) against `shootout target`: the client's peak RSS.
2. An open-model run at a high fixed rate for --minutes (default 10): the client's RSS sampled every 10 s,
   to show it stays flat (histograms are fixed-size; nothing per request is kept).

The server (`shootout target`) is pinned to CPU 1 and the client to CPU 0.

    python3 bench/memory.py [--minutes 10] [--rate 20000] [--connections 10000]
"""

import argparse
import os
import resource
import subprocess
import sys
import time

from common import SHOOTOUT as BIN, require_built


def start_target():
    target = subprocess.Popen(["taskset", "-c", "1", BIN, "target", "--port", "0"], stdout=subprocess.PIPE, text=True)
    line = target.stdout.readline()
    return target, line.strip().split("listening on ")[1].rstrip("/")


def process_figures(pid):
    """RSS in MiB, open descriptors and threads of a running process; FileNotFoundError once it has ended (a
    zombie, not yet reaped, has none of them left to count)."""
    figures = {"rss_mib": 0.0, "fds": len(os.listdir(f"/proc/{pid}/fd")), "threads": 0}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("State:") and line.split()[1] in ("Z", "X"):
                raise FileNotFoundError(f"{pid} has ended")
            if line.startswith("VmRSS:"):
                figures["rss_mib"] = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                figures["threads"] = int(line.split()[1])
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--rate", type=int, default=20000)
    parser.add_argument("--connections", type=int, default=10000)
    args = parser.parse_args()
    require_built(BIN)
    target, base = start_target()
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        many = subprocess.run(
            ["taskset", "-c", "0", BIN, "load", "-t", "1", "-c", str(args.connections), "-d", "10s",
             "--connect-timeout", "10s", f"{base}/hello"],
            capture_output=True, text=True)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if many.returncode != 0:
            sys.exit(many.stderr)
        opened = [l for l in many.stdout.splitlines() if l.startswith("Connections:")]
        rate = [l for l in many.stdout.splitlines() if l.startswith("Transaction rate:")]
        print(f"{args.connections} connections for 10 s: client peak RSS {max(peak, before) / 1024:.1f} MiB"
              f" ({opened[0].split(':', 1)[1].strip() if opened else '?'}; {rate[0].split(':', 1)[1].strip() if rate else '?'})")

        seconds = int(args.minutes * 60)
        run = subprocess.Popen(
            ["taskset", "-c", "0", BIN, "load", "-t", "1", "-R", str(args.rate), "-d", f"{seconds}s", f"{base}/hello"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        samples = []
        started = time.monotonic()
        while run.poll() is None:
            time.sleep(10)
            if run.poll() is None:
                samples.append((time.monotonic() - started, process_figures(run.pid)["rss_mib"]))
        out, err = run.communicate()
        if run.returncode != 0:
            sys.exit(err)
        achieved = [l for l in out.splitlines() if l.startswith("Sends:")]
        print(f"open model at {args.rate} req/s for {args.minutes:g} min: client RSS every 10 s (MiB): "
              + " ".join(f"{mib:.1f}" for _, mib in samples))
        if samples:
            print(f"  first {samples[0][1]:.1f} MiB, last {samples[-1][1]:.1f} MiB, max {max(m for _, m in samples):.1f} MiB")
        print("  " + (achieved[0] if achieved else "no Sends line"))
    finally:
        target.terminate()
        target.wait()


if __name__ == "__main__":
    main()
