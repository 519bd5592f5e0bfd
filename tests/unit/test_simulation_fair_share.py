"""Simulated conversations are shared between tenants (entrypoints/workers/fair_share.py): one
tenant's many slow calls cannot hold back another tenant's call, and a call is claimed only when a
worker takes it, so a backlog stays queued."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from application.calling import runner
from entrypoints.workers.call_runner import CallRunner
from entrypoints.workers.fair_share import FairShare
from tests.support.calls import queued_call

TENANT_A = "ten_" + "a" * 32
TENANT_B = "ten_" + "b" * 32


def test_another_tenants_call_starts_before_the_backlog_of_a_busy_tenant(monkeypatch):
    """Tenant A queues 20 calls whose slow brain holds each until the test lets one end; tenant B's
    one call, queued after them, is the next to start when one of A's ends."""
    ends = threading.Semaphore(0)
    started: list[str] = []
    b_started = threading.Event()

    def slow_conversation(calling, call) -> None:
        started.append(call.tenant_id)
        if call.tenant_id == TENANT_B:
            b_started.set()
        else:
            ends.acquire(timeout=10)

    a_calls = [queued_call(tenant_id=TENANT_A) for _ in range(20)]
    b_call = queued_call(tenant_id=TENANT_B)
    calls = {c.call_id: c for c in [*a_calls, b_call]}
    claimed: list[str] = []
    monkeypatch.setattr(runner, "claim", lambda calling, call_id: claimed.append(call_id) or calls[call_id])
    monkeypatch.setattr(runner, "run", slow_conversation)
    tracked: list[object] = []
    reactor = CallRunner(SimpleNamespace(), SimpleNamespace(insert_tracking=tracked.append), simulation_workers=2)
    try:
        for call in a_calls:
            reactor.process_event(call.collect_events()[0], tracking=object())
        deadline = time.monotonic() + 2
        while len(started) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        began = time.monotonic()
        reactor.process_event(b_call.collect_events()[0], tracking=object())
        assert time.monotonic() - began < 0.5  # the reactor never waits for a worker
        assert len(tracked) == 21
        time.sleep(0.1)
        assert started == [TENANT_A, TENANT_A] and len(claimed) == 2  # A's other 18 stay queued, unclaimed

        ends.release()  # one of A's calls ends: B's call is next in turn, not A's third
        assert b_started.wait(2), "tenant B's call did not start"
        assert started[:3] == [TENANT_A, TENANT_A, TENANT_B]
    finally:
        for _ in range(20):
            ends.release()
        reactor.close()
    assert len(claimed) == len(started)  # closing claims nothing it does not run


def test_each_tenant_takes_its_turn():
    order: list[str] = []
    gate = threading.Event()
    done = threading.Semaphore(0)
    share = FairShare(1, "test")

    def work(tenant: str) -> None:
        gate.wait(5)
        order.append(tenant)
        done.release()

    try:
        for tenant, count in (("a", 4), ("b", 2), ("c", 1)):
            for _ in range(count):
                share.submit(tenant, lambda tenant=tenant: tenant, work)
        gate.set()
        for _ in range(7):
            assert done.acquire(timeout=5)
    finally:
        share.close()
    # the first "a" may already be running when the rest arrive; after it, each tenant in turn
    assert order == ["a", "b", "c", "a", "b", "a", "a"]


def test_a_call_no_longer_queued_and_a_failing_claim_keep_no_worker():
    share = FairShare(1, "test")
    ran = threading.Event()

    def failing():
        raise ConnectionError("database unreachable")

    try:
        share.submit("a", lambda: None, lambda call: None)  # cancelled meanwhile: nothing to run
        share.submit("a", failing, lambda call: None)
        share.submit("a", lambda: 1, lambda call: ran.set())
        assert ran.wait(5)
    finally:
        share.close()


def test_closing_leaves_waiting_calls_unclaimed():
    share = FairShare(1, "test")
    hold = threading.Event()
    claims: list[int] = []
    share.submit("a", lambda: claims.append(1) or 1, lambda call: hold.wait(5))
    time.sleep(0.1)
    share.submit("a", lambda: claims.append(2) or 2, lambda call: None)
    closer = threading.Thread(target=share.close)
    closer.start()
    hold.set()
    closer.join(5)
    assert claims == [1]


def test_queued_calls_the_log_moved_past_are_taken_up_again_once_each(monkeypatch):
    """Waiting calls are claimed only when a worker is free, so a restart (or a crash) leaves them
    queued behind the reactor's position: handed to the runner again from the calls list, each runs
    once, even when the list names one that is already waiting or running."""
    calls = {c.call_id: c for c in (queued_call(tenant_id=TENANT_A), queued_call(tenant_id=TENANT_B))}
    ran: list[str] = []
    finished = threading.Semaphore(0)
    gate = threading.Event()
    monkeypatch.setattr(runner, "claim", lambda calling, call_id: gate.wait(5) and calls.pop(call_id, None))
    monkeypatch.setattr(runner, "run", lambda calling, call: (ran.append(call.call_id), finished.release()))
    listed = [(call_id, call.tenant_id) for call_id, call in calls.items()]
    reactor = CallRunner(SimpleNamespace(), SimpleNamespace(insert_tracking=lambda _: None), simulation_workers=2)
    try:
        assert reactor.resume(listed) == 2
        assert reactor.resume(listed) == 0  # both still waiting: not taken twice
        gate.set()
        assert finished.acquire(timeout=3) and finished.acquire(timeout=3)
    finally:
        reactor.close()
    assert sorted(ran) == sorted(call_id for call_id, _ in listed)


def test_the_resumer_asks_the_calls_list_in_every_process_with_a_call_runner(monkeypatch):
    """Whether the runner is fed from the log or from Kafka, the resumer looks every round: a call
    a stopped runner held is taken up by whichever runner is alive (leases keep that exclusive)."""
    from entrypoints.workers import periodic

    asked: list[object] = []
    monkeypatch.setattr(periodic, "simulated_calls", lambda pool, status, before: asked.append(before) or [])
    calling = SimpleNamespace(ports=SimpleNamespace(clock=lambda: queued_call().created_at))
    runner = SimpleNamespace(resume=lambda waiting: 0, take_over=lambda running: 0)
    job = periodic.simulation_resumer(calling, "pool", runner)

    job.job()
    job.job()

    assert len(asked) == 4  # each round: queued calls, and running ones for a take-over
