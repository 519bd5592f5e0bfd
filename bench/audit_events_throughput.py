"""Authenticated ``GET /v1/audit-events`` throughput as a fraction of a bare Litestar GET (ARCHITECTURE.md §11).

Both servers run in this process's lifetime on this machine, behind the same stack (granian, ASGI, one
worker), and take the same load: a fixed number of keep-alive connections, one request in flight each.
Run: ``.venv/bin/python bench/audit_events_throughput.py`` (or ``make bench``); see bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results" / "audit_events_throughput.json"
CALLWRIGHT = Path(sys.executable).with_name("callwright")
HOST = "127.0.0.1"  # loopback only
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0
CLIENT_BOUND = 0.9  # cores: above this the load generator, not the server, set the pace


# --- processes ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class Server:
    """A server child process; stopped with SIGINT (then SIGKILL after a timeout), by its own pid."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], port: int, log: Path) -> None:
        self.name, self.port, self.log_path = name, port, log
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, path: str) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} exited early:\n{self.log_path.read_text(errors='replace')}")
            try:
                if httpx.get(f"http://{HOST}:{self.port}{path}", timeout=1.0, trust_env=False).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"{self.name} did not answer {path} within {READY_TIMEOUT:.0f} s")

    def processes(self) -> list[psutil.Process]:
        try:
            parent = psutil.Process(self.process.pid)
            return [parent, *parent.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=STOP_TIMEOUT)
        self._log.close()


def postgres_processes(data_dir: Path) -> list[psutil.Process]:
    try:
        postmaster = psutil.Process(int((data_dir / "pgdata" / "postmaster.pid").read_text().split()[0]))
        return [postmaster, *postmaster.children(recursive=True)]
    except (OSError, ValueError, psutil.Error):
        return []


def cpu_seconds(processes: list[psutil.Process]) -> dict[int, float]:
    seconds: dict[int, float] = {}
    for process in processes:
        try:
            times = process.cpu_times()
            seconds[process.pid] = times.user + times.system
        except psutil.Error:
            pass
    return seconds


def cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds between two snapshots; processes started in between (new backends) count from zero."""
    return sum(max(0.0, seconds - before.get(pid, 0.0)) for pid, seconds in after.items())


# --- load -----------------------------------------------------------------------------------------


@dataclass
class Window:
    start: float
    end: float


@dataclass
class Tally:
    ok: int = 0
    errors: dict[int, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)

    def record(self, window: Window, status: int, started: float, done: float) -> None:
        if not window.start <= done < window.end:
            return
        if status == 200:
            self.ok += 1
            self.latencies.append(done - started)
        else:
            self.errors[status] = self.errors.get(status, 0) + 1


async def raw_connection(port: int, request: bytes, window: Window, tally: Tally) -> None:
    """HTTP/1.1 keep-alive over a bare socket: the client stays far cheaper than either server."""
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        while (started := time.perf_counter()) < window.end:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            await reader.readexactly(length)
            tally.record(window, int(head[9:12]), started, time.perf_counter())
    finally:
        writer.close()


async def httpx_connection(client: httpx.AsyncClient, url: str, headers: dict[str, str], window: Window,
                           tally: Tally) -> None:
    while (started := time.perf_counter()) < window.end:
        response = await client.get(url, headers=headers)
        tally.record(window, response.status_code, started, time.perf_counter())


async def drive(port: int, path: str, key: str, args: argparse.Namespace) -> Tally:
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
    now = time.perf_counter()
    window = Window(start=now + args.warmup, end=now + args.warmup + args.duration)
    tally = Tally()
    if args.client == "httpx":
        limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=args.concurrency)
        async with httpx.AsyncClient(limits=limits, timeout=30.0, trust_env=False) as client:
            url = f"http://{HOST}:{port}{path}"
            await asyncio.gather(*(httpx_connection(client, url, headers, window, tally)
                                   for _ in range(args.concurrency)))
    else:
        lines = [f"GET {path} HTTP/1.1", f"Host: {HOST}:{port}", *(f"{k}: {v}" for k, v in headers.items())]
        request = ("\r\n".join(lines) + "\r\n\r\n").encode()
        await asyncio.gather(*(raw_connection(port, request, window, tally) for _ in range(args.concurrency)))
    return tally


def measure(label: str, port: int, path: str, key: str, args: argparse.Namespace,
            server: Callable[[], list[psutil.Process]], database: Callable[[], list[psutil.Process]]) -> dict[str, Any]:
    before = (cpu_seconds(server()), cpu_seconds(database()), time.process_time())
    tally = asyncio.run(drive(port, path, key, args))
    elapsed = args.warmup + args.duration
    used = (cpu_used(before[0], cpu_seconds(server())), cpu_used(before[1], cpu_seconds(database())),
            time.process_time() - before[2])
    latencies = sorted(tally.latencies) or [0.0]
    return {
        "label": label,
        "path": path,
        "requests": tally.ok,
        "errors": tally.errors,
        "requests_per_s": tally.ok / args.duration,
        "latency_ms": {
            "p50": 1000 * statistics.median(latencies),
            "p99": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        },
        # CPU cores busy over warm-up plus measurement: shows which side was the bottleneck.
        "cores": {"server": used[0] / elapsed, "database": used[1] / elapsed, "client": used[2] / elapsed},
    }


# --- setup ----------------------------------------------------------------------------------------


def approved_key(port: int, env: dict[str, str]) -> str:
    email = "bench@example.com"
    with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=30.0, trust_env=False) as http:
        signup = http.post("/auth/signup", json={"email": email, "password": "correct horse battery staple"})
        signup.raise_for_status()
        key = signup.json()["secret"]
        done = subprocess.run([str(CALLWRIGHT), "admin", "approve", email], env=env, capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SystemExit(f"callwright admin approve failed:\n{done.stderr}")
        check = http.get("/v1/audit-events", headers={"Authorization": f"Bearer {key}"})
        if check.status_code != 200 or check.headers.get("x-ratelimit-limit") != "1000000":
            raise SystemExit(f"the approved key does not work as expected: {check.status_code} {check.text}")
    return key


def report(results: dict[str, Any]) -> None:
    print(f"\nGET throughput, {results['concurrency']} connections, {results['duration_s']:.0f} s each "
          f"after {results['warmup_s']:.0f} s warm-up, {results['client']} client, {results['cpus']} CPUs")
    print(f"{'target':<34} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'server':>7} {'db':>6} {'client':>7}")
    for run in (results["ceiling"], results["app"]):
        cores = run["cores"]
        print(f"{run['label']:<34} {run['requests_per_s']:>9.0f} {run['latency_ms']['p50']:>8.2f} "
              f"{run['latency_ms']['p99']:>8.2f} {cores['server']:>7.2f} {cores['database']:>6.2f} "
              f"{cores['client']:>7.2f}")
        if run["errors"]:
            print(f"  non-200 answers: {run['errors']}")
    print(f"\nresult: /v1/audit-events runs at {results['ratio']:.3f} of the bare Litestar ceiling "
          f"({results['app']['requests_per_s']:.0f} / {results['ceiling']['requests_per_s']:.0f} req/s)")
    print("(server/db/client columns: CPU cores busy while the load ran)")
    if results["ceiling"]["cores"]["client"] > CLIENT_BOUND:
        print("warning: the load generator used a whole core on the ceiling run, so the ceiling is the "
              "client's, not the server's, and the ratio is overstated")


def bench_env(data_dir: Path, app_port: int) -> dict[str, str]:
    """A benchmarked server's environment: nothing inherited from CALLWRIGHT_*, quiet logs, and a
    rate-limit tier so high that the limiter is exercised but never hit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLWRIGHT_")}
    env.update(CALLWRIGHT_HOST=HOST, CALLWRIGHT_PORT=str(app_port), CALLWRIGHT_DATA_DIR=str(data_dir),
               CALLWRIGHT_LOG_LEVEL="warning", CALLWRIGHT_RATE_LIMIT_TIERS='{"standard": 1000000}')
    return env


def start_pair(workdir: Path, env: dict[str, str], app_port: int, bare_port: int,
               servers: list[Server]) -> tuple[Server, Server, str]:
    """``callwright serve`` and the bare ceiling app, both ready, plus an approved key. Each server
    is appended to ``servers`` as soon as it starts, so the caller's cleanup stops it."""
    app = Server("callwright serve", [str(CALLWRIGHT), "serve"], env, app_port, workdir / "serve.log")
    servers.append(app)
    bare = Server("bare app", [sys.executable, str(BENCH_DIR / "bare_app.py"), "--host", HOST,
                               "--port", str(bare_port)], env, bare_port, workdir / "bare.log")
    servers.append(bare)
    app.wait_ready("/healthz")
    bare.wait_ready("/bare")
    return app, bare, approved_key(app_port, env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per target")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of load before measuring")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw",
                        help="raw keep-alive sockets (default) or httpx.AsyncClient")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below stops the servers

    workdir = Path(tempfile.mkdtemp(prefix="callwright-bench-"))
    data_dir, app_port, bare_port = workdir / "var", free_port(), free_port()
    env = bench_env(data_dir, app_port)
    servers: list[Server] = []
    try:
        app, bare, key = start_pair(workdir, env, app_port, bare_port, servers)

        ceiling = measure("bare Litestar GET /bare", bare_port, "/bare", key, args, bare.processes, list)
        measured = measure("GET /v1/audit-events", app_port, "/v1/audit-events", key, args, app.processes,
                           lambda: postgres_processes(data_dir))
    finally:
        for server in reversed(servers):
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    results = {
        "benchmark": "audit_events_throughput",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "cpus": os.cpu_count(),
        "concurrency": args.concurrency,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "client": args.client,
        "ceiling": ceiling,
        "app": measured,
        "ratio": measured["requests_per_s"] / ceiling["requests_per_s"] if ceiling["requests_per_s"] else 0.0,
    }
    report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {args.output}")
    return 1 if ceiling["errors"] or measured["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
