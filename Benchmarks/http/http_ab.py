#!/usr/bin/env python3
"""Two `chime` builds compared on HTTP/1.1 GET /healthz and single adds, alternated.

    http_ab.py BEFORE AFTER [--rounds 3] [--seconds 10] [--dir DIR] [--perf OUT]

Each round starts a fresh `chime serve` of BEFORE, then of AFTER (as http_bench.py starts them),
and runs wrk (2 threads, 64 connections, keep-alive, Benchmarks/http/add.lua) for --seconds on
GET /healthz, then on POST /v1/apps/{app}/requests. It prints requests/s and the server's CPU µs
per request (from /proc/PID/stat over the wrk run) for each, then the means. On a shared machine
the figures of one binary move by tens of percent between runs; alternating is what compares
them. --perf OUT records `perf record -F 999 -g` of AFTER's last round into OUT/ab-{healthz,add}.data.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_bench as hb  # noqa: E402  (Server, proc_ticks, APP)


def run(binary, label, options, perf_dir=None):
    """{mode: (requests/s, server CPU µs per request)} of one fresh server."""
    server = hb.Server(binary, options.dir)
    token = server.register()
    figures = {}
    for mode in ("healthz", "add"):
        summary_path = os.path.join(server.dir, f"wrk-{mode}.json")
        env = dict(os.environ, CHIME_MODE=mode, CHIME_APP=hb.APP, CHIME_TOKEN=token,
                   CHIME_RUN=f"{label}-{int(time.time())}", CHIME_JSON=summary_path)
        perf = None
        if perf_dir:
            perf = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-o", os.path.join(perf_dir, f"ab-{mode}.data"),
                                     "-p", str(server.pid), "--", "sleep", str(max(1, options.seconds - 2))],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        before = hb.proc_ticks(server.pid)
        subprocess.run(["wrk", "-t", "2", "-c", "64", "-d", f"{options.seconds}s", "--timeout", "10s",
                        "-s", os.path.join(os.path.dirname(os.path.abspath(__file__)), "add.lua"), server.url],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        cpu = (hb.proc_ticks(server.pid) - before) / hb.TICKS
        if perf:
            perf.wait()
        summary = json.load(open(summary_path))
        done = summary["requests"] - summary["errorsStatus"]
        figures[mode] = (done / (summary["durationUs"] / 1e6), cpu * 1e6 / max(1, done))
        print(f"{label} {mode}: {figures[mode][0]:,.0f} /s, server CPU {figures[mode][1]:.1f} µs/request", flush=True)
    code, _ = server.stop()
    if code != 0:
        hb.fail(f"{label}: chime serve exited with {code}; see {server.log_path}")
    server.remove()
    return figures


def main():
    parser = argparse.ArgumentParser(description="two chime builds on HTTP/1.1 healthz and adds, alternated")
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--dir", default="Benchmarks/out/stores")
    parser.add_argument("--perf", help="directory for perf data of AFTER's last round")
    options = parser.parse_args()
    os.makedirs(options.dir, exist_ok=True)
    runs = {"before": [], "after": []}
    for round_number in range(1, options.rounds + 1):
        runs["before"].append(run(options.before, f"before-r{round_number}", options))
        last = round_number == options.rounds
        runs["after"].append(run(options.after, f"after-r{round_number}", options, options.perf if last else None))
    for mode in ("healthz", "add"):
        means = {label: [sum(one[mode][i] for one in figures) / len(figures) for i in (0, 1)] for label, figures in runs.items()}
        print(f"mean {mode}: before {means['before'][0]:,.0f} /s, {means['before'][1]:.1f} µs; "
              f"after {means['after'][0]:,.0f} /s, {means['after'][1]:.1f} µs "
              f"({100 * (means['after'][1] / means['before'][1] - 1):+.0f}% CPU per request)")


if __name__ == "__main__":
    main()
