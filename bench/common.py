"""What the comparisons in bench/ share: a one-worker nginx to load, running a generator while measuring the CPU
and memory it used, and reading each generator's figures from its output.

Every generator is measured the same way, from the outside: the user + system CPU time and the peak RSS that
`wait4` reports for its process, whatever the tool prints about itself.
"""

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOOTOUT = os.path.join(ROOT, "target", "release", "shootout")

# One nginx worker answering a 6-byte body; {listen} is filled in with the listen parameters of each mode.
NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 65536;
pid {run}/nginx.pid;
error_log stderr error;
events {{ worker_connections 30000; }}
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
        listen 127.0.0.1:{port}{listen};
        {extra}
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


def bench_arguments(description, needed, install, rounds=5, seconds=5):
    """The options every comparison takes; exits with the install line when a tool in `needed` is missing."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--seconds", type=int, default=seconds)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--client-cpu", type=int, default=0)
    parser.add_argument("--server-cpu", type=int, default=1)
    parser.add_argument("--shootout", default=SHOOTOUT)
    args = parser.parse_args()
    for tool in needed:
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed: apt-get install -y --no-install-recommends {install}")
    require_built(args.shootout)
    return args


def require_built(binary):
    """Exits with the way out when the shootout binary at `binary` has not been built."""
    if not os.path.exists(binary):
        sys.exit(f"{binary} does not exist: run cargo build --release first")


def raise_open_files(most=65536):
    """Lets this process and its children (generators, nginx) hold `most` descriptors, for the many-connection
    checks; root may raise the hard limit too."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < most:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (most, most))
            return
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(most, hard)), hard))


def self_signed_certificate(directory):
    """Writes a throwaway EC certificate for 127.0.0.1 and its key into `directory`; returns their paths."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


@contextlib.contextmanager
def nginx_serving(server_cpu, listen="", tls=False):
    """Runs one nginx worker pinned to `server_cpu`, its listener given `listen` (" http2" for h2c) and TLS when
    asked; yields its URL, and stops it after."""
    run_dir = tempfile.mkdtemp(prefix="shootout-bench-")
    port = free_port()
    extra = ""
    if tls:
        cert, key = self_signed_certificate(run_dir)
        listen += " ssl"
        extra = f"ssl_certificate {cert}; ssl_certificate_key {key};"
    conf = os.path.join(run_dir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(run=run_dir, port=port, listen=listen, extra=extra))
    nginx = subprocess.Popen(["taskset", "-c", str(server_cpu), "nginx", "-p", run_dir, "-c", conf, "-e", "stderr"])
    try:
        wait_for_port(port)
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}/"
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)
        shutil.rmtree(run_dir, ignore_errors=True)


class Measured:
    """One generator run: its output, and the CPU seconds (user + system) and peak RSS (MiB) of its process."""

    def __init__(self, out, cpu_s, rss_mib):
        self.out, self.cpu_s, self.rss_mib = out, cpu_s, rss_mib


def measure(argv, limit_s=600):
    """Runs argv to completion (killed after `limit_s`); exits naming the tool, with what it said on stderr, when
    it fails. Only stdout is parsed: shootout's warnings (a saturated client, say) go to stderr, beside its JSON."""
    with tempfile.TemporaryFile(mode="w+") as err:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
        watchdog = threading.Timer(limit_s, process.kill)
        watchdog.start()
        try:
            with process.stdout:
                out = process.stdout.read()
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            watchdog.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(argv)} failed ({process.returncode}):\n{out}{err.read()}")
    return Measured(out, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def parse_shootout(out):
    """(responses, requests/s) from `shootout load --json`."""
    result = json.loads(out)
    responses = result["requests"]["ok"] + result["requests"]["http_errors"]
    return responses, result["throughput"]["requests_per_s"]


def parse_wrk(out):
    """(requests, requests/s) from wrk's or wrk2's summary."""
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
