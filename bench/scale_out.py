"""Scale-out of the workers: simulated calls per second end to end with 1, 2 and 3 ``callwright worker
--no-projections`` processes behind the same api, projector and relay, and the CPU seconds per call
of each role, in one run (ARCHITECTURE.md §11).

1. A fresh schema (in ``CALLWRIGHT_DATABASE_URL``'s database if set, else the machine's PostgreSQL on
   127.0.0.1:5432, else an embedded one) and a tansu broker (tests/kafka_support.py) on loopback.
   ``callwright serve --no-followers``, ``worker --no-reactors`` and ``relay`` start once, with one
   approved tenant and a 1,000,000/minute rate-limit tier.
2. Each round adds one worker (1, then 2, then 3) and waits until the live workers share the call
   runner's partitions. A burst of keyed simulated calls (200-item batches) is created; the round's
   time runs from the first create until ``GET /v1/calls?status=completed`` counts every call of it.
3. CPU over the same window, by role: psutil over each role's processes and their children, and
   over the PostgreSQL backends connected from them (matched by client port; backends that close
   during the window are missed). Every 0.1 s, what those backends are doing (pg_stat_activity's
   wait events): a lock every writer queues on shows as ``Lock:relation``.
4. It prints a table, writes ``bench/results/scale_out.json`` and records the 2- and 3-worker rates
   against the 1-worker rate with ``bench/summary.py``.

Run: ``.venv/bin/python bench/scale_out.py [--calls 400] [--workers 3]`` (about 2 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import psycopg

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from adapters.postgres.database import DatabaseConfig  # noqa: E402
from tests.e2e.topology import (  # noqa: E402
    Proc,
    Topology,
    approved_tenant,
    client,
    cpu_seconds,
    keyed_creates,
    send_all,
    total,
)
from tests.kafka_support import started_broker  # noqa: E402
from tests.postgres import drop_schema, find_server, fresh_schema  # noqa: E402

RESULTS = BENCH_DIR / "results" / "scale_out.json"
PARTITIONS = set(range(6))  # CALLWRIGHT_KAFKA_PARTITIONS' default
ROLES = ("api", "worker", "projector", "relay", "postgres")
ENV = {"CALLWRIGHT_RATE_LIMIT_TIERS": json.dumps({"standard": 1_000_000})}
JOIN_TIMEOUT = 60.0
# On 2 cores, with the api, projector, relay and PostgreSQL beside them: a second worker should add at
# least half a worker's rate; a third has no core of its own and should at least keep what two reach.
TARGETS = {2: 1.5, 3: 1.5}


def database() -> tuple[DatabaseConfig, str]:
    url = os.environ.get("CALLWRIGHT_DATABASE_URL")
    if url:
        return DatabaseConfig.from_url(url), "CALLWRIGHT_DATABASE_URL"
    return find_server()


def call_runner_partitions(worker: Proc) -> set[int]:
    lines = [line for line in worker.logs()
             if line.get("event") == "kafka_source.assigned" and line.get("reactor") == "call_runner"]
    return set(lines[-1]["partitions"]) if lines else set()


def wait_joined(topology: Topology, timeout: float = JOIN_TIMEOUT) -> None:
    """Until every live worker owns some of the call runner's partitions and together they own
    each of them once (the consumer group has rebalanced onto the new worker)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        workers = topology.live("worker")
        owned = [call_runner_partitions(worker) for worker in workers]
        if all(owned) and set().union(*owned) == PARTITIONS and sum(map(len, owned)) == len(PARTITIONS):
            return
        time.sleep(0.2)
    raise SystemExit("the workers did not share the call runner's partitions in time:\n"
                     + topology.tails(topology.live("worker"), lines=10, width=300))


def role_processes(topology: Topology) -> dict[str, list[psutil.Process]]:
    processes: dict[str, list[psutil.Process]] = {role: [] for role in ROLES}
    for proc in topology.live():
        processes[proc.role].extend(proc.processes())
    for backends in topology.backends().values():
        for backend, _ in backends:
            try:
                processes["postgres"].append(psutil.Process(backend))
            except psutil.Error:
                pass
    return processes


def cpu_by_role(topology: Topology) -> dict[str, dict[int, float]]:
    return {role: cpu_seconds(processes) for role, processes in role_processes(topology).items()}


def used(before: dict[str, dict[int, float]], after: dict[str, dict[int, float]]) -> dict[str, float]:
    """CPU seconds by role between two snapshots; processes that appeared in between count from zero."""
    return {role: sum(max(0.0, s - before[role].get(pid, 0.0)) for pid, s in after[role].items())
            for role in ROLES}


WAITS = """
SELECT coalesce(wait_event_type || ':' || wait_event, 'running') FROM pg_stat_activity
WHERE state = 'active' AND pid = ANY(%s)
"""


class WaitSampler:
    """What the backends of the roles are doing, every ``interval`` (pg_stat_activity), while a
    burst runs: the share of samples each wait (or ``running``) was seen in an active backend."""

    def __init__(self, conninfo: str, backends: set[int], interval: float = 0.1) -> None:
        self.conninfo, self.backends, self.interval = conninfo, sorted(backends), interval
        self.seen: Counter[str] = Counter()
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WaitSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            while not self._stop.wait(self.interval):
                self.samples += 1
                self.seen.update(row[0] for row in conn.execute(WAITS, (self.backends,)).fetchall())

    def shares(self, top: int = 4) -> dict[str, float]:
        """Active backends in each state, on average per sample."""
        return {state: round(n / max(1, self.samples), 2) for state, n in self.seen.most_common(top)}


def round_of(topology: Topology, api: Proc, key: str, workers: int, calls: int, timeout: float) -> dict[str, Any]:
    """One burst of ``calls`` with ``workers`` workers: its rate and CPU per call by role."""
    with client(api, key, timeout=60.0) as http:
        done_before, failed_before = total(http, "completed"), total(http, "failed")
        creates = keyed_creates(f"scale-{workers}w-{time.time_ns()}", calls)
        backends = {backend for found in topology.backends().values() for backend, _ in found}
        conninfo = DatabaseConfig.from_url(topology.database_url).conninfo()
        before = cpu_by_role(topology)
        with WaitSampler(conninfo, backends) as waits:
            started = time.perf_counter()
            send_all(http, creates)
            created_in = time.perf_counter() - started
            deadline = time.monotonic() + timeout
            while (done := total(http, "completed") - done_before) < calls:
                failed = total(http, "failed") - failed_before
                if done + failed >= calls or time.monotonic() > deadline:
                    raise SystemExit(f"{workers} workers: {done} of {calls} calls completed, {failed} failed "
                                     f"after {time.perf_counter() - started:.0f} s")
                time.sleep(0.1)
            seconds = time.perf_counter() - started
        cpu = used(before, cpu_by_role(topology))
    return {"workers": workers, "calls": calls, "seconds": round(seconds, 2), "created_in_s": round(created_in, 2),
            "calls_per_s": round(calls / seconds, 1),
            "cpu_s_per_call": {role: round(cpu[role] / calls, 5) for role in ROLES},
            "cores_busy": round(sum(cpu.values()) / seconds, 2), "active_backends": waits.shares()}


def report(rounds: list[dict[str, Any]], ratios: dict[int, float], source: str) -> None:
    print(f"\nsimulated calls end to end, {rounds[0]['calls']} calls a round, {os.cpu_count()} CPUs, "
          f"PostgreSQL: {source}")
    print(f"{'workers':>7} {'calls/s':>8} {'seconds':>8}   CPU ms per call: "
          + " ".join(f"{role:>9}" for role in ROLES) + f" {'total':>7} {'cores':>6}")
    for row in rounds:
        cpu = row["cpu_s_per_call"]
        print(f"{row['workers']:>7} {row['calls_per_s']:>8.1f} {row['seconds']:>8.1f}   {'':16}"
              + " ".join(f"{1000 * cpu[role]:>9.2f}" for role in ROLES)
              + f" {1000 * sum(cpu.values()):>7.2f} {row['cores_busy']:>6.2f}")
    print("active PostgreSQL backends of the roles, on average, by what they were doing:")
    for row in rounds:
        print(f"{row['workers']:>7}  " + ", ".join(f"{state} {n}" for state, n in row["active_backends"].items()))
    for workers, ratio in ratios.items():
        print(f"result: {workers} workers run {ratio:.2f}x the calls/s of 1 worker (target >= {TARGETS[workers]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="simulated calls per round")
    parser.add_argument("--workers", type=int, default=3, help="rounds with 1..N workers")
    parser.add_argument("--round-timeout", type=float, default=90.0, help="longest wait for a burst to complete")
    parser.add_argument("--keep-workdir", action="store_true", help="keep the processes' logs")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below stops the processes

    server, source = database()
    db = fresh_schema(server)
    workdir = Path(tempfile.mkdtemp(prefix="callwright-bench-scale-"))
    broker = started_broker(workdir / "tansu.log")
    topology = Topology(db.to_url(), broker.bootstrap, workdir, ENV)
    rounds: list[dict[str, Any]] = []
    began = time.monotonic()
    try:
        exits = topology.up({"api": 1, "projector": 1, "relay": 1})
        if exits:
            print(f"warning: {len(exits)} processes exited while starting and were started again")
        api = topology.live("api")[0]
        key = approved_tenant(topology, api, "scale-out@example.com")
        for workers in range(1, args.workers + 1):
            topology.start("worker")
            wait_joined(topology)
            rounds.append(round_of(topology, api, key, workers, args.calls, args.round_timeout))
            print(f"{workers} worker(s): {rounds[-1]['calls_per_s']:.1f} calls/s", flush=True)
        unexpected = topology.unexpected_exits()
        if unexpected:
            raise SystemExit("exited during the run:\n" + topology.tails(unexpected, lines=10, width=300))
    finally:
        topology.close()
        broker.stop()
        drop_schema(db)
        if args.keep_workdir:
            print(f"kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    base = rounds[0]["calls_per_s"]
    ratios = {row["workers"]: round(row["calls_per_s"] / base, 3) for row in rounds[1:] if base}
    report(rounds, ratios, source)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "scale_out",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "postgres": source, "rounds": rounds, "ratios": ratios, "targets": TARGETS,
        "run_seconds": round(time.monotonic() - began, 1)}, indent=2) + "\n")
    from summary import record

    for workers, ratio in ratios.items():
        target = TARGETS.get(workers)
        record("scale_out.py", f"calls/s end to end, {workers} workers / 1 worker", ratio,
               f">= {target}" if target else "n/a", met=ratio >= target if target else None,
               note=f"{base:.0f} -> {rounds[workers - 1]['calls_per_s']:.0f} calls/s, {rounds[0]['calls']} calls, "
                    f"{os.cpu_count()} cores")
    print(f"written: {RESULTS} and bench/results/summary.md ({time.monotonic() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
