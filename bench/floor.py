#!/usr/bin/env python3
"""The engine floor: every mode of `shootout load` against the peer people use for it, in one run, interleaved.

| mode | peer |
|---|---|
| closed model, keep-alive, 64 connections | wrk |
| open model, 30,000 requests/s on 64 connections | wrk2 (`wrk2` on PATH; not in Debian, see below) |
| HTTPS, closed, 64 connections | wrk |
| no keep-alive (a connection per request), 64 at once | ab (without -k) |
| HTTP/2 in the clear, 64 connections × 10 streams | h2load -m10 |

One nginx worker answers `return 200 "hello\\n"` (plain, TLS and h2c listeners), pinned to --server-cpu; each
generator runs pinned to --client-cpu with one thread. Every round runs every pair once, shootout and its peer
back to back in alternating order, so the drift of a shared machine hits both alike; the figure that counts is
the median over rounds of shootout's CPU time per request divided by its peer's in the same round (CPU is user +
system of the whole process, from wait4). shootout runs with its defaults, so plain HTTP/1.1 goes through
io_uring where the machine allows it; the table says which I/O each row used (from the result).

Beside the closed and open rows runs a bare client (bench/probe.c, built here with `cc -O2`): one epoll loop
running the same schedule with nothing else done, no parsing, no recording. What it spends per request is what
the schedule itself costs on this machine, so the table can say how much of shootout's cost is its own (shootout
÷ bare) and how much is the schedule's (bare ÷ peer). In the closed model shootout's io_uring does better than
this epoll loop; in the open model the bare client's on-time sends say what any on-time client pays here.

Then two checks of scale, each round:
- 10,000 connections (closed model): shootout's peak RSS, and wrk's with the same connections;
- the open model keeping pace: a rate of 90% of what the closed model reached in the same round (the client being
  the limit on its core), on 64 connections: how many requests went out more than 1 ms late (at most 1% means the
  99th percentile of send lag is within 1 ms); the bare client does the same at 90% of its own closed rate.

wrk2 is built outside this repository from its public source: `git clone https://github.com/giltene/wrk2 &&
make -C wrk2 && ln -s $PWD/wrk2/wrk /usr/local/bin/wrk2`.

    python3 bench/floor.py [--rounds 5] [--seconds 5] [--client-cpu 0] [--server-cpu 1]
"""

import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (bench_arguments, measure, nginx_serving, parse_ab, parse_h2load, parse_shootout,  # noqa: E402
                    parse_wrk, raise_open_files)

OPEN_RATE = 30000
MANY = 10000
PROBE_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.c")


class Mode:
    """One row: how shootout runs it, its peer and how the peer runs it, and the ratio aimed for (None: none).
    `bare` is the rate the bare client runs the same schedule at (0: closed), or None when it has no such row."""

    def __init__(self, name, server, shootout, peer, peer_argv, parse_peer, target, bare=None):
        self.name, self.server, self.shootout = name, server, shootout
        self.peer, self.peer_argv, self.parse_peer, self.target = peer, peer_argv, parse_peer, target
        self.bare = bare
        self.ratios, self.mine, self.theirs, self.floor = [], [], [], []
        self.io = set()  # what shootout did its I/O with, as its results say


def modes(args):
    c, s = str(args.connections), args.seconds
    load = [args.shootout, "load", "-t", "1", "-d", f"{s}s", "--json"]
    table = [
        Mode("closed, keep-alive", "plain", load + ["-c", c],
             "wrk", ["wrk", "-t1", f"-c{c}", f"-d{s}s"], parse_wrk, 0.80, bare=0),
        Mode(f"open, {OPEN_RATE:,} req/s", "plain", load + ["-R", str(OPEN_RATE), "--max-connections", c],
             "wrk2", ["wrk2", "-t1", f"-c{c}", f"-R{OPEN_RATE}", f"-d{s}s", "--latency"], parse_wrk, 0.90,
             bare=OPEN_RATE),
        Mode("HTTPS, closed", "tls", load + ["-c", c, "--insecure"],
             "wrk", ["wrk", "-t1", f"-c{c}", f"-d{s}s"], parse_wrk, 0.80),
        Mode("no keep-alive", "plain", load + ["-c", c, "--no-keepalive"],
             "ab", ["ab", "-q", "-c", c, "-t", str(s), "-n", "100000000"], parse_ab, 0.90),
        Mode("HTTP/2 h2c, 10 streams", "h2c", load + ["-c", c, "--http2", "--streams", "10"],
             "h2load -m10", ["h2load", "-t1", "-c", c, "-m", "10", "-D", str(s)], parse_h2load, None),
    ]
    return [mode for mode in table if shutil.which(mode.peer_argv[0])]


def build_probe(directory):
    """Compiles the bare client into `directory`; returns its path."""
    probe = os.path.join(directory, "probe")
    subprocess.run(["cc", "-O2", "-o", probe, PROBE_SOURCE], check=True)
    return probe


def probe_argv(probe, url, connections, seconds, rate):
    """The bare client on `url`'s host and port: closed (`rate` 0) or sending on time at `rate` requests/s."""
    host, port = re.match(r"http://([\d.]+):(\d+)/", url).groups()
    return [probe, host, port, str(connections), str(seconds), str(rate), "0"]


def parse_probe(out):
    """(responses, requests/s) and the sends more than 1 ms late, from the bare client's line."""
    found = re.search(r"requests (\d+) late_over_1ms (\d+) sent (\d+)", out)
    return int(found.group(1)), int(found.group(2)), int(found.group(3))


def per_request(measured, parse):
    requests, rate = parse(measured.out)
    return measured.cpu_s * 1e6 / max(requests, 1), rate


def wrk2_p50_ms(out):
    found = re.search(r"50\.000%\s+([\d.]+)(us|ms|s)\b", out)
    if not found:
        return None
    return float(found.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[found.group(2)]


def shootout_p50_ms(out):
    points = json.loads(out)["latency"]["percentiles"]
    return next(p["us"] for p in points if p["percentile"] == 50.0) / 1000


def main():
    args = bench_arguments(__doc__.splitlines()[0], ("nginx", "wrk", "taskset", "openssl", "cc"),
                           "nginx wrk util-linux openssl gcc")
    raise_open_files()
    pin = ["taskset", "-c", str(args.client_cpu)]
    table = modes(args)
    many_rss = {"shootout": [], "wrk": []}
    pace = {"shootout": [], "bare": []}
    p50 = {"shootout": [], "wrk2": []}
    with contextlib.ExitStack() as stack:
        probe = build_probe(stack.enter_context(tempfile.TemporaryDirectory(prefix="shootout-probe-")))
        urls = {kind: stack.enter_context(nginx_serving(args.server_cpu, **options)) for kind, options in
                (("plain", {}), ("tls", {"tls": True}), ("h2c", {"listen": " http2"}))}
        for round_no in range(args.rounds):
            closed_rates = {}
            for mode in table:
                figures = run_pair(args, mode, pin, probe, urls[mode.server], round_no, p50)
                if mode.bare == 0:
                    closed_rates = {"shootout": figures["shootout"][1], "bare": figures["bare"][1]}
                print(f"round {round_no + 1}/{args.rounds} {mode.name:24} " + "  ".join(
                    f"{name} {cpu:6.2f}" for name, (cpu, _) in figures.items()) +
                    f" CPU-µs/req: {mode.ratios[-1]:.2f}×", file=sys.stderr)

            many = ["-d", f"{args.seconds}s", urls["plain"]]
            for name, argv in (("shootout", [args.shootout, "load", "-t", "1", "-c", str(MANY),
                                             "--connect-timeout", "10s", "--json"] + many),
                               ("wrk", ["wrk", "-t1", f"-c{MANY}"] + many)):
                many_rss[name].append(measure(pin + argv).rss_mib)
            for name, closed_rate in closed_rates.items():
                pace[name].append(keeps_pace(args, name, int(closed_rate * 0.9), pin, probe, urls["plain"]))
            print(f"round {round_no + 1}/{args.rounds} {MANY} connections: RSS shootout {many_rss['shootout'][-1]:.1f} "
                  f"MiB, wrk {many_rss['wrk'][-1]:.1f} MiB; pace {', '.join(f'{k} {v[-1]}' for k, v in pace.items() if v)}",
                  file=sys.stderr)

    report(args, table, many_rss, pace, p50)


def run_pair(args, mode, pin, probe, url, round_no, p50):
    """One round of one row: shootout and its peer (and the bare client, where the row has one) back to back, in
    an order that alternates by round; records the figures in `mode` and returns them by generator."""
    runs = [("shootout", pin + mode.shootout + [url], parse_shootout),
            (mode.peer, pin + mode.peer_argv + [url], mode.parse_peer)]
    if mode.bare is not None:
        runs.append(("bare", pin + probe_argv(probe, url, args.connections, args.seconds, mode.bare), None))
    figures = {}
    for name, argv, parse in runs if round_no % 2 == 0 else reversed(runs):
        measured = measure(argv)
        if name == "bare":
            done, _, _ = parse_probe(measured.out)
            figures[name] = (measured.cpu_s * 1e6 / max(done, 1), done / args.seconds)
            continue
        figures[name] = per_request(measured, parse)
        if name == "shootout":
            mode.io.add(json.loads(measured.out)["client"].get("io", "epoll"))
        if mode.peer == "wrk2":
            p50[name].append(shootout_p50_ms(measured.out) if name == "shootout" else wrk2_p50_ms(measured.out))
    mode.mine.append(figures["shootout"])
    mode.theirs.append(figures[mode.peer])
    mode.ratios.append(figures["shootout"][0] / figures[mode.peer][0])
    if "bare" in figures:
        mode.floor.append(figures["bare"][0])
    return figures


def keeps_pace(args, name, rate, pin, probe, url):
    """The open model at `rate` on the row's connections, by shootout or the bare client: (rate, the share of
    sends more than 1 ms late, requests/s achieved)."""
    if name == "bare":
        done, late, sent = parse_probe(measure(pin + probe_argv(probe, url, args.connections, args.seconds, rate)).out)
        return rate, late / max(sent, 1), done / args.seconds
    out = measure(pin + [args.shootout, "load", "-t", "1", "-R", str(rate), "--max-connections",
                         str(args.connections), "-d", f"{args.seconds}s", "--json", url]).out
    sends = json.loads(out)["sends"]
    return rate, sends["late"] / max(sends["sent"], 1), sends["sent_per_s"]


def report(args, table, many_rss, pace, p50):
    print(f"nginx (1 worker) on CPU {args.server_cpu}; each generator on CPU {args.client_cpu}, 1 thread, "
          f"{args.connections} connections, 6-byte body; {args.rounds} interleaved rounds of {args.seconds} s")
    print()
    print("| mode | shootout I/O | shootout CPU µs/request | peer | peer CPU µs/request | shootout ÷ peer, median of "
          "paired rounds (min–max) | target | bare epoll client CPU µs/request: ÷ peer, shootout ÷ it | "
          "requests/s shootout / peer |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|")
    for mode in table:
        mine = statistics.median(cpu for cpu, _ in mode.mine)
        theirs = statistics.median(cpu for cpu, _ in mode.theirs)
        ratio = statistics.median(mode.ratios)
        target = "—" if mode.target is None else f"≤ {mode.target:.2f} {'met' if ratio <= mode.target else 'not met'}"
        rates = (f"{statistics.median(r for _, r in mode.mine):,.0f} / "
                 f"{statistics.median(r for _, r in mode.theirs):,.0f}")
        floor = "—"
        if mode.floor:
            bare_peer = [bare / peer for bare, (peer, _) in zip(mode.floor, mode.theirs)]
            ours_bare = [mine / bare for (mine, _), bare in zip(mode.mine, mode.floor)]
            floor = (f"{statistics.median(mode.floor):.2f}: {statistics.median(bare_peer):.2f}× "
                     f"({min(bare_peer):.2f}–{max(bare_peer):.2f}), {statistics.median(ours_bare):.2f}× "
                     f"({min(ours_bare):.2f}–{max(ours_bare):.2f})")
        print(f"| {mode.name} | {', '.join(sorted(mode.io))} | {mine:.2f} | {mode.peer} | {theirs:.2f} | **{ratio:.2f}×** "
              f"({min(mode.ratios):.2f}–{max(mode.ratios):.2f}) | {target} | {floor} | {rates} |")
    print()
    shootout_rss = statistics.median(many_rss["shootout"])
    met = "met" if max(many_rss["shootout"]) <= 20e6 / 2**20 else "not met"
    print(f"- {MANY:,} connections: peak RSS shootout {shootout_rss:.1f} MiB, highest {max(many_rss['shootout']):.1f} "
          f"(target ≤ 20 MB, 19.1 MiB: {met}); wrk {statistics.median(many_rss['wrk']):.1f} MiB")
    for name, who in (("shootout", "shootout"), ("bare", "the bare client")):
        if not pace[name]:
            continue
        worst = max(late for _, late, _ in pace[name])
        verdict = f"target ≤ 1%, p99 send lag within 1 ms: {'met' if worst <= 0.01 else 'not met'}; " \
            if name == "shootout" else ""
        print(f"- open model at 90% of the closed rate, {who} ({', '.join(f'{r:,}' for r, _, _ in pace[name])} "
              f"req/s): sent more than 1 ms late {', '.join(f'{late:.2%}' for _, late, _ in pace[name])} ({verdict}"
              f"achieved {', '.join(f'{a:,.0f}' for _, _, a in pace[name])} req/s)")
    if p50["wrk2"]:
        print(f"- open model p50 latency, median of rounds: shootout {statistics.median(p50['shootout']):.3f} ms, "
              f"wrk2 {statistics.median(x for x in p50['wrk2'] if x is not None):.3f} ms")


if __name__ == "__main__":
    main()
