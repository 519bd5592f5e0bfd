"""The event store on both backends: one scenario run on popo and on PostgreSQL, and the replay
property — aggregates rebuilt from stored events equal the live ones (ARCHITECTURE.md §4)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings
from hypothesis import strategies as st

from application.accounts import administration, authentication, keys, registration, sessions
from application.accounts.app import Accounts
from domain import ids
from domain.accounts.api_key import ApiKey
from domain.accounts.tenant import Tenant
from domain.accounts.user import User
from domain.errors import DomainError
from entrypoints.bootstrap import Container, bootstrap, bootstrap_memory
from tests.fakes.clock import FakeClock
from tests.postgres import drop_schema, fresh_schema
from tests.support.calls import queued_call
from tests.support.setup import FAST_HASHER, PASSWORD


@pytest.fixture(params=["popo", "postgres"])
def backend(request, settings, clock, mail, pg_server) -> Iterator[Container]:
    """The same Accounts application on the in-memory backend and on PostgreSQL."""
    if request.param == "popo":
        container = bootstrap_memory(settings, clock=clock, email=mail, hasher=FAST_HASHER)
        yield container
        container.close()
        return
    db = fresh_schema(pg_server)
    container = bootstrap(settings, database=db, clock=clock, email=mail, hasher=FAST_HASHER, projections=False)
    yield container
    container.close()
    drop_schema(db)


def state(aggregate: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(aggregate).items() if k != "_pending_events"}


def stored(accounts: Accounts, aggregate: Any) -> dict[str, Any]:
    """Rebuild from the stored events, bypassing any cache."""
    events = list(accounts.events.get(aggregate.id))
    rebuilt = None
    for event in events:
        rebuilt = event.mutate(rebuilt)
    return state(rebuilt)


def test_account_scenario_runs_the_same_on_both_backends(backend: Container, clock: FakeClock, mail):
    accounts = backend.accounts
    done = registration.register(accounts, email="ops@example.com", password=PASSWORD, name="Ops")
    principal = authentication.authenticate_key(accounts, done.key.secret, method="GET", path="/auth/me")
    scoped = keys.issue_key(accounts, principal, name="reader", scopes=("calls:read",), number_ids=None)
    successor, old = keys.rotate_key(accounts, principal, scoped.key_id)
    authentication.authenticate_key(accounts, scoped.secret, method="GET", path="/v1/calls")
    keys.revoke_key(accounts, principal, successor.key_id)
    session = sessions.login(accounts, email="ops@example.com", password=PASSWORD, client_ip="127.0.0.1")
    sessions.logout(accounts, token=session.access_token)
    administration.approve_user(accounts, done.user.user_id, by="test")
    clock.advance(timedelta(hours=25))

    tenant = accounts.repository.get(done.tenant.id)
    old_key = accounts.repository.get(old.id)
    assert tenant.verification_status == "approved"
    assert [type(e).__name__ for e in accounts.events.get(old.id)] == ["Issued", "Rotated", "RotatedKeyUsed"]
    assert old_key.status(clock()) == "expired"
    assert accounts.repository.get(successor.aggregate.id).status(clock()) == "revoked"
    for aggregate_id in (done.user.id, done.tenant.id, old.id, successor.aggregate.id):
        live = accounts.repository.get(aggregate_id)
        assert stored(accounts, live) == state(live)
        assert all(e.tenant_id == done.tenant.tenant_id for e in accounts.events.get(aggregate_id))


OPERATIONS = st.lists(
    st.sampled_from(["rotate", "use", "revoke", "tick", "approve", "verify", "password", "login", "logout"]),
    max_size=12,
)


def _apply(ops: list[str], clock: FakeClock) -> tuple[ApiKey, User, Tenant]:
    from domain.accounts import api_key as rules

    now = clock()
    tenant = Tenant(tenant_id=ids.to_public(ids.TENANT, uuid.uuid4()), name="t", tier="standard", verification_status="pending_review", at=now)
    user = User(tenant_id=tenant.tenant_id, user_id=ids.to_public(ids.USER, uuid.uuid4()), email="x@example.com", name=None,
                password_hash="scrypt$1$1$1$a$b", is_admin=False, at=now)
    secret = rules.generate_secret()
    key = ApiKey(tenant_id=tenant.tenant_id, user_id=user.user_id, key_hash=rules.hash_secret(secret),
                 prefix=secret[:16], name="k", scopes=("calls:read", "calls:create"), number_ids=("n1",),
                 issued_by="test", at=now)
    for op in ops:
        now = clock()
        try:
            if op == "rotate":
                key.rotate("key_" + "c" * 32, by="usr", now=now)
            elif op == "use":
                key.record_use_during_grace("GET", "/v1/x", now)
            elif op == "revoke":
                key.revoke(by="usr", now=now)
            elif op == "tick":
                clock.advance(timedelta(hours=7, microseconds=13))
            elif op == "approve":
                tenant.approve(by="cli", now=now)
            elif op == "verify":
                user.verify_email(now)
            elif op == "password":
                user.change_password("scrypt$2$1$1$c$d", reason="reset", now=now)
            elif op == "login":
                user.record_login("jti", "127.0.0.1", now)
            elif op == "logout":
                user.record_logout("jti", now)
        except DomainError:
            pass
    return key, user, tenant


def _replays_equal(accounts: Accounts, ops: list[str]) -> None:
    aggregates = _apply(ops, FakeClock())
    accounts.save(*aggregates)
    for live in aggregates:
        assert stored(accounts, live) == state(live)


@given(ops=OPERATIONS)
@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_replay_rebuilds_equal_aggregates_on_popo(memory_container: Container, ops: list[str]):
    _replays_equal(memory_container.accounts, ops)


@given(ops=OPERATIONS)
@hypothesis_settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_replay_rebuilds_equal_aggregates_on_postgres(container: Container, ops: list[str]):
    _replays_equal(container.accounts, ops)


CALL_OPERATIONS = st.lists(
    st.sampled_from(["start", "answer_human", "answer_machine", "turn_agent", "turn_callee", "end", "outcome",
                     "complete", "fail", "tick"]),
    max_size=14,
)


def _call_life(ops: list[str], clock: FakeClock):
    from decimal import Decimal

    from domain.calls.call_rules import AGENT, CALLEE, CallStateError, new_call_id

    call = queued_call(tenant_id=ids.to_public(ids.TENANT, uuid.uuid4()), call_id=new_call_id(), direction="outbound",
                       mode="simulated", to="+442071838750", from_number="+15005550006", objective="Confirm",
                       outcome_schema={"ok": {"type": "boolean", "optional": False}}, consent_type="prior_express",
                       consent_record_id=None, voice_id=None, voice_engine="alpha_25", language="en-US",
                       metadata={"crm": {"id": 7}}, variables={"name": "Ada"}, simulation={"facts": {"ok": True}},
                       created_by="key_x", max_duration_seconds=600, at=clock())
    for op in ops:
        now = clock()
        try:
            if op == "start":
                call.start(now)
            elif op == "answer_human":
                call.answer("human", now)
            elif op == "answer_machine":
                call.answer("machine_start", now)
            elif op == "turn_agent":
                call.record_turn(AGENT, "Is it still on?", now)
            elif op == "turn_callee":
                call.record_turn(CALLEE, "Yes.", now)
            elif op == "end":
                call.end(12, now)
            elif op == "outcome":
                call.record_outcome({"ok": True}, 0.9, {"input_tokens": 10}, now)
            elif op == "complete":
                call.complete(Decimal("0.0100"), Decimal("0.0020"), now)
            elif op == "fail":
                call.fail("cancelled", "cancelled by test", now)
            elif op == "tick":
                clock.advance(timedelta(seconds=3, microseconds=7))
        except CallStateError:
            pass
    return call


@given(ops=CALL_OPERATIONS)
@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_replay_rebuilds_equal_calls_on_popo(memory_container: Container, ops: list[str]):
    calling = memory_container.calling
    call = _call_life(ops, FakeClock())
    calling.save(call)
    assert stored(calling, call) == state(call)
    assert all(event.tenant_id == call.tenant_id for event in calling.events.get(call.id))


@given(ops=CALL_OPERATIONS)
@hypothesis_settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_replay_rebuilds_equal_calls_on_postgres(container: Container, ops: list[str]):
    call = _call_life(ops, FakeClock())
    container.calling.save(call)
    assert stored(container.calling, call) == state(call)
