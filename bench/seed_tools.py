#!/usr/bin/env python3
"""The classic shootouts' own tools beside shootout, on one server at the same levels: siege -b, ab and shootout load.

Starts the server command given (`{port}` filled in, and in $PORT as `shootout run` gives it; run under `sh -c` in its own process group, pinned to the
server's CPU), waits for its URL to answer, warms it up with shootout, then at each level runs the three tools
for the same time, pinned to the client's CPU, in an order that rotates from level to level so that drift on a
shared machine hits all alike. For each it prints what the tool reported (requests/s, mean response time) and
what the tool itself cost (CPU time per request and its busy share of the one core it had, from wait4): a tool at
90% or more of its core measured itself, not the server. siege runs as the seeds ran it (`-b -c N -t 30S`),
with its per-hit lines, log and HTML parser turned off so that it is not charged for them, and its default of a
new connection per request; ab as `ab -c N`, also without keep-alive unless --ab-keepalive is given (the classic
runs did not use -k). shootout runs twice, with keep-alive (its default) and with a connection per request like
the other two, so that what the tool changes and what keep-alive changes can be told apart.

    python3 bench/seed_tools.py --server 'puma -b tcp://127.0.0.1:{port} -t 16:16 -e production config.ru' \\
        --cwd examples/apps/rack-hello --path / --levels 1,16,64 --seconds 30 [--client-cpu 0] [--server-cpu 1]
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, free_port, measure, parse_ab, parse_shootout, require_built, wait_for_port  # noqa: E402

# siege's settings for a benchmark run: no per-hit lines, no log file, no fetching of a page's images and
# scripts (siege 4's parser), and its own defaults for the rest (HTTP/1.1, its connection handling).
SIEGE_RC = "verbose = false\nquiet = false\nlogging = false\nparser = false\nshow-logfile = false\n"


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="the server's command; {port} is filled in")
    parser.add_argument("--cwd", default=".", help="where the server's command runs")
    parser.add_argument("--stop", help="a command that stops a server whose master daemonizes (Passenger's "
                        "watchdog leaves the process group); {port} is filled in; run before the group is signalled")
    parser.add_argument("--path", default="/")
    parser.add_argument("--levels", default="1,16,64", help="concurrent users, comma-separated")
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10, help="seconds of shootout load before measuring")
    parser.add_argument("--ab-keepalive", action="store_true")
    parser.add_argument("--client-cpu", type=int, default=0)
    parser.add_argument("--server-cpu", type=int, default=1)
    parser.add_argument("--shootout", default=os.path.join(ROOT, "target", "release", "shootout"))
    args = parser.parse_args()
    for tool, package in (("siege", "siege"), ("ab", "apache2-utils"), ("taskset", "util-linux")):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed: apt-get install -y --no-install-recommends {package}")
    require_built(args.shootout)
    return args


def parse_siege(out):
    """(responses, requests/s, mean response time in ms) from siege's summary."""
    def field(name):
        return float(re.search(rf"{name}:\s+([\d.]+)", out).group(1))
    return int(field("Transactions")), field("Transaction rate"), field("Response time") * 1000


def parse_ab_mean(out):
    """vs_wrk's ab figures, and ab's mean time per request in ms."""
    mean = float(re.search(r"Time per request:\s+([\d.]+) \[ms\] \(mean\)", out).group(1))
    return (*parse_ab(out), mean)


def parse_shootout_mean(out):
    """vs_wrk's shootout figures, and the mean latency in ms."""
    return (*parse_shootout(out), json.loads(out)["latency"]["mean_us"] / 1000)


def tools(args, url, level, siege_rc):
    pin = ["taskset", "-c", str(args.client_cpu)]
    s, c = args.seconds, str(level)
    ab = ["ab", "-q", "-c", c, "-t", str(s), "-n", "100000000"] + (["-k"] if args.ab_keepalive else [])
    return [
        ("shootout", pin + [args.shootout, "load", "-t", "1", "-c", c, "-d", f"{s}s", "--json", url], parse_shootout_mean),
        ("shootout, no keep-alive", pin + [args.shootout, "load", "-t", "1", "-c", c, "-d", f"{s}s", "--no-keepalive",
                                           "--json", url], parse_shootout_mean),
        ("siege -b", pin + ["siege", "-R", siege_rc, "-b", "-c", c, "-t", f"{s}S", url], parse_siege),
        ("ab -k" if args.ab_keepalive else "ab", pin + ab + [url], parse_ab_mean),
    ]


def main():
    args = arguments()
    port = free_port()
    command = args.server.replace("{port}", str(port))
    # Not `exec`: the command may be a setup step and the server joined by `&&`; the whole group is signalled.
    server = subprocess.Popen(["taskset", "-c", str(args.server_cpu), "sh", "-c", command],
                              cwd=args.cwd, env={**os.environ, "PORT": str(port)}, start_new_session=True,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}{args.path}"
    siege_rc = tempfile.NamedTemporaryFile("w", prefix="shootout-siegerc-", delete=False)
    siege_rc.write(SIEGE_RC)
    siege_rc.close()
    rows = []
    try:
        wait_for_port(port, seconds=120)
        measure(["taskset", "-c", str(args.client_cpu), args.shootout, "load", "-c", "16", "-d",
                 f"{args.warmup}s", "--json", url])
        levels = [int(level) for level in args.levels.split(",")]
        for i, level in enumerate(levels):
            table = tools(args, url, level, siege_rc.name)
            table = table[i % len(table):] + table[:i % len(table)]
            for name, argv, parse in table:
                started = time.monotonic()
                measured = measure(argv)
                out, cpu = measured.out, measured.cpu_s
                wall = time.monotonic() - started
                responses, rate, mean_ms = parse(out)
                rows.append((level, name, rate, mean_ms, cpu * 1e6 / max(responses, 1), cpu / wall))
                print(f"{level:4} users {name:24} {rate:10.1f} req/s  mean {mean_ms:9.3f} ms  "
                      f"{rows[-1][4]:8.1f} CPU-us/req  busy {cpu / wall:4.0%}", file=sys.stderr)
    finally:
        if args.stop:
            subprocess.run(["sh", "-c", args.stop.replace("{port}", str(port))], cwd=args.cwd, timeout=60,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            os.killpg(server.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        server.wait(timeout=30)
        os.unlink(siege_rc.name)

    print("    " + " ".join(shlex.quote(a) for a in ["python3", "bench/seed_tools.py"] + sys.argv[1:]))
    print()
    print(f"`{args.server}` on CPU {args.server_cpu}; each tool on CPU {args.client_cpu}, one at a time, "
          f"{args.seconds} s per level after a {args.warmup} s warm-up; {url}")
    print()
    print("| users | tool | requests/s | mean response ms (as the tool prints it) | tool CPU µs per request | tool busy |")
    print("|---:|---|---:|---:|---:|---:|")
    for level, name, rate, mean_ms, cpu_us, busy in sorted(rows, key=lambda r: (r[0], r[1])):
        flag = " (measured itself)" if busy >= 0.9 else ""
        print(f"| {level} | {name} | {rate:,.1f} | {mean_ms:.3f} | {cpu_us:.1f} | {busy:.0%}{flag} |")


if __name__ == "__main__":
    main()
