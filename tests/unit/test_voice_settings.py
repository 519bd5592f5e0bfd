"""Tenant voice settings, the system defaults singleton, the lookup call creation reads them through,
and the engine a created call gets; on the popo event store (no database)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from application.accounts import administration, authentication, registration, voice
from application.calling.create import CallRequest, prepare_call
from application.errors import FieldError
from application.principal import Principal
from domain.accounts.system_defaults import SYSTEM_TENANT, SystemDefaults
from domain.accounts.tenant import Tenant
from domain.calls.engine_choice import VoiceDefaults, VoiceRoutingError, weights_from
from domain.calls.engines import ENGINES
from entrypoints.bootstrap import Container
from tests.fakes.clock import FakeClock
from tests.support.setup import PASSWORD

LONDON = "+442071838750"  # 12:00 in London when the FakeClock starts: inside call hours


def state(aggregate: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(aggregate).items() if k != "_pending_events"}


def rebuilt(container: Container, aggregate: Any) -> dict[str, Any]:
    replayed = None
    for event in container.accounts.events.get(aggregate.id):
        replayed = event.mutate(replayed)
    return state(replayed)


def _principal(container: Container, email: str = "voice@example.com") -> Principal:
    done = registration.register(container.accounts, email=email, password=PASSWORD, name=None)
    administration.approve_user(container.accounts, done.user.user_id, by="test")
    return authentication.authenticate_key(container.accounts, done.key.secret, method="POST", path="/v1/calls")


def _create(container: Container, principal: Principal, **fields: Any) -> str:
    request = CallRequest(to=LONDON, objective="Confirm", outcome_schema={"ok": {"type": "boolean"}},
                          consent_type="prior_express", mode="simulated", **fields)
    return prepare_call(container.calling, principal, request, container.clock()).voice_engine


# -- the aggregates -----------------------------------------------------------------------------------


def test_a_tenant_starts_with_no_default_and_ab_routing_on(memory_container):
    principal = _principal(memory_container)
    tenant = voice.tenant_settings(memory_container.accounts, principal.tenant_id)
    assert (tenant.voice_engine_default, tenant.voice_ab_disabled) == (None, False)


def test_changing_the_tenant_settings_records_who_and_when_and_replays_equal(memory_container, clock: FakeClock):
    principal = _principal(memory_container)
    changed = voice.change_tenant_settings(memory_container.accounts, principal, voice_engine_default="beta_think_fast",
                                           voice_ab_disabled=True)
    assert (changed.voice_engine_default, changed.voice_ab_disabled) == ("beta_think_fast", True)
    last = list(memory_container.accounts.events.get(changed.id))[-1]
    assert type(last) is Tenant.VoiceSettingsChanged
    assert (last.by, last.at, last.tenant_id) == (principal.actor, clock(), principal.tenant_id)
    assert rebuilt(memory_container, changed) == state(changed)


def test_a_field_left_out_keeps_its_value_and_null_clears_the_default(memory_container):
    principal = _principal(memory_container)
    accounts = memory_container.accounts
    voice.change_tenant_settings(accounts, principal, voice_engine_default="alpha_31")
    kept = voice.change_tenant_settings(accounts, principal, voice_ab_disabled=True)
    assert (kept.voice_engine_default, kept.voice_ab_disabled) == ("alpha_31", True)
    cleared = voice.change_tenant_settings(accounts, principal, voice_engine_default=None)
    assert (cleared.voice_engine_default, cleared.voice_ab_disabled) == (None, True)


def test_setting_the_same_values_again_records_nothing(memory_container):
    principal = _principal(memory_container)
    accounts = memory_container.accounts
    first = voice.change_tenant_settings(accounts, principal, voice_ab_disabled=True)
    again = voice.change_tenant_settings(accounts, principal, voice_ab_disabled=True)
    assert again.version == first.version


def test_an_unknown_engine_is_refused_at_the_field(memory_container):
    principal = _principal(memory_container)
    with pytest.raises(FieldError) as refused:
        voice.change_tenant_settings(memory_container.accounts, principal, voice_engine_default="gamma_1")
    assert refused.value.loc == ["body", "voice_engine_default"]
    assert refused.value.code == "unknown_voice_engine"
    with pytest.raises(VoiceRoutingError):
        Tenant(tenant_id="ten_" + "a" * 32, name="t", tier="standard", verification_status="approved",
               at=FakeClock()()).change_voice_settings(voice_engine_default="x", voice_ab_disabled=False, by="k",
                                                       now=FakeClock()())


def test_system_defaults_are_the_built_in_ones_until_an_operator_changes_them(memory_container):
    assert voice.system_defaults(memory_container.accounts) is None
    assert voice.routing_for(memory_container.accounts, "ten_" + "0" * 32).defaults == VoiceDefaults()


def test_changing_the_system_defaults_saves_one_singleton(memory_container, clock):
    admin = _principal(memory_container, "ops@example.com")
    accounts = memory_container.accounts
    saved = voice.change_system_defaults(accounts, admin, voice_ab_weights={"alpha_31": 1, "beta_think_fast": 3})
    assert saved.id == SystemDefaults.create_id()
    assert saved.voice.voice_engine_default == "alpha_25"
    assert saved.voice.weights_dict() == {"alpha_31": 1.0, "beta_think_fast": 3.0}
    assert (saved.updated_by, saved.updated_at) == (admin.actor, clock())
    again = voice.change_system_defaults(accounts, admin, voice_engine_default="beta_think_fast")
    assert again.id == saved.id and again.voice.weights_dict() == {"alpha_31": 1.0, "beta_think_fast": 3.0}
    events = list(accounts.events.get(saved.id))
    assert [type(e).__name__ for e in events] == ["Started", "VoiceDefaultsChanged", "VoiceDefaultsChanged"]
    assert all(e.tenant_id == SYSTEM_TENANT for e in events)
    assert rebuilt(memory_container, again) == state(accounts.repository.get(saved.id))


@pytest.mark.parametrize(("fields", "loc"), [
    ({"voice_engine_default": "gamma"}, ["body", "voice_engine_default"]),
    ({"voice_ab_weights": {"alpha_25": 0}}, ["body", "voice_ab_weights"]),
    ({"voice_ab_weights": {"gamma": 1}}, ["body", "voice_ab_weights"]),
])
def test_bad_system_defaults_are_refused_at_the_field(memory_container, fields, loc):
    admin = _principal(memory_container, "ops@example.com")
    with pytest.raises(FieldError) as refused:
        voice.change_system_defaults(memory_container.accounts, admin, **fields)
    assert refused.value.loc == loc
    assert voice.system_defaults(memory_container.accounts) is None


@given(changes=st.lists(st.tuples(st.none() | st.sampled_from(ENGINES), st.booleans()), max_size=8),
       weights=st.lists(st.dictionaries(st.sampled_from(ENGINES), st.integers(0, 5), min_size=1)
                        .filter(lambda w: any(w.values())), max_size=4))
@settings(max_examples=40, deadline=None)
def test_voice_settings_replay_equal_to_the_live_aggregates(changes, weights):
    now = FakeClock()()
    tenant = Tenant(tenant_id="ten_" + "b" * 32, name="t", tier="standard", verification_status="approved", at=now)
    for engine, disabled in changes:
        tenant.change_voice_settings(voice_engine_default=engine, voice_ab_disabled=disabled, by="key_x", now=now)
    defaults = SystemDefaults(at=now)
    for raw in weights:
        defaults.change_voice(voice_engine_default="alpha_31", voice_ab_weights=raw, by="usr_x", now=now)
    for live in (tenant, defaults):
        replayed = None
        for event in live.collect_events():
            replayed = event.mutate(replayed)
        assert state(replayed) == state(live)


# -- the lookup and the call's engine ---------------------------------------------------------------


def test_the_lookup_reads_nothing_while_the_accounts_head_stands_still(memory_container, monkeypatch):
    principal = _principal(memory_container)
    accounts = memory_container.accounts
    first = voice.routing_for(accounts, principal.tenant_id)
    reads: list[Any] = []
    original = accounts.find
    monkeypatch.setattr(accounts, "find", lambda *args: reads.append(args) or original(*args))
    for _ in range(50):
        assert voice.routing_for(accounts, principal.tenant_id) is first
        _create(memory_container, principal)
    assert reads == []

    voice.change_tenant_settings(accounts, principal, voice_ab_disabled=True)  # moves the head
    reads.clear()
    assert voice.routing_for(accounts, principal.tenant_id).ab_disabled is True
    assert len(reads) == 2  # the tenant and the defaults, once
    voice.routing_for(accounts, principal.tenant_id)
    assert len(reads) == 2


def test_a_call_without_an_engine_gets_the_ab_engine_of_its_id(memory_container):
    principal = _principal(memory_container)
    voice.change_system_defaults(memory_container.accounts, principal, voice_ab_weights={"alpha_25": 1, "alpha_31": 1})
    routing = voice.routing_for(memory_container.accounts, principal.tenant_id)
    calls = [prepare_call(memory_container.calling, principal,
                          CallRequest(to=LONDON, objective="Confirm", outcome_schema={"ok": {"type": "boolean"}},
                                      consent_type="prior_express", mode="simulated"),
                          memory_container.clock()) for _ in range(60)]
    assert all(call.voice_engine == routing.engine_for(call.call_id) for call in calls)
    assert {call.voice_engine for call in calls} == {"alpha_25", "alpha_31"}


def test_the_kill_switch_pins_the_tenant_default_and_the_system_default_otherwise(memory_container):
    principal = _principal(memory_container)
    accounts = memory_container.accounts
    voice.change_tenant_settings(accounts, principal, voice_ab_disabled=True)
    assert {_create(memory_container, principal) for _ in range(20)} == {"alpha_25"}  # the system default
    voice.change_system_defaults(accounts, principal, voice_engine_default="alpha_31")
    assert {_create(memory_container, principal) for _ in range(20)} == {"alpha_31"}
    voice.change_tenant_settings(accounts, principal, voice_engine_default="beta_think_fast")
    assert {_create(memory_container, principal) for _ in range(20)} == {"beta_think_fast"}


def test_the_tenant_default_alone_does_not_leave_the_experiment(memory_container):
    principal = _principal(memory_container)
    accounts = memory_container.accounts
    voice.change_tenant_settings(accounts, principal, voice_engine_default="beta_think_fast")
    voice.change_system_defaults(accounts, principal, voice_ab_weights={"alpha_31": 1})
    assert {_create(memory_container, principal) for _ in range(20)} == {"alpha_31"}


def test_an_engine_on_the_request_wins_over_every_setting(memory_container):
    principal = _principal(memory_container)
    voice.change_tenant_settings(memory_container.accounts, principal, voice_engine_default="beta_think_fast",
                                 voice_ab_disabled=True)
    assert {_create(memory_container, principal, voice_engine="alpha_31") for _ in range(10)} == {"alpha_31"}


def test_weights_from_keeps_engine_order_whatever_the_order_given():
    assert weights_from({"alpha_31": 2, "alpha_25": 1}) == weights_from({"alpha_25": 1, "alpha_31": 2})
