#!/usr/bin/env python3
"""shootout --http3 against oha's HTTP/3 build (and h2load, where Debian's speaks h3), side by side, interleaved.

One Caddy (Debian's `caddy`) serves `respond "hello" 200` over HTTP/3 on https://localhost, its access log off,
pinned to one core (GOMAXPROCS=1); each generator runs pinned to the other core with 1 thread and 16 connections
of 8 streams each (oha: -c 16 -p 8, its HTTP/3 build; h2load: -c 16 -m 8 --npn-list=h3). Rounds are interleaved
(every tool once per round), so drift on a shared machine hits all alike. For each it prints the median
requests/s and CPU time per request (user + system, from wait4), and the median of the per-round ratios to the
best peer's CPU per request in that round. A peer that is not installed is left out, and the table says so.

oha's HTTP/3 build is not in Debian: build it outside the repository, for example into a folder of its own with
`cargo install oha --features http3 --root /opt/oha`, and pass --oha /opt/oha/bin/oha.

    python3 bench/vs_http3.py [--rounds 5] [--seconds 5] [--connections 16] [--streams 8] [--oha PATH]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SHOOTOUT, measure, parse_h2load, parse_shootout, require_built  # noqa: E402

CADDYFILE = """{{
  admin off
  skip_install_trust
  auto_https disable_redirects
  storage file_system {run}/data
  servers {{
    protocols h1 h2 h3
  }}
}}
https://localhost:{port} {{
  tls internal
  respond "hello" 200
}}
"""


def free_port():
    """A port free on TCP and UDP alike."""
    import socket
    for _ in range(100):
        with socket.socket() as tcp:
            tcp.bind(("127.0.0.1", 0))
            port = tcp.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                try:
                    udp.bind(("127.0.0.1", port))
                    return port
                except OSError:
                    continue
    sys.exit("no port free on both TCP and UDP")


@contextmanager
def caddy_serving(server_cpu):
    run = tempfile.mkdtemp(prefix="shootout-bench-caddy-")
    port = free_port()
    with open(os.path.join(run, "Caddyfile"), "w") as f:
        f.write(CADDYFILE.format(run=run, port=port))
    env = dict(os.environ, HOME=run, XDG_DATA_HOME=os.path.join(run, "data"),
               XDG_CONFIG_HOME=os.path.join(run, "config"), GOMAXPROCS="1")
    log = open(os.path.join(run, "caddy.out"), "w")
    caddy = subprocess.Popen(["taskset", "-c", str(server_cpu), "caddy", "run", "--config", "Caddyfile",
                              "--adapter", "caddyfile"], cwd=run, env=env, stdout=log, stderr=log)
    try:
        import socket
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit(f"caddy did not listen within 30 s: {open(log.name).read()}")
                time.sleep(0.05)
        yield f"https://localhost:{port}/"
    finally:
        caddy.terminate()
        caddy.wait(timeout=10)
        log.close()
        shutil.rmtree(run, ignore_errors=True)


def oha_parser(seconds):
    """(responses, requests/s) from oha's JSON: its HTTP/3 build's own rate and total time are not the run's (1.16
    reported 33 s for a 3 s run), so the rate is its responses over the run's length."""
    def parse(out):
        result = json.loads(out)
        total = sum(result.get("statusCodeDistribution", {}).values())
        return total, total / seconds
    return parse


def h2load_speaks_h3(url):
    """True when h2load completes one request over HTTP/3 (Debian's is built without QUIC, and fails it)."""
    if not shutil.which("h2load"):
        return False
    out = subprocess.run(["h2load", "--npn-list=h3", "-n", "1", "-c", "1", url], capture_output=True, text=True).stdout
    return " 1 succeeded" in out


def tools(args, url):
    c, m, s = str(args.connections), str(args.streams), args.seconds
    pin = ["taskset", "-c", str(args.client_cpu)]
    table = [("shootout", pin + [args.shootout, "load", "--http3", "-k", "-t", "1", "-c", c, "--streams", m,
                                 "-d", f"{s}s", "--json", url], parse_shootout)]
    missing = []
    if args.oha and os.path.exists(args.oha):
        table.append(("oha", pin + [args.oha, "--no-tui", "--output-format", "json", "--insecure", "--http-version", "3", "-c", c,
                                    "-p", m, "-z", f"{s}s", url], oha_parser(s)))
    else:
        missing.append("oha (its HTTP/3 build: --oha PATH)")
    if h2load_speaks_h3(url):
        table.append(("h2load", pin + ["h2load", "--npn-list=h3", "-t1", "-c", c, "-m", m, "-D", str(s), url],
                      parse_h2load))
    else:
        missing.append("h2load (it completed no request over HTTP/3: Debian's nghttp2-client is built without QUIC)")
    return table, missing


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--streams", type=int, default=8)
    parser.add_argument("--client-cpu", type=int, default=0)
    parser.add_argument("--server-cpu", type=int, default=1)
    parser.add_argument("--shootout", default=SHOOTOUT)
    parser.add_argument("--oha", default=shutil.which("oha"))
    args = parser.parse_args()
    for tool in ("caddy", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed: apt-get install -y --no-install-recommends caddy util-linux")
    require_built(args.shootout)
    with caddy_serving(args.server_cpu) as url:
        table, missing = tools(args, url)
        samples = {name: [] for name, _, _ in table}
        for round_no in range(args.rounds):
            for name, argv, parse in table:
                measured = measure(argv)
                requests, rate = parse(measured.out)
                per_request = measured.cpu_s * 1e6 / max(requests, 1)
                samples[name].append((rate, per_request))
                print(f"round {round_no + 1}/{args.rounds} {name:10} {rate:10.0f} req/s {per_request:7.2f} CPU-us/req",
                      file=sys.stderr)

    print(f"Caddy (1 core, GOMAXPROCS=1, HTTP/3) on CPU {args.server_cpu}; each generator on CPU {args.client_cpu}, "
          f"1 thread, {args.connections} connections × {args.streams} streams, 5-byte body; {args.rounds} "
          f"interleaved rounds of {args.seconds} s; medians")
    if missing:
        print(f"left out: {'; '.join(missing)}")
    print()
    print("| generator | requests/s | CPU µs per request | CPU per request vs the best peer, per-round median (min–max) |")
    print("|---|---:|---:|---:|")
    peers = [name for name in samples if name != "shootout"]
    for name, rounds in samples.items():
        rate = statistics.median(r for r, _ in rounds)
        cpu = statistics.median(c for _, c in rounds)
        if peers:
            best = [min(samples[p][i][1] for p in peers) for i in range(args.rounds)]
            ratios = [rounds[i][1] / best[i] for i in range(args.rounds)]
            versus = f"{statistics.median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f})"
        else:
            versus = "no peer installed"
        print(f"| {name} | {rate:,.0f} | {cpu:.2f} | {versus} |")


if __name__ == "__main__":
    main()
