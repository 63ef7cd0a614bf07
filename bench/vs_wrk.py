#!/usr/bin/env python3
"""shootout's load engine against wrk (and ab, h2load, oha where installed), side by side, interleaved.

One nginx worker answers `return 200 "hello\\n"` (a 6-byte body) pinned to one core; each load generator runs
pinned to the other core with 1 thread and 64 keep-alive connections. Runs are interleaved (every tool once per
round) so drift on a shared machine hits every tool alike. For each tool it prints the median requests/s and the
median CPU time the generator spent per request (user + system, from wait4), and both as a ratio to wrk.

    python3 bench/vs_wrk.py [--rounds 5] [--seconds 5] [--connections 64] [--client-cpu 0] [--server-cpu 1]
"""

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
pid {run}/nginx.pid;
error_log stderr error;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    client_body_temp_path {run}/body;
    proxy_temp_path {run}/proxy;
    fastcgi_temp_path {run}/fastcgi;
    uwsgi_temp_path {run}/uwsgi;
    scgi_temp_path {run}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{ return 200 "hello\\n"; }}
    }}
}}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"the server did not start listening on port {port} within {seconds} s")


def bench_arguments(description, needed, install):
    """The options every comparison takes; exits with the install line when a tool in `needed` is missing."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--client-cpu", type=int, default=0)
    parser.add_argument("--server-cpu", type=int, default=1)
    parser.add_argument("--shootout", default=os.path.join(ROOT, "target", "release", "shootout"))
    args = parser.parse_args()
    for tool in needed:
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed: apt-get install -y --no-install-recommends {install}")
    if not os.path.exists(args.shootout):
        sys.exit(f"{args.shootout} does not exist: run cargo build --release first")
    return args


@contextlib.contextmanager
def nginx_serving(conf_template, server_cpu):
    """Runs one nginx worker from `conf_template` pinned to `server_cpu`; yields its URL, and stops it after."""
    run_dir = tempfile.mkdtemp(prefix="shootout-bench-")
    port = free_port()
    conf = os.path.join(run_dir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(conf_template.format(run=run_dir, port=port))
    nginx = subprocess.Popen(["taskset", "-c", str(server_cpu), "nginx", "-p", run_dir, "-c", conf, "-e", "stderr"])
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/"
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)
        shutil.rmtree(run_dir, ignore_errors=True)


def measure(argv):
    """Runs argv to completion; returns (stdout, CPU seconds it used), from the growth of RUSAGE_CHILDREN."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{argv[0]} failed ({done.returncode}):\n{done.stdout}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.stdout, cpu


def parse_shootout(out):
    result = json.loads(out)
    responses = result["requests"]["ok"] + result["requests"]["http_errors"]
    return responses, result["throughput"]["requests_per_s"]


def parse_wrk(out):
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return requests, rate


def parse_ab(out):
    requests = int(re.search(r"Complete requests:\s+(\d+)", out).group(1))
    rate = float(re.search(r"Requests per second:\s+([\d.]+)", out).group(1))
    return requests, rate


def parse_h2load(out):
    requests = int(re.search(r"requests: \d+ total, \d+ started, (\d+) done", out).group(1))
    rate = float(re.search(r"finished in [\d.]+\w*, ([\d.]+) req/s", out).group(1))
    return requests, rate


def parse_oha(out):
    result = json.loads(out)
    rate = result["summary"]["requestsPerSec"]
    total = sum(result.get("statusCodeDistribution", {}).values())
    return total, rate


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
        table.append(("oha", pin + ["oha", "--no-tui", "-j", "-c", c, "-z", f"{s}s", url], parse_oha))
    return table


def main():
    args = bench_arguments(__doc__.splitlines()[0], ("nginx", "wrk", "taskset"), "nginx wrk util-linux")
    with nginx_serving(NGINX_CONF, args.server_cpu) as url:
        table = tools(args, url, args.shootout)
        samples = {name: [] for name, _, _ in table}
        for round_no in range(args.rounds):
            for name, argv, parse in table:
                out, cpu = measure(argv)
                requests, rate = parse(out)
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
