"""A simulated call whose runner died is taken over and finished; a conversation's writes wait out
a database blip instead of failing the call (issue 13, item 2). On PostgreSQL: the take-over
race and the check that an interrupted commit was stored need the real recorder."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from adapters.postgres.pools import is_outage
from application.calling import runner
from application.errors import ConflictError
from domain.calls.call import Call
from domain.calls.call_rules import CALLEE, COMPLETED, IN_PROGRESS
from domain.calls.call_rules import LEASE
from entrypoints.workers.call_runner import CallRunner
from tests.support.calls import queued_call


def _queued(container, clock) -> Call:
    call = queued_call(tenant_id="ten_" + "a" * 32, at=clock(), simulation={"facts": {"confirmed": True}})
    container.calling.commit(call)
    return call


def _stored(container, call_id: str) -> Call:
    found = container.calling.find(Call, Call.create_id(call_id))
    assert found is not None
    return found


def test_a_call_whose_runner_died_is_taken_over_once_its_lease_ran_out_and_completes(container, clock):
    calling = container.calling
    call = _queued(container, clock)
    dead = runner.claim(calling, call.call_id)  # the runner that claimed it dies here
    assert dead is not None and dead.status == IN_PROGRESS

    assert runner.take_over(calling, call.call_id) is None  # its lease still runs
    clock.advance(LEASE)
    taken = runner.take_over(calling, call.call_id)
    assert taken is not None
    assert runner.take_over(calling, call.call_id) is None  # the new runner holds it now

    runner.run(calling, taken)

    done = _stored(container, call.call_id)
    assert done.status == COMPLETED and done.outcome == {"confirmed": True}
    stored_types = [type(e).__name__ for e in calling.repository.event_store.get(done.id)]
    assert stored_types[:4] == ["Queued", "Started", "Leased", "Restarted"]


def test_a_runner_that_was_only_slow_loses_to_the_take_over(container, clock):
    calling = container.calling
    call = _queued(container, clock)
    slow = runner.claim(calling, call.call_id)
    assert slow is not None
    stale = _stored(container, call.call_id)
    clock.advance(LEASE)
    assert runner.take_over(calling, call.call_id) is not None

    stale.record_turn(CALLEE, "Hello?", clock())
    with pytest.raises(ConflictError):
        calling.commit(stale)
    runner.run(calling, slow)  # its first write conflicts: the run ends quietly
    stored = _stored(container, call.call_id)
    assert stored.status == IN_PROGRESS and stored.turns == []  # still the new runner's


def test_the_call_runner_takes_over_only_abandoned_calls(container, clock):
    calling = container.calling
    abandoned, running = _queued(container, clock), _queued(container, clock)
    assert runner.claim(calling, abandoned.call_id) is not None
    clock.advance(LEASE)
    held = runner.claim(calling, running.call_id)  # claimed just now: its lease runs
    assert held is not None
    worker = CallRunner(calling, tracking=None, simulation_workers=1)
    try:
        offered = worker.take_over([(abandoned.call_id, abandoned.tenant_id), (running.call_id, running.tenant_id)])
        assert offered == 2
        deadline = time.monotonic() + 10
        while _stored(container, abandoned.call_id).status != COMPLETED and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.close()
    assert _stored(container, abandoned.call_id).status == COMPLETED
    assert _stored(container, running.call_id).status == IN_PROGRESS


class _Blip:
    """The commit path during a short outage: the first ``failures`` commits raise a lost
    connection; with ``saved_anyway`` the first one reaches the database before its answer is
    lost (the ambiguous case)."""

    def __init__(self, commit, failures: int, saved_anyway: bool = False) -> None:
        self._commit, self.failures, self.saved_anyway, self.tries = commit, failures, saved_anyway, 0
        self._lock = threading.Lock()

    def __call__(self, events):
        with self._lock:
            self.tries += 1
            failing = self.tries <= self.failures
        if failing:
            if self.saved_anyway and self.tries == 1:
                self._commit(events)
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return self._commit(events)


@pytest.mark.parametrize("saved_anyway", [False, True], ids=["lost", "saved_before_the_connection_broke"])
def test_a_conversations_write_waits_out_a_blip(container, clock, monkeypatch, saved_anyway):
    calling = container.calling
    assert calling.is_outage is is_outage
    call = runner.claim(calling, _queued(container, clock).call_id)
    assert call is not None
    blip = _Blip(calling.commits.commit, failures=3, saved_anyway=saved_anyway)
    monkeypatch.setattr(calling.commits, "commit", blip)

    call.record_turn(CALLEE, "Hello?", clock())
    calling.commit(call, outage_patience=5.0)

    assert blip.tries == 4
    assert [turn["text"] for turn in _stored(container, call.call_id).turns] == ["Hello?"]


def test_without_patience_or_past_it_the_outage_is_raised(container, clock, monkeypatch):
    calling = container.calling
    call = runner.claim(calling, _queued(container, clock).call_id)
    assert call is not None
    monkeypatch.setattr(calling.commits, "commit", _Blip(calling.commits.commit, failures=100))

    call.record_turn(CALLEE, "Hello?", clock())
    with pytest.raises(psycopg.OperationalError):
        calling.commit(call)
    call = _stored(container, call.call_id)
    call.record_turn(CALLEE, "Anyone there?", clock())
    started = time.monotonic()
    with pytest.raises(psycopg.OperationalError):
        calling.commit(call, outage_patience=0.5)
    assert time.monotonic() - started < 1.5


def test_a_run_cut_off_by_a_long_outage_leaves_the_call_for_a_take_over(container, clock, monkeypatch):
    """Past its patience the runner stops without failing the call (nothing can be written, and
    ``internal_error`` would be wrong): the lease runs out and the call is taken over."""
    calling = container.calling
    call = runner.claim(calling, _queued(container, clock).call_id)
    assert call is not None
    monkeypatch.setattr(runner, "OUTAGE_PATIENCE", 0.3)
    original = calling.commits.commit
    monkeypatch.setattr(calling.commits, "commit", _Blip(original, failures=1000))
    worker = CallRunner(calling, tracking=None, simulation_workers=1)
    try:
        worker._run(call)  # the worker thread's entry: must not raise, must not fail the call
    finally:
        worker.close()
    monkeypatch.setattr(calling.commits, "commit", original)
    assert _stored(container, call.call_id).status == IN_PROGRESS

    clock.advance(LEASE)
    taken = runner.take_over(calling, call.call_id)
    assert taken is not None
    runner.run(calling, taken)
    assert _stored(container, call.call_id).status == COMPLETED
