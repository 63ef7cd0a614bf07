#!/usr/bin/env python3
"""Checks one smoke run of an example suite (shootout run --smoke): every server of the suite answered (each of
its trials has responses with status < 400, or sent nothing in its window while another trial of the server had
them, and no trial failed) over the protocol the suite gives it, was sampled
(its process tree was read while measured, with CPU time spent), and appears in the HTML report; each service was
sampled beside every server that needs it. A run with --profile (it has profiles/) gave every server a profile
with samples, a flame graph in the report, and the profiler's cost beside the unprofiled trials.

    python3 scripts/check-smoke.py examples/rack-hello.toml results/rack-hello-20261122-101500
"""
import html
import json
import pathlib
import sys
import tomllib


def main(suite_file: str, results_dir: str) -> int:
    suite = tomllib.loads(pathlib.Path(suite_file).read_text())
    results = pathlib.Path(results_dir)
    report = (results / "report.html").read_text()
    trials = [json.loads(p.read_text()) for p in sorted(results.glob("trials/*/*.json"))]
    failed = sorted(str(p.relative_to(results)) for p in results.glob("trials/*/*.failed"))
    problems = [f"{name}: {(results / name).read_text().strip()}" for name in failed]
    # The servers as shootout ran them: a server with a matrix stands for one per combination of its values, and
    # environment.json names each (an expanded server is held to [load]'s protocol, a listed one to its own).
    defined = {server["name"]: server for server in suite["server"]}
    templates = [server for server in suite["server"] if "matrix" in server]
    environment = json.loads((results / "environment.json").read_text())
    names = [name for name, _ in environment["server_cpus"]]
    expected = len(suite["server"]) - len(templates)
    for template in templates:
        count = 1
        for values in template["matrix"].values():
            count *= len(values)
        expected += count
    if len(names) != expected:
        problems.append(f"{len(names)} servers ran, where the suite's servers and matrices stand for {expected}")
    for name in names:
        server = defined.get(name, {})
        protocol = server.get("protocol", suite.get("load", {}).get("protocol", "http1"))
        mine = [t for t in trials if t["server"] == name]
        if not mine:
            problems.append(f"{name}: no trial was measured")
            continue
        for t in mine:
            where = f"{name} at {t['level']:g}"
            spoken = t["result"]["options"].get("protocol", "http1")
            if spoken != protocol:
                problems.append(f"{where}: loaded over {spoken}, but the suite gives it {protocol}")
            requests = t["result"]["requests"]
            # One user with think times may send nothing in a smoke window: such a trial is no fault while the
            # server answered at its other level; a request sent and not answered well is one.
            answered_elsewhere = any(o["result"]["requests"]["ok"] > 0 for o in mine)
            if requests["ok"] == 0 and (requests["total"] > 0 or not answered_elsewhere):
                problems.append(f"{where}: no successful response ({t['result']['status_counts']}, {t['result']['errors']})")
            measured = [s for s in t["samples"] if s["t_s"] > 0]
            if not measured or t["usage"]["cpu_s"] <= 0 or t["usage"]["pss_max_bytes"] <= 0:
                problems.append(f"{where}: its process tree was not sampled ({len(measured)} samples, usage {t['usage']})")
            for service in t.get("services", []):
                if not service["samples"] or service["usage"]["pss_max_bytes"] <= 0:
                    problems.append(f"{where}: service {service['name']} was not sampled ({service['usage']})")
        if html.escape(name) not in report:
            problems.append(f"{name}: missing from {results / 'report.html'}")
    # Each service of the suite was sampled beside the servers that need it (every server, unless it says).
    for service in suite.get("service", []):
        for name in names:
            if service["name"] not in defined.get(name, {}).get("needs", [service["name"]]):
                continue
            beside = [t for t in trials if t["server"] == name and any(s["name"] == service["name"] for s in t.get("services", []))]
            if len(beside) != len([t for t in trials if t["server"] == name]):
                problems.append(f"{name}: service {service['name']} is missing from some of its trials")
    profiles = results / "profiles"
    if profiles.is_dir():
        saved = [json.loads(p.read_text()) for p in sorted(profiles.glob("*.json"))]
        for name in names:
            mine = [p for p in saved if p["server"] == name]
            if not mine or mine[0]["samples"] <= 0:
                problems.append(f"{name}: no profile with samples in {profiles}")
            elif f'title="flame graph of {html.escape(name, quote=False)}"' not in report:
                problems.append(f"{name}: no flame graph in {results / 'report.html'}")
        costs = report.count("against the unprofiled trials at this level")
        if costs != len(names):
            problems.append(f"the report gives the profiler's cost for {costs} of {len(names)} servers")
    for line in problems:
        print(f"check-smoke: {suite_file}: {line}", file=sys.stderr)
    if not problems:
        profiled = ", were profiled" if profiles.is_dir() else ""
        print(f"check-smoke: {suite_file}: {len(names)} servers answered, were sampled{profiled} and are in the report")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: check-smoke.py SUITE.toml RESULTS_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
