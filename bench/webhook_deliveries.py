"""Webhook deliveries/s to a loopback receiver against raw ``httpx`` posts to the same receiver,
and the first attempt's latency after a call ends (ARCHITECTURE.md §11).

In one run, on this machine:

1. A loopback HTTP receiver in its own process (this file with ``--serve-receiver``): plain asyncio,
   HTTP/1.1 keep-alive, answers every POST ``200`` with a tiny body and records the arrival time
   (``time.time()``), the path, ``X-Service-Delivery-Id``, the payload's ``data.call_id`` and the
   connection the request came on.
2. The ceiling: ``httpx.AsyncClient`` posts of a real delivery's body, signed like an attempt, to
   that receiver at the dispatcher's concurrency (8 per endpoint, at most 64 in all).
3. ``callwright serve`` (webhooks allowed to loopback over http) with E endpoints that point at the
   receiver. Simulated calls that fail at once (``consent_type=emergency`` skips call hours,
   ``answered_by=fax`` ends the call with no conversation): first at a low rate (one call every
   50 ms), then a burst of N calls over a few connections. Each call makes one ``call.completed``
   delivery per endpoint. It reports deliveries/s over the window in which they arrive, the ratio to
   the ceiling, and the first attempt's latency (arrival at the receiver minus the call's
   ``ended_at`` from ``GET /v1/calls/{id}``) for both modes.
4. Correctness: every delivery arrived exactly once, and ``GET /v1/webhooks/{id}/deliveries``
   totals agree with what the receiver saw.

``--scenario fairness`` measures instead what slow endpoints of one tenant cost another (issue 13,
item 3; docs/decisions.md 33): tenant B's first-attempt latency at a low call rate alone (the
ceiling, same run), then again while tenant A ends calls to 20 endpoints that answer only after
the sender's timeout. It prints B's p50/p99 in ms against the 250 ms target and as ratios to B alone.

Run: ``.venv/bin/python bench/webhook_deliveries.py [--scenario fairness]``; see bench/README.md.
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
import time
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import psutil

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

RESULTS = BENCH_DIR / "results" / "webhook_deliveries.json"
PER_ENDPOINT = 8  # WebhookDispatcher's defaults (entrypoints/workers/webhook_dispatcher.py)
DISPATCHER_CONCURRENCY = 64
OK_RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
# Issue 20, item 3: the burst's deliveries/s against the raw posts/s, the burst's first-attempt p99 and
# the low rate's (20 calls/s) first-attempt p99, in ms.
TARGET_RATIO, TARGET_BURST_P99_MS, TARGET_LOW_P99_MS = 0.8, 3000.0, 250.0
PROFILE_RATE = 100  # py-spy samples/s, --nonblocking: the worker is never paused, so the burst is not slowed


# --- the receiver (its own process) ---------------------------------------------------------------


def serve_receiver(host: str, port: int, slow_seconds: float = 0.0) -> None:
    """Answers every POST 200 ``ok``, a POST to ``/slow/…`` only after ``slow_seconds``; ``GET /_count``,
    ``/_records?from=N`` and ``/_sample`` are for the bench. One record per POST: [arrival
    time.time(), path, delivery id, data.call_id, connection]."""
    records: list[list[Any]] = []
    sample: dict[str, Any] = {}
    connections = iter(range(1, 10**9))
    opened = [0]

    def reply(payload: Any) -> bytes:
        body = json.dumps(payload).encode()
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode() + b"\r\n\r\n" + body)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = next(connections)
        opened[0] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                method, target = lines[0].split(b" ", 2)[:2]
                length, delivery, headers = 0, None, {}
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    key = name.strip().lower()
                    if key == b"content-length":
                        length = int(value)
                    elif key == b"x-service-delivery-id":
                        delivery = value.strip().decode()
                    if key:
                        headers[key.decode()] = value.strip().decode()
                body = await reader.readexactly(length) if length else b""
                arrived = time.time()
                path = target.decode()
                if method == b"POST":
                    try:
                        call_id = json.loads(body)["data"]["call_id"]
                    except (ValueError, KeyError, TypeError):
                        call_id = None
                    records.append([arrived, path, delivery, call_id, connection])
                    if path.startswith("/hook/") and not sample:
                        sample.update(body=body.decode(), headers=headers)
                    if path.startswith("/slow/"):
                        await asyncio.sleep(slow_seconds)
                    writer.write(OK_RESPONSE)
                elif path == "/_count":
                    writer.write(reply({"records": len(records), "connections": opened[0]}))
                elif path.startswith("/_records"):
                    start = int(path.partition("from=")[2] or 0)
                    writer.write(reply(records[start:]))
                elif path == "/_sample":
                    writer.write(reply(sample))
                else:
                    writer.write(OK_RESPONSE)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, host, port, backlog=1024)
        async with server:
            await server.serve_forever()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass


# --- the bench --------------------------------------------------------------------------------------

if __name__ == "__main__" and "--serve-receiver" in sys.argv:  # the receiver needs none of the imports below
    serve_receiver(sys.argv[sys.argv.index("--host") + 1], int(sys.argv[sys.argv.index("--port") + 1]),
                   float(sys.argv[sys.argv.index("--slow-seconds") + 1]) if "--slow-seconds" in sys.argv else 0.0)
    sys.exit(0)

from audit_events_throughput import (  # noqa: E402 - the shared process and CPU helpers
    CLIENT_BOUND,
    HOST,
    Server,
    approved_key,
    bench_env,
    cpu_seconds,
    cpu_used,
    free_port,
    postgres_processes,
)
from calls_create import (  # noqa: E402
    PY_SPY,
    granian_worker,
    percentile,
    post_request,
    stop_orphaned_postgres,
    summarise,
    thread_cpu,
    thread_names,
    thread_split,
)
from summary import record  # noqa: E402

from domain.webhooks import signing  # noqa: E402
from entrypoints.cli.demo import CANDIDATES, FACTS, OUTCOME_SCHEMA, reachable_destination  # noqa: E402

CALLWRIGHT = Path(sys.executable).with_name("callwright")
# structlog JSON lines at error or above, granian's own, and tracebacks (``"error": null`` is not one)
LOG_PROBLEM = re.compile(r'"level": "(error|critical|exception)"|\[(ERROR|CRITICAL)\]|^Traceback')


class Receiver(Server):
    def __init__(self, workdir: Path, env: dict[str, str], slow_seconds: float = 0.0) -> None:
        port = free_port()
        super().__init__("receiver", [sys.executable, str(Path(__file__).resolve()), "--serve-receiver",
                                      "--host", HOST, "--port", str(port), "--slow-seconds", str(slow_seconds)],
                         env, port, workdir / "receiver.log")
        self.url = f"http://{HOST}:{port}"
        self.http = httpx.Client(base_url=self.url, timeout=30.0, trust_env=False)

    def count(self) -> dict[str, int]:
        return self.http.get("/_count").json()

    def records(self, start: int = 0) -> list[list[Any]]:
        return self.http.get(f"/_records?from={start}").json()

    def sample(self) -> dict[str, Any]:
        return self.http.get("/_sample").json()

    def wait_for(self, total: int, timeout: float, interval: float = 0.1) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.count()["records"] >= total:
                return True
            time.sleep(interval)
        return False

    def stop(self) -> None:
        self.http.close()
        super().stop()


class CpuMeter:
    """CPU seconds of each side between ``start()`` and ``stop()``, as cores over the wall time."""

    def __init__(self, sides: dict[str, Callable[[], list[psutil.Process]]]) -> None:
        self.sides = sides

    def start(self) -> None:
        self.before = {name: cpu_seconds(processes()) for name, processes in self.sides.items()}
        self.client_before, self.started = time.process_time(), time.perf_counter()

    def stop(self) -> dict[str, float]:
        elapsed = time.perf_counter() - self.started
        cores = {name: cpu_used(self.before[name], cpu_seconds(processes())) / elapsed
                 for name, processes in self.sides.items()}
        cores["client"] = (time.process_time() - self.client_before) / elapsed
        return {k: round(v, 3) for k, v in cores.items()} | {"seconds": round(elapsed, 2)}


class BurstProfile:
    """``py-spy record --nonblocking --gil`` of the granian worker for ``seconds`` (the worker is never
    paused, so the burst it watches runs at its own pace); summarised like calls_create.py's."""

    def __init__(self, pid: int, seconds: float, output: Path) -> None:
        self.seconds, self.output = max(1, round(seconds)), output
        self.process = subprocess.Popen(
            [str(PY_SPY), "record", "-p", str(pid), "-d", str(self.seconds), "-r", str(PROFILE_RATE), "-f", "raw",
             "--threads", "--nolineno", "--gil", "--nonblocking", "-o", str(output)],
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
        return summarise(self.output.read_text(), PROFILE_RATE * self.seconds)


# --- raw HTTP client (keep-alive over asyncio streams, like the other benches) -----------------------


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> tuple[int, bytes]:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return int(head[9:12]), await reader.readexactly(length)


def get_request(port: int, path: str, key: str) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAuthorization: Bearer {key}\r\n"
            "Accept: application/json\r\n\r\n").encode()


async def create_calls(port: int, key: str, body: bytes, count: int, connections: int,
                       interval: float | None = None) -> dict[str, Any]:
    """``count`` creates over ``connections`` keep-alive connections, one in flight each; with
    ``interval``, one connection paced at one create per ``interval`` seconds."""
    calls: list[str] = []
    errors: Counter[str] = Counter()
    issued = iter(range(count))
    run = uuid.uuid4().hex[:8]
    started = time.perf_counter()
    paced_at = [started]

    async def one_connection(number: int) -> None:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            for index in issued:
                if interval is not None:
                    paced_at[0] += interval if index else 0.0
                    await asyncio.sleep(max(0.0, paced_at[0] - time.perf_counter()))
                status, answer = await exchange(reader, writer, post_request(
                    port, "/v1/calls", key, body, f"bench-webhooks-{run}-{number}-{index}"))
                if status == 201:
                    calls.append(json.loads(answer)["call_id"])
                else:
                    errors[f"{status} {answer[:200].decode(errors='replace')}"] += 1
        finally:
            writer.close()

    await asyncio.gather(*(one_connection(c) for c in range(1 if interval is not None else connections)))
    elapsed = time.perf_counter() - started
    return {"calls": calls, "errors": dict(errors), "seconds": elapsed,
            "creates_per_s": len(calls) / elapsed if elapsed else 0.0}


async def fetch_calls(port: int, key: str, call_ids: list[str], connections: int = 4) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    pending = iter(call_ids)

    async def one_connection() -> None:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            for call_id in pending:
                status, answer = await exchange(reader, writer, get_request(port, f"/v1/calls/{call_id}", key))
                found[call_id] = json.loads(answer) if status == 200 else {"http_status": status}
        finally:
            writer.close()

    await asyncio.gather(*(one_connection() for _ in range(connections)))
    return found


def parse_time(value: str | None) -> float | None:
    return None if value is None else datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


# --- the ceiling ----------------------------------------------------------------------------------


async def raw_posts(url: str, body: bytes, secret: str, total: int, concurrency: int) -> dict[str, Any]:
    """``total`` posts with httpx, ``concurrency`` in flight, each signed like an attempt."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    statuses: Counter[int] = Counter()
    remaining = iter(range(total))
    async with httpx.AsyncClient(limits=limits, timeout=30.0, trust_env=False) as client:
        async def worker() -> None:
            for _ in remaining:
                headers = signing.headers(secret, int(time.time()), body, event_type="call.completed",
                                          delivery_uuid=str(uuid.uuid4()))
                response = await client.post(url, content=body, headers=headers)
                statuses[response.status_code] += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return {"statuses": dict(statuses), "client_seconds": elapsed}


async def socket_posts(port: int, body: bytes, secret: str, total: int, concurrency: int) -> dict[str, Any]:
    """The same posts over bare keep-alive sockets: shows what the receiver takes when the client is cheap."""
    statuses: Counter[int] = Counter()
    remaining = iter(range(total))

    async def one_connection() -> None:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            for _ in remaining:
                headers = signing.headers(secret, int(time.time()), body, event_type="call.completed",
                                          delivery_uuid=str(uuid.uuid4()))
                head = ["POST /socket HTTP/1.1", f"Host: {HOST}:{port}", f"Content-Length: {len(body)}",
                        *(f"{k}: {v}" for k, v in headers.items())]
                status, _ = await exchange(reader, writer, ("\r\n".join(head) + "\r\n\r\n").encode() + body)
                statuses[status] += 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(one_connection() for _ in range(concurrency)))
    return {"statuses": dict(statuses), "client_seconds": time.perf_counter() - started}


# --- figures --------------------------------------------------------------------------------------


def distribution(values: list[float]) -> dict[str, float | int]:
    if not values:
        return {"count": 0}
    return {"count": len(values), "p50": 1000 * statistics.median(values), "p95": 1000 * percentile(values, 0.95),
            "p99": 1000 * percentile(values, 0.99), "max": 1000 * max(values), "min": 1000 * min(values)}


def arrival_window(records: list[list[Any]]) -> dict[str, Any]:
    times = sorted(r[0] for r in records)
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    return {"count": len(times), "first": times[0] if times else None, "last": times[-1] if times else None,
            "seconds": span, "per_s": (len(times) - 1) / span if span else 0.0,
            "connections_used": len({r[4] for r in records})}


def phase_figures(name: str, records: list[list[Any]], calls: dict[str, dict[str, Any]], endpoints: int,
                  creates: dict[str, Any], cores: dict[str, float], seen_connections: set[int]) -> dict[str, Any]:
    """Deliveries of this phase's calls: window, rate, latency after ``ended_at``, duplicates, misses."""
    ours = [r for r in records if r[1].startswith("/hook/") and r[3] in calls]
    window = arrival_window(ours)
    ended = {c: parse_time(body.get("ended_at")) for c, body in calls.items()}
    first: dict[tuple[str, str], float] = {}
    for arrived, path, _, call_id, _ in sorted(ours):
        first.setdefault((call_id, path), arrived)
    latencies = [arrived - ended[call_id] for (call_id, _), arrived in first.items() if ended.get(call_id)]
    ended_times = sorted(t for t in ended.values() if t is not None)
    ended_span = ended_times[-1] - ended_times[0] if len(ended_times) > 1 else 0.0
    after_last_end = [r for r in ours if ended_times and r[0] > ended_times[-1]]
    tail = arrival_window(after_last_end) if after_last_end else {"count": 0, "per_s": 0.0, "seconds": 0.0}
    if after_last_end and ended_times:  # from the last call's end to the last arrival
        span = max(r[0] for r in after_last_end) - ended_times[-1]
        tail["per_s"] = len(after_last_end) / span if span else 0.0
        tail["seconds"] = span
    connections = {r[4] for r in ours}
    new_connections = connections - seen_connections
    seen_connections |= connections
    statuses = Counter(body.get("status", f"http {body.get('http_status')}") for body in calls.values())
    return {
        "label": name,
        "calls": len(calls),
        "call_statuses": dict(statuses),
        "expected_deliveries": len(calls) * endpoints,
        "arrived": len(ours),
        "distinct_pairs": len(first),
        "missing": len(calls) * endpoints - len(first),
        "duplicate_arrivals": len(ours) - len(first),
        "creates_per_s": creates["creates_per_s"],
        "create_seconds": creates["seconds"],
        "create_errors": creates["errors"],
        "calls_ended_window_s": ended_span,
        "calls_ended_per_s": (len(ended_times) - 1) / ended_span if ended_span else 0.0,
        "deliveries_window": window,
        "deliveries_per_s": window["per_s"],
        "after_last_call_ended": tail,
        "connections_new": len(new_connections),
        "latency_after_ended_ms": distribution(latencies),
        "cores": cores,
    }


def deliveries_api(port: int, key: str, endpoint_ids: list[str]) -> dict[str, Any]:
    """Per endpoint: totals by status; and every delivery's uuid, call, scheduling time
    (``created_at``), first attempt and the sender's own latency, to split the latency in two."""
    totals: dict[str, dict[str, int]] = {}
    rows: list[dict[str, Any]] = []
    with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=60.0, trust_env=False,
                      headers={"Authorization": f"Bearer {key}"}) as http:
        for endpoint_id in endpoint_ids:
            counts = {}
            for status in ("delivered", "pending", "failed", "permanently_failed", "cancelled"):
                answer = http.get(f"/v1/webhooks/{endpoint_id}/deliveries", params={"status": status, "limit": 1})
                answer.raise_for_status()
                counts[status] = answer.json()["total"]
            totals[endpoint_id] = counts
            offset = 0
            while True:
                page = http.get(f"/v1/webhooks/{endpoint_id}/deliveries", params={"limit": 100, "offset": offset})
                page.raise_for_status()
                data = page.json()["data"]
                for row in data:
                    attempts = row["attempts"] or []
                    rows.append({"delivery_uuid": row["delivery_uuid"], "call_id": row["call_id"],
                                 "scheduled": parse_time(row["created_at"]), "attempts": len(attempts),
                                 "recorded": parse_time(attempts[0]["at"]) if attempts else None,
                                 "sender_s": attempts[0]["latency_ms"] / 1000 if attempts else None})
                offset += len(data)
                if len(data) < 100:
                    break
    return {"totals": totals, "rows": rows}


def split_latency(rows: list[dict[str, Any]], calls: dict[str, dict[str, Any]],
                  arrivals: dict[str, float]) -> dict[str, Any]:
    """For one phase's deliveries: ended_at -> scheduled (the webhook_scheduler reactor) -> arrival
    at the receiver (the dispatcher: lease, sign, post) -> result recorded; and the scheduling rate."""
    ended = {c: parse_time(b.get("ended_at")) for c, b in calls.items()}
    ours = [r for r in rows if r["call_id"] in calls]
    scheduled = [r["scheduled"] - ended[r["call_id"]] for r in ours if ended.get(r["call_id"]) and r["scheduled"]]
    dispatched = [arrivals[r["delivery_uuid"]] - r["scheduled"] for r in ours
                  if r["delivery_uuid"] in arrivals and r["scheduled"]]
    recorded = [r["recorded"] - arrivals[r["delivery_uuid"]] for r in ours
                if r["delivery_uuid"] in arrivals and r["recorded"]]
    times = sorted(r["scheduled"] for r in ours if r["scheduled"])
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    return {"scheduled_after_ended_ms": distribution(scheduled),
            "arrived_after_scheduled_ms": distribution(dispatched),
            "recorded_after_arrival_ms": distribution(recorded),
            "sender_latency_ms": distribution([r["sender_s"] for r in ours if r["sender_s"] is not None]),
            "scheduled_per_s": (len(times) - 1) / span if span else 0.0,
            "attempts_per_delivery": dict(Counter(r["attempts"] for r in ours))}


def latency_trend(records: list[list[Any]], calls: dict[str, dict[str, Any]], order: list[str],
                  parts: int = 4) -> list[float]:
    """Median latency after ended_at (ms) of each successive quarter of the phase's calls, in the order
    they were created: a latency that grows from quarter to quarter is a queue that grows."""
    first: dict[tuple[str, str], float] = {}
    for arrived, path, _, call_id, _ in sorted(records):
        if path.startswith("/hook/") and call_id in calls:
            first.setdefault((call_id, path), arrived)
    by_call: dict[str, list[float]] = {}
    for (call_id, _), arrived in first.items():
        ended = parse_time(calls[call_id].get("ended_at"))
        if ended is not None:
            by_call.setdefault(call_id, []).append(arrived - ended)
    medians = []
    size = max(1, len(order) // parts)
    for start in range(0, size * parts, size):
        values = [v for call_id in order[start:start + size] for v in by_call.get(call_id, [])]
        medians.append(round(1000 * statistics.median(values), 1) if values else 0.0)
    return medians


def log_problems(path: Path) -> dict[str, Any]:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return {"lines": 0, "examples": []}
    found = [line for line in lines if LOG_PROBLEM.search(line)]
    warnings = [line for line in lines if '"level": "warning"' in line or "[WARNING]" in line]
    kinds = Counter(re.sub(r"\d+", "N", line)[:120] for line in found)
    return {"lines": len(found), "examples": [line[:300] for line in found[:5]],
            "kinds": dict(kinds.most_common(8)), "warnings": len(warnings), "log_lines": len(lines)}


# --- report ---------------------------------------------------------------------------------------


def report(results: dict[str, Any]) -> None:
    load = results["load_average_1m"]
    print(f"\nwebhook deliveries, {results['endpoints']} endpoints, {results['cpus']} CPUs, calls: "
          f"{results['call_kind']}; 1-minute load average {load['start']} at the start, {load['end']} at the end")
    if load["start"] > 0.5 * (results["cpus"] or 1):
        print("note: the machine was busy with other work; absolute figures and ratios are noisier than usual")
    print(f"{'target':<52} {'posts':>6} {'per s':>7} {'window s':>9} {'server':>7} {'db':>6} {'recv':>6} "
          f"{'client':>7}")
    ceiling = results["ceiling"]
    rows = [(f"raw httpx posts, {ceiling['concurrency']} in flight", ceiling["arrived"], ceiling["posts_per_s"],
             ceiling["window"]["seconds"], ceiling["cores"])]
    sockets = results["receiver_check"]
    rows.append((f"raw socket posts, {sockets['concurrency']} in flight (not the ceiling)", sockets["arrived"],
                 sockets["posts_per_s"], sockets["window"]["seconds"], sockets["cores"]))
    for phase in (results["low_rate"], results["burst"]):
        rows.append((phase["label"], phase["arrived"], phase["deliveries_per_s"],
                     phase["deliveries_window"]["seconds"], phase["cores"]))
    for label, count, rate, span, cores in rows:
        print(f"{label:<52} {count:>6} {rate:>7.0f} {span:>9.2f} {cores['server']:>7.2f} {cores['database']:>6.2f} "
              f"{cores['receiver']:>6.2f} {cores['client']:>7.2f}")
    burst = results["burst"]
    verdict = "met" if results["ratio"] >= TARGET_RATIO else "MISSED"
    print(f"\nresult: deliveries/raw posts = {results['ratio']:.3f}  "
          f"({burst['deliveries_per_s']:.0f} / {ceiling['posts_per_s']:.0f} per s; target >= {TARGET_RATIO}: {verdict})")
    print(f"  burst: {burst['calls']} calls created at {burst['creates_per_s']:.0f}/s over {burst['create_seconds']:.2f} s;"
          f" they ended at {burst['calls_ended_per_s']:.0f}/s (x{results['endpoints']} = "
          f"{burst['calls_ended_per_s'] * results['endpoints']:.0f} deliveries/s offered); after the last call "
          f"ended, {burst['after_last_call_ended']['count']} deliveries arrived in "
          f"{burst['after_last_call_ended']['seconds']:.2f} s ({burst['after_last_call_ended']['per_s']:.0f}/s)")
    print("\nfirst attempt: arrival at the receiver minus the call's ended_at (ms):")
    for phase, target in ((results["low_rate"], TARGET_LOW_P99_MS), (results["burst"], TARGET_BURST_P99_MS)):
        lat = phase["latency_after_ended_ms"]
        if lat["count"]:
            verdict = "met" if lat["p99"] < target else "MISSED"
            print(f"  {phase['label']:<40} p50 {lat['p50']:7.1f}  p95 {lat['p95']:7.1f}  p99 {lat['p99']:7.1f}  "
                  f"max {lat['max']:7.1f}  (n={lat['count']}, p99 target < {target:.0f}: {verdict})")
    print("\nwhere it goes (ms, p50 / p99), from GET /v1/webhooks/{id}/deliveries (created_at: when scheduled):")
    parts = [("ended->scheduled", "scheduled_after_ended_ms"), ("scheduled->arrived", "arrived_after_scheduled_ms"),
             ("arrived->recorded", "recorded_after_arrival_ms"), ("sender", "sender_latency_ms")]
    for phase in (results["low_rate"], results["burst"]):
        split = phase["split"]
        print(f"  {phase['label']}: " + ", ".join(
            f"{name} {split[k].get('p50', 0):.0f} / {split[k].get('p99', 0):.0f}" for name, k in parts))
        print(f"    scheduled at {split['scheduled_per_s']:.0f} deliveries/s; median latency by quarter of the calls "
              f"(in creation order): {phase['latency_by_quarter_ms']}")
    check = results["check"]
    print(f"\ncorrectness: {check['expected']} deliveries expected, {check['arrived']} arrived, "
          f"{check['duplicate_delivery_ids']} duplicate delivery ids, {check['missing']} missing; "
          f"delivered totals from the API {check['api_delivered']} ({'match' if check['api_match'] else 'MISMATCH'}); "
          f"other statuses {check['api_other_statuses'] or 'none'}; attempts per delivery "
          f"{burst['split']['attempts_per_delivery']} (burst)")
    print(f"connections the dispatcher opened to the receiver: low rate {results['low_rate']['connections_new']}, "
          f"burst {burst['connections_new']} (ceiling: {ceiling['window']['connections_used']})")
    print("granian worker CPU by thread during the burst (cores): "
          + ", ".join(f"{t['thread']} {t['cores']:.2f}" for t in results["server_threads_during_burst"][:10]))
    report_profile(results["profile_during_burst"])
    logs = results["server_log"]
    print(f"server log: {logs['lines']} error lines, {logs['warnings']} warnings"
          + (f", e.g. {logs['examples'][0]}" if logs["lines"] else ""))
    if ceiling["cores"]["client"] > CLIENT_BOUND:
        print("warning: the httpx client used a whole core on the ceiling run; the ceiling is the client's")
    if max(ceiling["cores"]["receiver"], burst["cores"]["receiver"]) > 0.5:
        print("warning: the receiver used more than half a core on the ceiling or the burst; it may have set the pace")


def report_profile(profile: dict[str, Any]) -> None:
    if "error" in profile:
        print(f"py-spy during the burst: {profile['error']}")
        return
    print(f"py-spy on the granian worker from the burst's start ({profile['samples']} samples holding the GIL, "
          f"GIL held {100 * profile['cores_busy']:.0f}% of the time), GIL share by thread:")
    print("  " + ", ".join(f"{t['thread']} {100 * t['share']:.0f}%" for t in profile["threads"][:8]))
    print("  top self: " + "; ".join(f"{f['function']} {100 * f['share']:.1f}%" for f in profile["self"][:8]))
    print("  top inclusive (this project's functions):")
    for item in profile["inclusive"][:10]:
        print(f"    {100 * item['share']:5.1f}%  {item['function']}")


def record_figures(results: dict[str, Any]) -> None:
    """The three figures of issue 20, item 3 in bench/results/summary.md, with the CPU split as a note."""
    script = "webhook_deliveries.py"
    cores = results["burst"]["cores"]
    split = ", ".join(f"{t['thread']} {t['cores']:.2f}" for t in results["server_threads_during_burst"][:4])
    note = (f"burst cores: server {cores['server']:.2f}, db {cores['database']:.2f}, receiver {cores['receiver']:.2f}"
            + (f"; server threads: {split}" if split else ""))
    ratio, burst = results["ratio"], results["burst"]
    offered = burst["calls_ended_per_s"] * results["endpoints"]
    drained = burst["after_last_call_ended"]["per_s"]
    record(script, "burst deliveries/s / raw httpx posts/s", ratio, f">= {TARGET_RATIO}", met=ratio >= TARGET_RATIO,
           note=f"{burst['deliveries_per_s']:.0f} / {results['ceiling']['posts_per_s']:.0f} per s; offered "
                f"{offered:.0f}/s (calls ending x endpoints); backlog drained at {drained:.0f}/s after the last "
                f"call ended; {note}")
    for phase, figure, target in (("burst", "burst first-attempt p99 (ms)", TARGET_BURST_P99_MS),
                                  ("low_rate", "first-attempt p99 at 20 calls/s (ms)", TARGET_LOW_P99_MS)):
        p99 = results[phase]["latency_after_ended_ms"].get("p99")
        record(script, figure, p99, f"< {target:.0f}", met=None if p99 is None else p99 < target,
               note=results[phase]["label"])


# --- fairness: slow endpoints of one tenant against another's latency ----------------------------------

FAIRNESS_TARGET_MS = 250.0  # issue 13, item 3: the other tenant's first-attempt p99
SLOW_ENDPOINTS = 20


def tenant_key(port: int, env: dict[str, str], email: str) -> str:
    """A second tenant, signed up and approved like ``approved_key``'s."""
    with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=30.0, trust_env=False) as http:
        signup = http.post("/auth/signup", json={"email": email, "password": "correct horse battery staple"})
        signup.raise_for_status()
        done = subprocess.run([str(CALLWRIGHT), "admin", "approve", email], env=env, capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SystemExit(f"callwright admin approve failed:\n{done.stderr}")
        return str(signup.json()["secret"])


def add_endpoints(port: int, key: str, urls: list[str]) -> list[str]:
    made = []
    with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=30.0, trust_env=False,
                      headers={"Authorization": f"Bearer {key}"}) as http:
        for url in urls:
            answer = http.post("/v1/webhooks", json={"url": url})
            if answer.status_code != 201:
                raise SystemExit(f"POST /v1/webhooks answered {answer.status_code}: {answer.text}")
            made.append(answer.json()["id"])
    return made


def first_attempts(records: list[list[Any]], path: str, calls: dict[str, dict[str, Any]]) -> list[float]:
    """Seconds from each call's ``ended_at`` to the first arrival of its delivery at ``path``."""
    first: dict[str, float] = {}
    for arrived, where, _, call_id, _ in sorted(records):
        if where == path and call_id in calls:
            first.setdefault(call_id, arrived)
    ended = {c: parse_time(body.get("ended_at")) for c, body in calls.items()}
    return [arrived - ended[c] for c, arrived in first.items() if ended.get(c)]


def peak_in_flight(arrivals: list[float], held: float) -> int:
    """The most arrivals within ``held`` s of each other: about the most attempts held at once, each
    until its timeout (an overestimate by the gap between an attempt's start and its arrival)."""
    times, peak, start = sorted(arrivals), 0, 0
    for end, at in enumerate(times):
        while times[start] <= at - held:
            start += 1
        peak = max(peak, end - start + 1)
    return peak


def fairness(args: argparse.Namespace, body: bytes) -> int:
    """Tenant B alone at a low call rate (the ceiling), then B beside tenant A, whose 20 endpoints
    answer only after the sender's timeout while A goes on ending calls."""
    timeout = args.fair_timeout
    workdir = Path(tempfile.mkdtemp(prefix="callwright-bench-fairness-"))
    data_dir, app_port = workdir / "var", free_port()
    env = bench_env(data_dir, app_port)
    env.update(CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE="1", CALLWRIGHT_WEBHOOK_ALLOW_HTTP="1",
               CALLWRIGHT_WEBHOOK_TIMEOUT_SECONDS=str(timeout), CALLWRIGHT_LOG_LEVEL=args.log_level)
    load_before = os.getloadavg()
    servers: list[Server] = []
    try:
        receiver = Receiver(workdir, env, slow_seconds=timeout + 1.0)
        servers.append(receiver)
        app = Server("callwright serve", [str(CALLWRIGHT), "serve"], env, app_port, workdir / "serve.log")
        servers.append(app)
        receiver.wait_ready("/_count")
        app.wait_ready("/healthz")
        b_key = approved_key(app_port, env)
        a_key = tenant_key(app_port, env, "slow-tenant@example.com")
        add_endpoints(app_port, b_key, [f"{receiver.url}/hook/b"])
        warm = asyncio.run(create_calls(app_port, b_key, body, args.warmup_calls, 1))
        receiver.wait_for(len(warm["calls"]), args.settle_timeout)

        alone = asyncio.run(create_calls(app_port, b_key, body, args.fair_calls, 1, args.low_rate_interval))
        receiver.wait_for(len(warm["calls"]) + len(alone["calls"]), args.settle_timeout)

        add_endpoints(app_port, a_key, [f"{receiver.url}/slow/{n}" for n in range(SLOW_ENDPOINTS)])
        measured = args.fair_backlog_seconds + args.fair_calls * args.low_rate_interval + 2 * timeout

        async def beside_slow_tenant() -> tuple[dict[str, Any], dict[str, Any]]:
            a = asyncio.create_task(create_calls(app_port, a_key, body, int(measured / args.fair_a_interval), 1,
                                                 args.fair_a_interval))
            await asyncio.sleep(args.fair_backlog_seconds)  # A's backlog and its first timeouts
            b = await create_calls(app_port, b_key, body, args.fair_calls, 1, args.low_rate_interval)
            return b, await a

        beside, a_calls = asyncio.run(beside_slow_tenant())
        b_total = len(warm["calls"]) + len(alone["calls"]) + len(beside["calls"])
        deadline = time.monotonic() + args.settle_timeout
        while sum(1 for r in receiver.records(0) if r[1] == "/hook/b") < b_total and time.monotonic() < deadline:
            time.sleep(0.2)
        records = receiver.records(0)
        alone_calls = asyncio.run(fetch_calls(app_port, b_key, alone["calls"]))
        beside_calls = asyncio.run(fetch_calls(app_port, b_key, beside["calls"]))
    finally:
        for server in reversed(servers):
            server.stop()
        stop_orphaned_postgres(data_dir)
        server_log = log_problems(workdir / "serve.log")
        shutil.rmtree(workdir, ignore_errors=True)

    slow = [r[0] for r in records if r[1].startswith("/slow/")]
    results = {
        "benchmark": "webhook_fairness",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "cpus": os.cpu_count(),
        "load_average_1m": {"start": round(load_before[0], 2), "end": round(os.getloadavg()[0], 2)},
        "sender_timeout_s": timeout, "slow_answer_s": timeout + 1.0, "slow_endpoints": SLOW_ENDPOINTS,
        "b_call_interval_s": args.low_rate_interval, "a_call_interval_s": args.fair_a_interval,
        "backlog_seconds": args.fair_backlog_seconds,
        "alone": distribution(first_attempts(records, "/hook/b", alone_calls)),
        "beside_slow_tenant": distribution(first_attempts(records, "/hook/b", beside_calls)),
        "b_missing": len(beside["calls"]) - len(first_attempts(records, "/hook/b", beside_calls)),
        "a_calls": len(a_calls["calls"]), "a_deliveries_scheduled": len(a_calls["calls"]) * SLOW_ENDPOINTS,
        "a_attempts": len(slow), "a_peak_in_flight": peak_in_flight(slow, timeout),
        "create_errors": {**alone["errors"], **beside["errors"], **a_calls["errors"]},
        "server_log": server_log,
    }
    alone_p99, beside_p99 = results["alone"].get("p99", 0.0), results["beside_slow_tenant"].get("p99", 0.0)
    results["ratio_p99"] = beside_p99 / alone_p99 if alone_p99 else 0.0
    fairness_report(results)
    output = args.output if args.output != RESULTS else RESULTS.with_name("webhook_fairness.json")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {output}")
    return 1 if results["b_missing"] or results["create_errors"] or not results["beside_slow_tenant"]["count"] else 0


def fairness_report(results: dict[str, Any]) -> None:
    load = results["load_average_1m"]
    print(f"\nwebhook fairness, {results['cpus']} CPUs; tenant A: {results['slow_endpoints']} endpoints answering "
          f"after {results['slow_answer_s']:.1f} s (sender timeout {results['sender_timeout_s']:.1f} s), a call every "
          f"{results['a_call_interval_s'] * 1000:.0f} ms; tenant B: one quick endpoint, a call every "
          f"{results['b_call_interval_s'] * 1000:.0f} ms; 1-minute load average {load['start']} -> {load['end']}")
    if load["start"] > 0.5 * (results["cpus"] or 1):
        print("note: the machine was busy with other work; absolute figures and ratios are noisier than usual")
    print("B's first attempt: arrival at the receiver minus the call's ended_at (ms):")
    for label, key in (("B alone (the ceiling)", "alone"), ("B beside A's slow endpoints", "beside_slow_tenant")):
        lat = results[key]
        if lat["count"]:
            print(f"  {label:<30} p50 {lat['p50']:7.1f}  p95 {lat['p95']:7.1f}  p99 {lat['p99']:7.1f}  "
                  f"max {lat['max']:7.1f}  (n={lat['count']})")
    beside = results["beside_slow_tenant"]
    if beside["count"] and results["alone"]["count"]:
        verdict = "ok" if beside["p99"] < FAIRNESS_TARGET_MS else f"ABOVE the {FAIRNESS_TARGET_MS:.0f} ms target"
        print(f"\nresult: B's p99 beside A / B's p99 alone = {results['ratio_p99']:.2f}; p50 ratio "
              f"{beside['p50'] / results['alone']['p50']:.2f}; p99 {beside['p99']:.1f} ms against the "
              f"{FAIRNESS_TARGET_MS:.0f} ms target: {verdict}")
    print(f"A: {results['a_calls']} calls, {results['a_deliveries_scheduled']} deliveries scheduled, "
          f"{results['a_attempts']} attempts reached the receiver, at most {results['a_peak_in_flight']} of them "
          f"within one sender timeout (about the slots A held at its peak; the dispatcher has "
          f"{DISPATCHER_CONCURRENCY}); B missing: {results['b_missing']}")
    logs = results["server_log"]
    print(f"server log: {logs['lines']} error lines, {logs['warnings']} warnings")


# --- main -----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoints", type=int, default=4)
    parser.add_argument("--calls", type=int, default=500, help="calls in the burst")
    parser.add_argument("--connections", type=int, default=4, help="client connections creating the burst")
    parser.add_argument("--low-rate-calls", type=int, default=100)
    parser.add_argument("--low-rate-interval", type=float, default=0.05, help="seconds between low-rate creates")
    parser.add_argument("--warmup-calls", type=int, default=8)
    parser.add_argument("--raw-posts", type=int, default=0, help="ceiling posts (default: calls x endpoints)")
    parser.add_argument("--call-kind", choices=("fax", "conversation"), default="fax",
                        help="fax: emergency consent, answered by fax, fails at once (isolates webhooks); "
                             "conversation: the calls_create.py body, a scripted conversation inside call hours")
    parser.add_argument("--settle-timeout", type=float, default=60.0, help="longest wait for a phase's deliveries")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--log-level", default="warning",
                        help="the server's; info also logs every attempt (webhooks.attempt), at some CPU cost")
    parser.add_argument("--keep-workdir", action="store_true", help="keep serve.log and receiver.log")
    parser.add_argument("--profile-seconds", type=float, default=4.0,
                        help="py-spy (--nonblocking) on the server from the burst's start; 0: none")
    parser.add_argument("--scenario", choices=("throughput", "fairness"), default="throughput",
                        help="fairness: another tenant's latency beside 20 slow endpoints (see the docstring)")
    parser.add_argument("--fair-calls", type=int, default=100, help="fairness: B's calls in each phase")
    parser.add_argument("--fair-a-interval", type=float, default=0.1, help="fairness: seconds between A's calls")
    parser.add_argument("--fair-backlog-seconds", type=float, default=5.0,
                        help="fairness: how long A's calls run before B's are measured")
    parser.add_argument("--fair-timeout", type=float, default=2.0, help="fairness: the sender's timeout (s)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below stops the servers

    load_before = os.getloadavg()
    now = datetime.now(timezone.utc)
    destination = reachable_destination(now)
    objective = "Confirm tomorrow's dental appointment and how to send the reminder."
    if args.call_kind == "fax":
        create = {"to": destination or CANDIDATES[0], "objective": objective, "outcome_schema": OUTCOME_SCHEMA,
                  "consent_type": "emergency", "mode": "simulated", "simulation": {"answered_by": "fax"}}
    else:
        if destination is None:
            raise SystemExit("no candidate destination is inside call hours right now; use --call-kind fax")
        create = {"to": destination, "objective": objective, "outcome_schema": OUTCOME_SCHEMA,
                  "consent_type": "prior_express", "mode": "simulated",
                  "simulation": {"facts": FACTS, "persona": "A busy but friendly patient"}}
    body = json.dumps(create).encode()
    if args.scenario == "fairness":
        return fairness(args, body)

    workdir = Path(tempfile.mkdtemp(prefix="callwright-bench-webhooks-"))
    data_dir, app_port = workdir / "var", free_port()
    env = bench_env(data_dir, app_port)
    env.update(CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE="1", CALLWRIGHT_WEBHOOK_ALLOW_HTTP="1",  # loopback receiver
               CALLWRIGHT_LOG_LEVEL=args.log_level)
    servers: list[Server] = []
    shutdown: dict[str, Any] = {}
    try:
        receiver = Receiver(workdir, env)
        servers.append(receiver)
        app = Server("callwright serve", [str(CALLWRIGHT), "serve"], env, app_port, workdir / "serve.log")
        servers.append(app)
        receiver.wait_ready("/_count")
        app.wait_ready("/healthz")
        key = approved_key(app_port, env)
        database = lambda: postgres_processes(data_dir)  # noqa: E731
        meter = CpuMeter({"server": app.processes, "database": database, "receiver": receiver.processes})

        endpoint_ids, secrets = [], []
        with httpx.Client(base_url=f"http://{HOST}:{app_port}", timeout=30.0, trust_env=False,
                          headers={"Authorization": f"Bearer {key}"}) as http:
            for index in range(args.endpoints):
                answer = http.post("/v1/webhooks", json={"url": f"{receiver.url}/hook/{index}",
                                                         "description": f"bench receiver {index}"})
                if answer.status_code != 201:
                    raise SystemExit(f"POST /v1/webhooks answered {answer.status_code}: {answer.text}")
                endpoint_ids.append(answer.json()["id"])
                secrets.append(answer.json()["secret"])

        # Warm-up: connections, caches, the first calls; their deliveries are counted in the checks only.
        expected = 0
        warm = asyncio.run(create_calls(app_port, key, body, args.warmup_calls, 2))
        if warm["errors"]:
            raise SystemExit(f"POST /v1/calls failed: {warm['errors']}")
        expected += len(warm["calls"]) * args.endpoints
        if not receiver.wait_for(expected, args.settle_timeout):
            raise SystemExit(f"the warm-up deliveries did not arrive: {receiver.count()} of {expected}")
        sample = receiver.sample()

        # The ceiling: raw httpx posts of a real delivery's body, signed, at the dispatcher's concurrency.
        concurrency = min(DISPATCHER_CONCURRENCY, PER_ENDPOINT * args.endpoints)
        raw_total = args.raw_posts or args.calls * args.endpoints
        start_index = receiver.count()["records"]
        meter.start()
        raw = asyncio.run(raw_posts(f"{receiver.url}/raw", sample["body"].encode(), secrets[0], raw_total, concurrency))
        ceiling_cores = meter.stop()
        raw_records = [r for r in receiver.records(start_index) if r[1] == "/raw"]
        window = arrival_window(raw_records)
        ceiling = {"concurrency": concurrency, "posts": raw_total, "arrived": len(raw_records),
                   "statuses": raw["statuses"], "client_seconds": raw["client_seconds"], "window": window,
                   "posts_per_s": window["per_s"], "cores": ceiling_cores,
                   "body_bytes": len(sample["body"].encode()), "sample_headers": sorted(sample["headers"])}
        start_index = receiver.count()["records"]
        meter.start()
        bare = asyncio.run(socket_posts(receiver.port, sample["body"].encode(), secrets[0], 5 * raw_total,
                                        concurrency))
        socket_cores = meter.stop()
        socket_records = [r for r in receiver.records(start_index) if r[1] == "/socket"]
        window = arrival_window(socket_records)
        receiver_check = {"concurrency": concurrency, "posts": 5 * raw_total, "arrived": len(socket_records),
                          "statuses": bare["statuses"], "window": window, "posts_per_s": window["per_s"],
                          "cores": socket_cores}
        raw_records += socket_records  # the receiver's count includes them
        seen_connections = {r[4] for r in receiver.records(0) if r[1].startswith("/hook/")}

        # Low rate: one call every --low-rate-interval seconds, so the latency is not queueing.
        expected_low = expected + args.low_rate_calls * args.endpoints
        meter.start()
        low = asyncio.run(create_calls(app_port, key, body, args.low_rate_calls, 1, args.low_rate_interval))
        low_arrived = receiver.wait_for(expected_low + len(raw_records), args.settle_timeout)
        low_cores = meter.stop()
        expected = expected_low

        # Burst: N calls as fast as a few connections allow.
        worker = granian_worker(app)
        threads_before = thread_cpu(worker) if worker else {}
        expected_burst = expected + args.calls * args.endpoints
        profiler = (BurstProfile(worker.pid, args.profile_seconds, workdir / "burst.pyspy.txt")
                    if worker and args.profile_seconds > 0 and PY_SPY.exists() else None)
        meter.start()
        burst = asyncio.run(create_calls(app_port, key, body, args.calls, args.connections))
        burst_arrived = receiver.wait_for(expected_burst + len(raw_records), args.settle_timeout)
        burst_cores = meter.stop()
        profile = profiler.result() if profiler else {"error": "no py-spy (.venv/bin/pip install py-spy)"
                                                      if not PY_SPY.exists() else "not profiled"}
        threads_after = thread_cpu(worker) if worker else {}
        split = thread_split(threads_before, threads_after, thread_names(worker.pid) if worker else {},
                             burst_cores["seconds"])
        expected = expected_burst
        time.sleep(0.5)  # anything arriving late (a duplicate) is counted too

        records = receiver.records(0)
        low_calls = asyncio.run(fetch_calls(app_port, key, low["calls"]))
        burst_calls = asyncio.run(fetch_calls(app_port, key, burst["calls"]))
        low_rate = phase_figures(f"low rate, one call every {args.low_rate_interval * 1000:.0f} ms", records,
                                 low_calls, args.endpoints, low, low_cores, seen_connections)
        burst_phase = phase_figures(f"burst of {args.calls} calls, {args.connections} connections", records,
                                    burst_calls, args.endpoints, burst, burst_cores, seen_connections)
        low_rate["all_arrived_within_timeout"], burst_phase["all_arrived_within_timeout"] = low_arrived, burst_arrived

        all_calls = set(warm["calls"]) | set(low["calls"]) | set(burst["calls"])
        # The history is a view: the last attempts' results reach it a moment after they arrive.
        deadline = time.monotonic() + 15
        while True:
            api = deliveries_api(app_port, key, endpoint_ids)
            recorded = sum(t["delivered"] for t in api["totals"].values())
            if recorded >= len(all_calls) * args.endpoints or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        arrivals: dict[str, float] = {}
        for arrived, path, delivery, _, _ in sorted(records):
            if path.startswith("/hook/") and delivery:
                arrivals.setdefault(delivery, arrived)
        for phase, calls, made in ((low_rate, low_calls, low), (burst_phase, burst_calls, burst)):
            phase["split"] = split_latency(api["rows"], calls, arrivals)
            phase["latency_by_quarter_ms"] = latency_trend(records, calls, made["calls"])
        hooks = [r for r in records if r[1].startswith("/hook/")]
        ids = Counter(r[2] for r in hooks)
        pairs = Counter((r[3], r[1]) for r in hooks)
        delivered = sum(t["delivered"] for t in api["totals"].values())
        other = {s: n for t in api["totals"].values() for s, n in t.items() if s != "delivered" and n}
        check = {
            "expected": len(all_calls) * args.endpoints,
            "arrived": len(hooks),
            "distinct_delivery_ids": len(ids),
            "duplicate_delivery_ids": sum(1 for n in ids.values() if n > 1),
            "duplicate_arrivals": sum(n - 1 for n in ids.values() if n > 1),
            "same_call_and_endpoint_twice": sum(1 for n in pairs.values() if n > 1),
            "missing": len(all_calls) * args.endpoints - len({p for p in pairs if p[0] in all_calls}),
            "unknown_calls": len({r[3] for r in hooks} - all_calls),
            "api_delivered": delivered,
            "api_match": delivered == len(ids) == len(all_calls) * args.endpoints,
            "api_other_statuses": other,
        }
    finally:
        for server in reversed(servers):
            started = time.perf_counter()
            server.stop()
            shutdown[server.name] = {"seconds": round(time.perf_counter() - started, 2),
                                     "returncode": server.process.returncode}
        shutdown["orphaned_postgres_stopped"] = stop_orphaned_postgres(data_dir)
        server_log = log_problems(workdir / "serve.log")
        if args.keep_workdir:
            shutil.rmtree(data_dir, ignore_errors=True)
            print(f"kept: {workdir} (serve.log, receiver.log)")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    results = {
        "benchmark": "webhook_deliveries",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "cpus": os.cpu_count(),
        "load_average_1m": {"start": round(load_before[0], 2), "end": round(os.getloadavg()[0], 2)},
        "endpoints": args.endpoints,
        "call_kind": "emergency consent, answered_by=fax (fails at once)" if args.call_kind == "fax"
        else "simulated conversation (calls_create.py body)",
        "create_body": create,
        "dispatcher": {"per_endpoint": PER_ENDPOINT, "concurrency": DISPATCHER_CONCURRENCY},
        "ceiling": ceiling,
        "receiver_check": receiver_check,
        "low_rate": low_rate,
        "burst": burst_phase,
        "ratio": burst_phase["deliveries_per_s"] / ceiling["posts_per_s"] if ceiling["posts_per_s"] else 0.0,
        "deliveries_api_totals": api["totals"],
        "check": check,
        "server_threads_during_burst": split,
        "profile_during_burst": profile,
        "server_log": server_log,
        "shutdown": shutdown,
    }
    report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {args.output}")
    record_figures(results)
    failed = (check["duplicate_delivery_ids"] or not (low_arrived and burst_arrived) or check["missing"] or not check["api_match"] or other
              or low["errors"] or burst["errors"] or set(ceiling["statuses"]) != {200}
              or set(receiver_check["statuses"]) != {200})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
