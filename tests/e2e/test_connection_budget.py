"""compose's roles scaled out (``docker compose up --scale worker=3``: 1 api, 3 worker, 1 projector,
1 relay) stay within the test PostgreSQL's connection limit while a load makes their pools grow.

What it proves, with every pool at its default size:

- each process announces its connection budget (``database.budget``, with its role) and the
  budgets add up to at most ``max_connections - superuser_reserved_connections``;
- sampled every 0.2 s during ~15 s of creates, reads and webhook deliveries, the connections the
  processes hold (``application_name`` ``callwright:ROLE:PID``) never reach that limit, no process
  holds more than its budget, and every connection of theirs is so named (checked against the TCP
  client ports of each process, which need no naming);
- no process exits, and none logs ``too many clients`` or ``PoolTimeout``.

The roles start at once on a fresh schema, as compose starts them; one that exits while starting
is started again, as compose's restart policy would, and reported.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapters.postgres.database import DatabaseConfig
from tests.e2e.topology import (
    Create,
    Proc,
    Topology,
    approved_tenant,
    client,
    destinations,
    scaled_run,
    webhook_endpoint,
)
from tests.fakes.receiver import Receiver

pytestmark = pytest.mark.e2e

ENV = {
    "CALLWRIGHT_WEBHOOK_ALLOW_HTTP": "1",
    "CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE": "1",
    "CALLWRIGHT_RATE_LIMIT_TIERS": json.dumps({"standard": 1_000_000}),  # the load, not the limiter
}
SCALE = {"worker": 3, "projector": 1, "relay": 1}  # beside one api
EXPECTED_ROLE = {"api": "api", "worker": "worker", "projector": "projector", "relay": "relay"}
LOAD_SECONDS = 15.0
SAMPLE_SECONDS = 0.2
BUDGET_TIMEOUT = 10.0  # after the start line: the budget is logged before it
REFUSALS = ("too many clients", "PoolTimeout")
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Samples:
    """Connections by child, as named (``callwright:ROLE:PID``) and as found by client port."""

    named_peak: int = 0
    found_peak: int = 0
    per_proc_peak: Counter[str] = field(default_factory=Counter)
    unnamed: dict[str, set[str]] = field(default_factory=dict)  # child -> application_names seen
    count: int = 0
    errors: list[str] = field(default_factory=list)


def sample(topology: Topology, samples: Samples, stop: threading.Event) -> None:
    """Every ``SAMPLE_SECONDS``: the connections named after the children; every fifth time also
    those found by client port (dearer: each child's sockets), checking that each carries its
    child's role and pid."""
    ours: dict[int, Proc] = {}
    due = time.monotonic()
    while not stop.wait(max(0.0, (due := due + SAMPLE_SECONDS) - time.monotonic())):
        by_port = samples.count % 5 == 0
        try:
            if by_port:
                ours = topology.owners()
            rows = topology.snapshot(ours, ports=by_port)
        except Exception as exc:  # reported, and the sampling goes on
            samples.errors.append(f"{type(exc).__name__}: {exc}")
            continue
        samples.count += 1
        samples.named_peak = max(samples.named_peak, sum(1 for *_, named in rows if named in ours))
        if not by_port:
            continue
        samples.found_peak = max(samples.found_peak, sum(1 for _, _, proc, _ in rows if proc is not None))
        per_proc: Counter[str] = Counter()
        for _, name, proc, named in rows:
            if proc is None:
                continue
            per_proc[proc.name] += 1
            if not (named is not None and ours.get(named) is proc and name.split(":")[1] == EXPECTED_ROLE[proc.role]):
                samples.unnamed.setdefault(proc.name, set()).add(name)
        for name, count in per_proc.items():
            samples.per_proc_peak[name] = max(samples.per_proc_peak[name], count)


def run_load(base_url: str, key: str, seconds: float) -> None:
    """The load, in a process of its own (so that the sampler here keeps its pace): for ``seconds``,
    two threads create keyed 50-call batches and two read lists and calls; prints a JSON summary."""
    stop, errors, created = threading.Event(), Counter[str](), [0]
    headers = {"Authorization": f"Bearer {key}"}

    def creating(worker: int) -> None:
        with httpx.Client(base_url=base_url, headers=headers, timeout=30.0, trust_env=False) as http:
            n = 0
            while not stop.is_set():
                create = Create(f"load-{worker}-{n}", destinations(50, first=50 * (n % 40)))
                try:
                    created[0] += len(create.send(http))
                except Exception as exc:
                    errors[f"create: {type(exc).__name__}: {str(exc)[:120]}"] += 1
                n += 1

    def reading() -> None:
        with httpx.Client(base_url=base_url, headers=headers, timeout=30.0, trust_env=False) as http:
            while not stop.is_set():
                try:
                    page = http.get("/v1/calls", params={"limit": 50})
                    if page.status_code != 200:
                        errors[f"list: {page.status_code}"] += 1
                        continue
                    for row in page.json()["data"][:5]:
                        one = http.get(f"/v1/calls/{row['call_id']}")
                        if one.status_code != 200:
                            errors[f"read: {one.status_code}"] += 1
                except Exception as exc:
                    errors[f"read: {type(exc).__name__}"] += 1

    threads = [threading.Thread(target=creating, args=(n,), daemon=True) for n in range(2)]
    threads += [threading.Thread(target=reading, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)  # the load's own length, not a wait for a condition
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    print(json.dumps({"created": created[0], "errors": dict(errors)}))


def load(api: Proc, key: str, seconds: float) -> dict[str, Any]:
    """``run_load`` as a child process in a session of its own; its summary."""
    code = f"from tests.e2e.test_connection_budget import run_load; run_load({api.base_url!r}, {key!r}, {seconds})"
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        out, err = child.communicate(timeout=seconds + 90)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate(timeout=10)
    assert child.returncode == 0, f"the load exited with {child.returncode}:\n{err[-3000:]}"
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def budgets(proc: Proc) -> list[dict]:
    return [line for line in proc.logs() if line.get("event") == "database.budget"]


@pytest.fixture
def topology(request: pytest.FixtureRequest) -> Iterator[tuple[Topology, DatabaseConfig, Receiver]]:
    with scaled_run(request, "callwright-e2e-budget-", ENV) as run:
        yield run.topology, run.db, run.receiver


def test_scaled_out_roles_stay_within_the_connection_limit_under_load(
        topology: tuple[Topology, DatabaseConfig, Receiver]) -> None:
    topo, db, receiver = topology
    began = time.monotonic()
    settings = {name: int(topo.observer().execute(f"SHOW {name}").fetchone()[0])
                for name in ("max_connections", "superuser_reserved_connections")}
    limit = settings["max_connections"] - settings["superuser_reserved_connections"]

    problems = topo.up({"api": 1, **SCALE})
    procs = topo.live()
    api = topo.live("api")[0]
    deadline = time.monotonic() + BUDGET_TIMEOUT
    while [p for p in procs if not budgets(p)] and time.monotonic() < deadline:
        time.sleep(0.2)
    announced: dict[str, int] = {}
    for proc in procs:
        lines = budgets(proc)
        if not lines:
            problems.append(f"{proc.name} logged no database.budget line within {BUDGET_TIMEOUT:.0f} s")
            continue
        roles = {line.get("role") for line in lines}
        if roles != {EXPECTED_ROLE[proc.role]}:
            problems.append(f"{proc.name} announced its budget as role {sorted(map(str, roles))}")
        announced[proc.name] = sum(int(line["max_connections"]) for line in lines)
    if sum(announced.values()) > limit:
        problems.append(f"the budgets add up to {sum(announced.values())} connections, over the {limit} that "
                        f"max_connections {settings['max_connections']} leaves: {announced}")

    key = approved_tenant(topo, api, "budget@example.com")
    with client(api, key) as http:
        webhook_endpoint(http, receiver.url)

    samples, sampling = Samples(), threading.Event()
    sampler = threading.Thread(target=sample, args=(topo, samples, sampling), daemon=True)
    sampler.start()
    try:
        driven = load(api, key, LOAD_SECONDS)
    finally:
        sampling.set()
        sampler.join(timeout=10)

    if samples.named_peak >= limit or samples.found_peak >= limit:
        problems.append(f"peak connections: {samples.named_peak} named callwright:, {samples.found_peak} by client "
                        f"port, against a limit of {limit}; by process: {dict(samples.per_proc_peak)}")
    for name, peak in samples.per_proc_peak.items():
        if name in announced and peak > announced[name]:
            problems.append(f"{name} held {peak} connections, over its budget of {announced[name]}")
    for name, seen in samples.unnamed.items():
        problems.append(f"{name} holds connections not named callwright:ROLE:PID of its own: {sorted(seen)[:5]}")
    if samples.count < LOAD_SECONDS / SAMPLE_SECONDS / 3:
        problems.append(f"only {samples.count} samples in {LOAD_SECONDS:.0f} s: the peak may have been missed")
    if samples.errors:
        problems.append(f"{len(samples.errors)} samples failed, e.g. {samples.errors[:3]}")
    if driven["errors"]:
        problems.append(f"the load met errors: {driven['errors']}")
    for proc in topo.unexpected_exits():
        problems.append(f"{proc.name} exited with {proc.popen.returncode}")
    for proc in topo.procs:  # those restarted while starting included
        text = proc.log_path.read_text(errors="replace")
        refused = [word for word in REFUSALS if word in text]
        if refused:
            problems.append(f"{proc.name} logged {refused}")
    print(f"connection budget: limit {limit}, budgets {announced} (sum {sum(announced.values())}), peak "
          f"{samples.named_peak} named / {samples.found_peak} by port over {samples.count} samples, "
          f"{driven['created']} calls created, {time.monotonic() - began:.0f} s in all")
    refusing = [p for p in topo.procs if any(w in p.log_path.read_text(errors="replace") for w in REFUSALS)]
    assert not problems, "\n".join(problems) + "\n" + topo.tails(refusing or procs, lines=10, width=300)
