#!/usr/bin/env python3
"""shootout --http2 against h2load (nghttp2-client), side by side, interleaved.

One nginx worker speaks HTTP/2 in the clear (h2c, prior knowledge) and answers `return 200 "hello\\n"`, pinned
to one core; each generator runs pinned to the other core with 1 thread and 64 connections, once with 1 stream
per connection (h2load -m1) and once with 10 (-m10). Rounds are interleaved (every tool and stream count once
per round), so drift on a shared machine hits all alike. For each it prints the median requests/s and CPU time
per request (user + system, from wait4), and the median of the per-round ratios to h2load at the same -m.

    python3 bench/vs_h2load.py [--rounds 5] [--seconds 5] [--connections 64] [--client-cpu 0] [--server-cpu 1]
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import bench_arguments, measure, nginx_serving, parse_h2load, parse_shootout  # noqa: E402


def tools(args, url):
    c, s = str(args.connections), args.seconds
    pin = ["taskset", "-c", str(args.client_cpu)]
    table = []
    for streams in (1, 10):
        table.append((f"shootout -m{streams}", streams, pin + [
            args.shootout, "load", "--http2", "--streams", str(streams), "-t", "1", "-c", c, "-d", f"{s}s", "--json", url,
        ], parse_shootout))
        table.append((f"h2load -m{streams}", streams, pin + [
            "h2load", "-t1", "-c", c, "-m", str(streams), "-D", str(s), url,
        ], parse_h2load))
    return table


def main():
    args = bench_arguments(__doc__.splitlines()[0], ("nginx", "h2load", "taskset"), "nginx nghttp2-client util-linux")
    with nginx_serving(args.server_cpu, listen=" http2") as url:  # h2c with prior knowledge
        table = tools(args, url)
        samples = {name: [] for name, _, _, _ in table}
        for round_no in range(args.rounds):
            for name, _, argv, parse in table:
                measured = measure(argv)
                cpu = measured.cpu_s
                requests, rate = parse(measured.out)
                samples[name].append((rate, cpu * 1e6 / max(requests, 1)))
                print(f"round {round_no + 1}/{args.rounds} {name:12} {rate:12.0f} req/s "
                      f"{cpu * 1e6 / max(requests, 1):7.2f} CPU-us/req", file=sys.stderr)

    print(f"nginx (1 worker, h2c) on CPU {args.server_cpu}; each generator on CPU {args.client_cpu}, 1 thread, "
          f"{args.connections} connections, 6-byte body; {args.rounds} interleaved rounds of {args.seconds} s; medians")
    print()
    print("| generator | streams per connection | requests/s | CPU µs per request | CPU per request vs h2load, per-round median (min–max) | req/s vs h2load |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, streams, _, _ in table:
        peer = samples[f"h2load -m{streams}"]
        mine = samples[name]
        rate = statistics.median(r for r, _ in mine)
        cpu = statistics.median(c for _, c in mine)
        cpu_ratios = [m[1] / p[1] for m, p in zip(mine, peer)]
        rate_ratios = [m[0] / p[0] for m, p in zip(mine, peer)]
        print(f"| {name.split()[0]} | {streams} | {rate:,.0f} | {cpu:.2f} | "
              f"{statistics.median(cpu_ratios):.2f}× ({min(cpu_ratios):.2f}–{max(cpu_ratios):.2f}) | "
              f"{statistics.median(rate_ratios):.2f}× |")


if __name__ == "__main__":
    main()
