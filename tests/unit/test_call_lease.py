"""A simulated call's claim is a lease (domain/calls/call.py): held while the runner
renews it, taken over once it has run out, and the conversation then starts again from nothing."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from domain.calls.call import Call
from domain.calls.call_rules import AGENT, CALLEE, IN_PROGRESS, CallStateError
from domain.calls.call_rules import LEASE, RENEW_AFTER
from tests.support.aggregates import given
from tests.support.calls import NOW, OUTCOME, live_call, queued_call, started_call


def talked(call: Call) -> Call:
    call.machine_verdict("human", NOW)
    call.record_turn(AGENT, "Is the appointment still on?", NOW)
    call.record_turn(CALLEE, "Yes.", NOW)
    call.end(4, NOW)
    call.record_outcome(OUTCOME, 0.9, {"input_tokens": 3}, NOW)
    return call


def test_the_claim_holds_the_call_for_one_lease():
    call = given(queued_call()).when(lambda c: c.start(NOW)).then(Call.Started, Call.Leased, lease_until=NOW + LEASE)

    assert not call.abandoned(NOW + LEASE - timedelta(microseconds=1))
    assert call.abandoned(NOW + LEASE)


def test_a_lease_is_renewed_only_once_renew_after_has_passed():
    call = started_call()  # leased at later(1)
    started = call.started_at
    assert started is not None

    given(call).when(lambda c: c.renew_lease(started + RENEW_AFTER / 2)).then(returns=False)
    given(call).when(lambda c: c.renew_lease(started + RENEW_AFTER)).then(
        Call.Leased, returns=True, lease_until=started + RENEW_AFTER + LEASE)
    assert not call.abandoned(started + LEASE + timedelta(seconds=1))


def test_an_abandoned_call_is_taken_over_and_starts_again_from_nothing():
    call = talked(started_call())
    expired = call.lease_expires_at
    assert expired is not None

    call = given(call).when(lambda c: c.take_over(expired)).then(
        Call.Restarted, status=IN_PROGRESS, started_at=expired, lease_until=expired + LEASE, answered_by=None,
        turns=[], duration_seconds=None, ended_at=None, outcome=None, confidence=None, usage={})
    assert not call.abandoned(expired)


def test_a_call_whose_runner_still_holds_it_is_not_taken_over():
    call = started_call()

    given(call).when(lambda c: c.take_over(NOW + timedelta(seconds=2))).then_raises(CallStateError)


def test_queued_and_live_calls_are_never_abandoned():
    dialing = live_call()
    dialing.request_dial(amd=False, now=NOW)

    for call in (queued_call(), dialing):
        assert not call.abandoned(NOW + timedelta(hours=1))


def test_a_settled_call_is_never_taken_over():
    call = talked(started_call())
    call.complete(Decimal("0.0100"), Decimal("0.0020"), NOW)

    assert not call.abandoned(NOW + timedelta(hours=1))
    given(call).when(lambda c: c.take_over(NOW + timedelta(hours=1))).then_raises(CallStateError)


def test_a_call_started_before_leases_existed_counts_its_lease_from_its_start():
    call = started_call()
    call.lease_until = None  # as replayed from a Started stored without a Leased after it
    assert call.started_at is not None

    assert call.lease_expires_at == call.started_at + LEASE
    assert call.abandoned(call.started_at + LEASE)
