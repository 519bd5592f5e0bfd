"""compose.yaml's scaled topology through a cold start, crashes and restarts of every role
(docs/operations.md "Faults"): 2 api, 2 worker, 2 projector and 2 relay processes on one fresh
schema and one fresh Kafka broker.

What it proves, for a tenant whose calls and ``call.completed`` webhooks run through it:

- the roles start together against an empty schema (as compose starts them) and every api is ready;
- a worker killed (SIGKILL) while it holds a backlog of accepted calls loses none of them, a worker
  stopped with SIGTERM hands its backlog back and exits 0 within its grace, and the relay and
  projector leaders killed mid-stream are replaced by their standbys;
- retried creates (same Idempotency-Key) answer the same calls; within 30 s of the last restart every
  call is ``completed``, listed exactly once, has exactly one ``call.completed`` delivery, and the
  receiver got it;
- no process exits unless stopped, and every line any process logs is a JSON object.

Findings that do not stop the scenario are collected and reported together at the end, so one run
shows every broken promise; a process that exits on its own is started again, as compose's restart
policy would, and reported.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiokafka.partitioner import murmur2

from domain.calls.call import Call
from tests.e2e.topology import (
    GRACE_SECONDS,
    Create,
    Proc,
    Scaled,
    Topology,
    approved_tenant,
    client,
    keyed_creates,
    page_all,
    scaled_run,
    send_all,
    total,
    webhook_endpoint,
)
from tests.fakes.receiver import Receiver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ENV = {
    "CALLWRIGHT_WEBHOOK_ALLOW_HTTP": "1",
    "CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE": "1",
    "CALLWRIGHT_RATE_LIMIT_TIERS": json.dumps({"standard": 1_000_000}),  # the bursts, not the limiter
}
PARTITIONS = 6  # CALLWRIGHT_KAFKA_PARTITIONS' default: the topic the relay creates
BURST = 200  # calls per burst (one batch): seconds of work for a worker, so it holds a backlog when watched
READY_TIMEOUT = 60.0
BACKLOG_MIN = 40  # accepted, not yet started calls a worker holds when it is stopped
BACKLOG_TIMEOUT = 30.0
SETTLE_SECONDS = 30.0  # after the last restart, every call is completed
# After the last restart, every delivery is listed (the deliveries view follows the log, its leader
# was killed) and received (an attempt in flight in a killed worker is retried once its lease,
# 3 x the 10 s timeout + 1, ran out).
RECEIVED_SECONDS = 60.0
STOP_MARGIN = 10.0  # beyond the worker's grace for a SIGTERM
LEADERS = {  # (event, field, value, role, the advisory lock's name without the schema)
    "relay Calling": ("kafka_relay.leading", "application", "Calling", "relay", "kafka_relay:Calling:{schema}"),
    "relay Accounts": ("kafka_relay.leading", "application", "Accounts", "relay", "kafka_relay:Accounts:{schema}"),
    "projector calls_list_v1": ("follower.leading", "follower", "calls_list_v1", "projector",
                                "follower:calls_list_v1:{schema}"),
}
# Calls whose Queued event the call runner recorded as processed, and that nothing has happened to
# since: accepted by a worker, not yet started (held in its memory, or under its lease).
HELD = """
SELECT q.originator_id FROM kafka_processed_events p
JOIN calling_events q ON q.notification_id = p.notification_id
WHERE p.reactor = 'call_runner' AND NOT EXISTS (
    SELECT 1 FROM calling_events later
    WHERE later.originator_id = q.originator_id AND later.originator_version > q.originator_version)
"""


@dataclass
class Findings:
    """Broken promises that do not stop the scenario, each with the log tails that explain it."""

    topology: Topology
    items: list[str] = field(default_factory=list)

    def check(self, ok: bool, message: str, procs: list[Proc] | None = None) -> bool:
        if not ok and not any(item.startswith(message) for item in self.items):
            tails = f"\n{self.topology.tails(procs, lines=12, width=300)}" if procs else ""
            self.items.append(message + tails)
        return ok

    def report(self) -> None:
        assert not self.items, f"{len(self.items)} finding(s):\n\n" + "\n\n".join(
            f"[{n}] {item}" for n, item in enumerate(self.items, 1))


@pytest.fixture
def scaled(request: pytest.FixtureRequest) -> Iterator[Scaled]:
    with scaled_run(request, "callwright-e2e-scaled-", ENV) as run:
        yield run


def partition_of(call_id: str) -> int:
    """The Kafka partition of a call's events: the relay keys them by the aggregate id's bytes."""
    return (murmur2(Call.create_id(call_id).bytes) & 0x7FFFFFFF) % PARTITIONS


def assigned(worker: Proc) -> set[int]:
    """The call runner's partitions in ``worker``, by its last ``kafka_source.assigned`` line."""
    lines = [line for line in worker.logs()
             if line.get("event") == "kafka_source.assigned" and line.get("reactor") == "call_runner"]
    return set(lines[-1]["partitions"]) if lines else set()


def held(topology: Topology, by_aggregate: dict[uuid.UUID, str]) -> dict[int, list[str]]:
    """The accepted, not yet started calls, by partition."""
    found: dict[int, list[str]] = {}
    for (aggregate,) in topology.observer().execute(HELD).fetchall():
        call_id = by_aggregate.get(aggregate)
        if call_id is not None:
            found.setdefault(partition_of(call_id), []).append(call_id)
    return found


def held_by(topology: Topology, worker: Proc, by_aggregate: dict[uuid.UUID, str]) -> list[str]:
    partitions = assigned(worker)
    return [call for partition, calls in held(topology, by_aggregate).items() if partition in partitions
            for call in calls]


def wait_backlog(topology: Topology, api: Proc, key: str, workers: list[Proc],
                 by_aggregate: dict[uuid.UUID, str]) -> tuple[Proc, list[str], int]:
    """Until one of ``workers`` holds at least ``BACKLOG_MIN`` accepted calls not yet started while
    the API lists calls ``queued``: that worker, the calls it holds, how many are queued."""
    deadline = time.monotonic() + BACKLOG_TIMEOUT
    with client(api, key) as http:
        while True:
            queued = total(http, "queued")
            holding = sorted(((held_by(topology, w, by_aggregate), w) for w in workers if w.alive),
                             key=lambda pair: len(pair[0]), reverse=True)
            if queued and holding and len(holding[0][0]) >= BACKLOG_MIN:
                return holding[0][1], holding[0][0], queued
            assert time.monotonic() < deadline, (
                f"no worker held a backlog within {BACKLOG_TIMEOUT:.0f} s (queued: {queued}, held: "
                f"{[(w.name, len(calls)) for calls, w in holding]}): raise BURST\n" + topology.tails(workers))
            time.sleep(0.1)


def leaders(topology: Topology, findings: Findings, whats: list[str], schema: str,
            timeout: float) -> dict[str, Proc]:
    """The live process leading each of ``whats`` by its log line; for one that no log line names
    within ``timeout``, a finding, and the holder of its advisory lock instead."""
    found: dict[str, Proc] = {}
    deadline = time.monotonic() + timeout
    while True:
        for what in whats:
            event, name, value, role, _ = LEADERS[what]
            if what not in found and (proc := topology.leader_of(event, name, value, role)) is not None:
                found[what] = proc
        if len(found) == len(whats) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for what in whats:
        if what in found:
            continue
        event, name, value, role, lock = LEADERS[what]
        findings.check(False, f"no live {role} logged {event} {name}={value}")
        while (holder := topology.lock_holder(lock.format(schema=schema))) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert holder is not None, f"no {role} leads {what}, by log or by lock\n" + topology.tails(topology.live(role))
        found[what] = holder
    return found


def call_completed_ids(receiver: Receiver) -> Counter[str]:
    seen: Counter[str] = Counter()
    for request in list(receiver.received):
        try:
            payload = json.loads(request.body)
        except ValueError:
            continue
        if payload.get("type") == "call.completed":
            seen[payload["data"]["call_id"]] += 1
    return seen


def status_totals(http: Any) -> dict[str, int]:
    return {status: total(http, status) for status in ("queued", "in_progress", "completed", "failed")}


def test_the_scaled_topology_loses_no_call_through_crashes_and_restarts(scaled: Scaled) -> None:
    topology, receiver, schema = scaled.topology, scaled.receiver, scaled.db.schema
    findings = Findings(topology)
    began = time.monotonic()

    # Cold start: every role at once against the empty schema, as compose starts them.
    for exit_report in topology.up({"api": 2, "worker": 2, "projector": 2, "relay": 2}, timeout=READY_TIMEOUT):
        findings.check(False, exit_report)
    ready_after = time.monotonic() - began
    leaders(topology, findings, list(LEADERS), schema, timeout=30.0)

    apis = topology.live("api")
    api = apis[0]
    key = approved_tenant(topology, api, "scaled@example.com")
    with client(api, key) as http:
        endpoint = webhook_endpoint(http, receiver.url)

    created: list[str] = []
    by_aggregate: dict[uuid.UUID, str] = {}
    creates: list[Create] = []

    def burst(tag: str) -> None:
        batch = keyed_creates(tag, BURST)
        with client(api, key) as http:
            ids = send_all(http, batch)
        creates.extend(batch)
        created.extend(ids)
        by_aggregate.update({Call.create_id(call_id): call_id for call_id in ids})

    # A worker killed while it holds a backlog: its calls are someone else's to run.
    burst("first")
    workers = topology.live("worker")
    victim, killed_held, queued = wait_backlog(topology, api, key, workers, by_aggregate)
    topology.kill(victim)
    topology.start("worker", wait=False)

    # The other worker stopped with SIGTERM while it holds a backlog: it hands it back and exits 0.
    burst("second")
    survivor = next(w for w in workers if w is not victim)
    deadline = time.monotonic() + BACKLOG_TIMEOUT
    while True:
        stopped_held = held_by(topology, survivor, by_aggregate)
        if len(stopped_held) >= BACKLOG_MIN or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    findings.check(bool(stopped_held), f"{survivor.name} held no backlog when it was stopped", [survivor])
    stop_began = time.monotonic()
    code = topology.terminate(survivor, timeout=GRACE_SECONDS + STOP_MARGIN)
    stopped_in = time.monotonic() - stop_began
    findings.check(code == 0, f"{survivor.name} exited with {code} after SIGTERM ({stopped_in:.1f} s; "
                   f"None: still running after {GRACE_SECONDS + STOP_MARGIN:.0f} s, then killed)", [survivor])
    topology.start("worker", wait=False)

    # The relay leading Calling and the projector leading calls_list_v1, killed mid-stream.
    killed_leaders = leaders(topology, findings, ["relay Calling", "projector calls_list_v1"], schema, timeout=10.0)
    for leading in killed_leaders.values():
        topology.kill(leading)
        topology.start(leading.role, wait=False)
    last_restart = time.monotonic()

    # Retried creates, through the other api: the same calls, nothing created twice.
    with client(apis[1], key) as http:
        for create in creates:
            again = create.send(http)
            findings.check(again == create.call_ids, f"a retry of {create.key} answered other calls: "
                           f"{len(set(again) - set(create.call_ids))} new ids")
    findings.check(len(set(created)) == len(created) == 2 * BURST,
                   f"{len(created)} call ids for {2 * BURST} creates, {len(set(created))} distinct")

    # Within 30 s of the last restart: every call completed, its delivery made and received.
    expected = set(created)
    deadline = last_restart + SETTLE_SECONDS
    with client(apis[1], key) as http:
        while True:
            totals = status_totals(http)
            answer = http.get(f"/v1/webhooks/{endpoint['id']}/deliveries", params={"limit": 1})
            deliveries = answer.json()["total"] if answer.status_code == 200 else 0
            received = set(call_completed_ids(receiver))
            done = totals["completed"] == len(expected)
            if done or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        settled_in = time.monotonic() - last_restart
        stuck = {call for calls in held(topology, by_aggregate).values() for call in calls}
        findings.check(done, (
            f"{settled_in:.0f} s after the last restart, of {len(expected)} calls: {totals}; "
            f"{deliveries} deliveries; call.completed received for {len(expected & received)} calls. "
            f"{len(stuck)} calls are still queued although a worker accepted them (call_runner recorded their "
            f"Queued event processed): {len(stuck & set(killed_held))} of the {len(killed_held)} that "
            f"{victim.name} held when it was killed (the API listed {queued} queued then), "
            f"{len(stuck & set(stopped_held))} of the {len(stopped_held)} that {survivor.name} held when it "
            f"was stopped with SIGTERM"), [victim, survivor, *topology.live("worker")])

        listed = page_all(http, "/v1/calls")
        counts = Counter(row["call_id"] for row in listed)
        findings.check(set(counts) == expected and set(counts.values()) == {1}, (
            f"GET /v1/calls lists {len(listed)} rows for {len(expected)} calls: "
            f"{len(expected - set(counts))} missing, {sum(1 for n in counts.values() if n > 1)} more than once"))
        statuses = Counter((row["status"], row["error_code"]) for row in listed)
        findings.check(set(statuses) <= {("completed", None)}, f"calls by (status, error_code): {dict(statuses)}")

        while True:
            rows = page_all(http, f"/v1/webhooks/{endpoint['id']}/deliveries", limit=100)
            per_call = Counter(row["call_id"] for row in rows if row["event_type"] == "call.completed")
            if set(per_call) >= expected or time.monotonic() > last_restart + RECEIVED_SECONDS:
                break
            time.sleep(0.5)
        findings.check(set(per_call) == expected and set(per_call.values()) == {1}, (
            f"{len(rows)} deliveries for {len(expected)} calls: {len(expected - set(per_call))} calls without one, "
            f"{sum(1 for n in per_call.values() if n > 1)} with more than one; by status: "
            f"{dict(Counter(row['status'] for row in rows))}"))
    while (missing := expected - set(call_completed_ids(receiver))) and time.monotonic() < last_restart + RECEIVED_SECONDS:
        time.sleep(0.5)
    findings.check(not missing, f"the receiver did not get call.completed for {len(missing)} calls within "
                   f"{RECEIVED_SECONDS:.0f} s of the last restart")

    # The standbys took the lead from the killed leaders (by now, whatever the log said before).
    for what, killed in killed_leaders.items():
        event, name, value, role, _ = LEADERS[what]
        successor = topology.leader_of(event, name, value, role)
        findings.check(successor is not None, f"no live {role} logged {event} {name}={value} after {killed.name} "
                       "was killed", topology.live(role))

    # Nothing exited on its own; every line is JSON.
    for proc in topology.unexpected_exits():
        findings.check(False, f"{proc.name} exited with {proc.popen.returncode} unasked", [proc])
    for proc in topology.procs:
        lines = proc.not_json()
        findings.check(not lines, f"{proc.name} logged {len(lines)} lines that are not JSON objects, e.g.:\n"
                       + "\n".join(line[:200] for line in lines[:3]))
    print(f"scaled topology: ready after {ready_after:.1f} s, SIGTERM exit in {stopped_in:.1f} s, settled "
          f"{settled_in:.1f} s after the last restart, {time.monotonic() - began:.0f} s in all")
    findings.report()
