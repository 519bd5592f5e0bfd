"""A call runner accepts a queued simulated call under a lease in PostgreSQL before its source
moves on (adapters/postgres/run_leases.py): the calls waiting in a runner that dies are taken by
another runner once the lease runs out, the calls of one that stops are handed back at once, and
no call is held by two live runners."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from types import SimpleNamespace

import pytest
from psycopg_pool import ConnectionPool

from adapters.postgres.database import DatabaseConfig
from adapters.postgres.pools import sync_pool
from adapters.postgres.run_leases import RunLeases
from application.calling import runner
from entrypoints.workers.call_runner import CallRunner
from tests.support.calls import queued_call

TENANT = "ten_" + "a" * 32
SHORT = timedelta(seconds=1)


@pytest.fixture
def pool(db: DatabaseConfig) -> Iterator[ConnectionPool]:
    pool = sync_pool(db, max_size=4, name="test-leases")
    RunLeases(pool, owner="setup", lease=SHORT).create_table()
    yield pool
    pool.close()


def test_a_lease_is_granted_to_one_owner_until_it_runs_out(pool: ConnectionPool) -> None:
    first, second = RunLeases(pool, owner="first", lease=SHORT), RunLeases(pool, owner="second", lease=SHORT)
    calls = [("cll_1", TENANT), ("cll_2", TENANT)]
    assert first.take(calls) == calls
    assert second.take(calls) == []  # held by a live owner
    assert first.take(calls) == calls  # already ours
    time.sleep(1.2)
    first.renew(["cll_1"])  # only cll_2 runs out
    assert second.take(calls) == [("cll_2", TENANT)]
    first.release(["cll_1"])  # handed back: free at once
    assert second.take(calls) == calls
    second.forget("cll_1")
    assert first.take([("cll_1", TENANT)]) == [("cll_1", TENANT)]


class _Blocked:
    """A runner whose every worker is busy: accepted calls wait in its memory."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.ran: list[str] = []

    def conversation(self, calling: object, call: object) -> None:
        self.ran.append(call.call_id)  # type: ignore[attr-defined]
        self.release.wait(10)


def _runner(pool: ConnectionPool, owner: str, *, grace: float = 5.0) -> CallRunner:
    leases = RunLeases(pool, owner=owner, lease=SHORT)
    return CallRunner(SimpleNamespace(), SimpleNamespace(insert_tracking=lambda tracking: None),
                      simulation_workers=1, leases=leases, grace_seconds=grace)


def _fed(pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch, owner: str, count: int,
         grace: float = 5.0) -> tuple[dict[str, object], _Blocked, CallRunner]:
    """A runner with one worker that ``count`` queued calls reached: one runs (blocked), the rest wait."""
    calls = {c.call_id: c for c in (queued_call(tenant_id=TENANT) for _ in range(count))}
    blocked = _Blocked()
    monkeypatch.setattr(runner, "claim", lambda calling, call_id: calls[call_id])
    monkeypatch.setattr(runner, "run", blocked.conversation)
    fed = _runner(pool, owner, grace=grace)
    for call in calls.values():
        fed.process_event(call.collect_events()[0], tracking=object())
    time.sleep(0.2)
    return calls, blocked, fed


def _rows(pool: ConnectionPool) -> dict[str, str]:
    with pool.connection() as conn:
        return dict(conn.execute("SELECT call_id, owner FROM call_run_leases").fetchall())


def test_the_event_is_marked_processed_only_after_the_lease_is_committed(pool: ConnectionPool,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, str]] = []
    leases = RunLeases(pool, owner="worker-a", lease=SHORT)
    reactor = CallRunner(SimpleNamespace(), SimpleNamespace(insert_tracking=lambda tracking: seen.append(_rows(pool))),
                         simulation_workers=1, leases=leases)
    call = queued_call(tenant_id=TENANT)
    try:
        # The worker tries the call only after the reactor has marked its event processed.
        monkeypatch.setattr(runner, "claim", lambda calling, call_id: (time.sleep(0.5), None)[1])
        reactor.process_event(call.collect_events()[0], tracking=object())
    finally:
        reactor.close()
    assert seen == [{call.call_id: "worker-a"}]


def test_calls_waiting_in_a_runner_that_died_are_taken_by_a_live_one(pool: ConnectionPool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _calls, blocked, dead = _fed(pool, monkeypatch, "dead", 4)
    assert len(blocked.ran) == 1  # one worker busy, three waiting in memory under leases
    waiting = {call_id for call_id, owner in _rows(pool).items() if owner == "dead"}
    assert len(waiting) == 3
    dead._stop.set()  # it dies: its leases are renewed no more, nothing is handed back,
    dead._simulations.stop()  # and what waited in its memory is gone

    live = _runner(pool, "live")
    listed = [(call_id, TENANT) for call_id in waiting]  # what the calls list shows queued
    assert live.resume(listed) == 0  # the dead runner's leases still run
    time.sleep(1.3)
    blocked.release.set()
    assert live.resume(listed) == 3  # run out: taken, once each
    deadline = time.monotonic() + 5
    while len(blocked.ran) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sorted(blocked.ran[1:]) == sorted(waiting)
    live.close()


def test_a_runner_that_stops_hands_its_waiting_calls_back_at_once(pool: ConnectionPool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    calls, blocked, stopping = _fed(pool, monkeypatch, "stopping", 3, grace=0.2)
    began = time.monotonic()
    stopping.close()  # the running call is past its grace: left to its own (aggregate) lease
    assert time.monotonic() - began < 2
    assert "stopping" not in _rows(pool).values()  # two handed back
    other = _runner(pool, "other")
    assert other.resume([(call_id, TENANT) for call_id in calls if call_id not in blocked.ran]) == 2
    blocked.release.set()
    other.close()
