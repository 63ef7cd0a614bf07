#!/usr/bin/env python3
"""shootout's load engine against wrk (and ab, h2load, oha where installed), side by side, interleaved.

One nginx worker answers `return 200 "hello\\n"` (a 6-byte body) pinned to one core; each load generator runs
pinned to the other core with 1 thread and 64 keep-alive connections. Runs are interleaved (every tool once per
round) so drift on a shared machine hits every tool alike. For each tool it prints the median requests/s and the
median CPU time the generator spent per request (user + system, from wait4), and both as a ratio to wrk.

    python3 bench/vs_wrk.py [--rounds 5] [--seconds 5] [--connections 64] [--client-cpu 0] [--server-cpu 1]
"""

import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (bench_arguments, measure, nginx_serving, parse_ab, parse_h2load, parse_oha,  # noqa: E402
                    parse_shootout, parse_wrk)


def tools(args, url, shootout):
    c, s = str(args.connections), args.seconds
    pin = ["taskset", "-c", str(args.client_cpu)]
    table = [("shootout", pin + [shootout, "load", "-t", "1", "-c", c, "-d", f"{s}s", "--json", url], parse_shootout)]
    if shutil.which("wrk"):
        table.append(("wrk", pin + ["wrk", "-t1", f"-c{c}", f"-d{s}s", url], parse_wrk))
    if shutil.which("ab"):
        table.append(("ab -k", pin + ["ab", "-k", "-q", "-c", c, "-t", str(s), "-n", "100000000", url], parse_ab))
    if shutil.which("h2load"):
        table.append(("h2load", pin + ["h2load", "--h1", "-t1", "-c", c, "-D", str(s), url], parse_h2load))
    if shutil.which("oha"):
        table.append(("oha", pin + ["oha", "--no-tui", "--output-format", "json", "-c", c, "-z", f"{s}s", url], parse_oha))
    return table


def main():
    args = bench_arguments(__doc__.splitlines()[0], ("nginx", "wrk", "taskset"), "nginx wrk util-linux")
    with nginx_serving(args.server_cpu) as url:
        table = tools(args, url, args.shootout)
        samples = {name: [] for name, _, _ in table}
        for round_no in range(args.rounds):
            for name, argv, parse in table:
                measured = measure(argv)
                cpu = measured.cpu_s
                requests, rate = parse(measured.out)
                samples[name].append((rate, cpu * 1e6 / max(requests, 1)))
                print(f"round {round_no + 1}/{args.rounds} {name:9} {rate:12.0f} req/s {cpu * 1e6 / max(requests, 1):7.2f} CPU-us/req",
                      file=sys.stderr)

    wrk_rate = statistics.median(r for r, _ in samples["wrk"])
    wrk_cpu = statistics.median(c for _, c in samples["wrk"])
    # Rounds are interleaved, so each round pairs the tools under the same machine load: the median of the
    # per-round ratios is less exposed to drift than the ratio of the medians.
    def paired(name, field):
        return statistics.median(mine[field] / theirs[field] for mine, theirs in zip(samples[name], samples["wrk"]))
    print(f"nginx (1 worker) on CPU {args.server_cpu}; each generator on CPU {args.client_cpu}, 1 thread, "
          f"{args.connections} connections, keep-alive, 6-byte body; {args.rounds} interleaved rounds of {args.seconds} s; medians")
    print()
    print("| generator | requests/s | CPU µs per request | req/s vs wrk | CPU per request vs wrk | same, per-round median (min–max) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, _, _ in table:
        rate = statistics.median(r for r, _ in samples[name])
        cpu = statistics.median(c for _, c in samples[name])
        rounds = [mine[1] / theirs[1] for mine, theirs in zip(samples[name], samples["wrk"])]
        print(f"| {name} | {rate:,.0f} | {cpu:.2f} | {rate / wrk_rate:.2f}× | {cpu / wrk_cpu:.2f}× | "
              f"{paired(name, 1):.2f}× ({min(rounds):.2f}–{max(rounds):.2f}) |")


if __name__ == "__main__":
    main()
