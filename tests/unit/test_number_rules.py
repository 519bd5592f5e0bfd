"""``Number``, ``NumberClaim`` and ``TenantNumberIndex`` (SPEC.md Number, Limits: 5 transfer
destinations): defaults, every settings rule, changes as facts, one active holder per E.164, and
replay rebuilding each aggregate exactly."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from eventsourcing.domain import Aggregate
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import NumberConfigurationError, NumberDisconnectedError, NumberTakenError
from domain.numbers import configuration
from domain.numbers.number import BYO, Number, NumberClaim, TenantNumberIndex

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)
OWN = "+14155550100"
LONDON = "+442071838750"


def register(**fields: Any) -> Number:
    return Number.register(tenant_id="ten_1", e164=OWN, fields=fields, by="key_1", at=NOW)


def problems_of(**fields: Any) -> list[tuple[list[str | int], str]]:
    with pytest.raises(NumberConfigurationError) as refused:
        register(**fields)
    return [(loc, kind) for loc, _, kind, _ in refused.value.problems]


def replayed(aggregate: Aggregate) -> Aggregate:
    rebuilt = None
    for event in aggregate.collect_events():
        rebuilt = event.mutate(rebuilt)
    assert rebuilt is not None
    return rebuilt


def test_a_new_number_has_sensible_defaults_and_the_time_zone_of_its_e164():
    number = register()
    assert number.settings() == {
        "objective": configuration.DEFAULT_OBJECTIVE, "greeting": None, "persona": None,
        "outcome_schema": configuration.DEFAULTS["outcome_schema"], "recording_enabled": True, "voice_engine": None,
        "transfer_destinations": [], "transfer_max_attempts": 3, "language": "en-US",
        "timezone": "America/Los_Angeles", "greeting_voice_id": None, "flow_id": None, "hours_json": None,
        "overflow_action": "voicemail", "overflow_message": None, "routes": [], "voicemail_mode": "overflow_only",
        "voicemail_schema": configuration.DEFAULTS["voicemail_schema"], "voicemail_persona": None,
        "sms_enabled": False, "sms_brand_id": None, "sms_templates": [],
    }
    assert number.greeting_audio_fresh  # no greeting: nothing to render
    assert number.active and number.source == BYO and number.number_id == str(number.id)
    assert Number.id_of(number.number_id) == number.id


def test_a_number_of_many_zones_gets_no_default_time_zone():
    number = Number.register(tenant_id="ten_1", e164="+18005550100", fields={}, by="key_1", at=NOW)
    assert number.timezone is None


def test_given_settings_are_normalized():
    number = register(outcome_schema={"booked": {"type": "boolean"}}, voice_engine="beta_think_fast",
                      transfer_destinations=[{"label": " Front desk ", "e164": LONDON}], transfer_max_attempts=5,
                      language="fr-CA", timezone="Europe/Paris", recording_enabled=False, greeting="Hello!")
    assert number.outcome_schema == {"booked": {"type": "boolean", "optional": False}}
    assert number.transfer_destinations == [{"label": "Front desk", "e164": LONDON}]
    assert (number.voice_engine, number.transfer_max_attempts, number.language, number.timezone) == (
        "beta_think_fast", 5, "fr-CA", "Europe/Paris")
    assert number.recording_enabled is False and number.greeting == "Hello!"


def test_at_most_five_transfer_destinations():
    """SPEC.md Limits: transfer destinations per number, 5."""
    six = [{"label": f"Desk {i}", "e164": f"+4420718387{50 + i}"} for i in range(6)]
    assert problems_of(transfer_destinations=six) == [(["transfer_destinations"], "too_long")]
    assert len(register(transfer_destinations=six[:5]).transfer_destinations) == 5


def test_each_destination_needs_a_label_and_a_valid_e164_that_is_not_the_number_itself():
    found = problems_of(transfer_destinations=[
        {"label": "Bad", "e164": "+1415555"},
        {"label": "", "e164": LONDON},
        {"label": "x" * 81, "e164": "+442079460958"},
        {"label": "Emergency", "e164": "+1911"},
        {"label": "Self", "e164": OWN},
    ])
    assert found == [
        (["transfer_destinations", 0, "e164"], "invalid_e164"),
        (["transfer_destinations", 1, "label"], "label"),
        (["transfer_destinations", 2, "label"], "label"),
        (["transfer_destinations", 3, "e164"], "emergency_number"),
        (["transfer_destinations", 4, "e164"], "transfer_to_self"),
    ]
    found = problems_of(transfer_destinations=[{"label": "Desk", "e164": LONDON, "extension": "12"}, LONDON])
    assert found == [(["transfer_destinations", 0, "extension"], "extra_forbidden"),
                     (["transfer_destinations", 1], "dict_type")]


def test_a_destination_may_appear_only_once():
    twice = [{"label": "A", "e164": LONDON}, {"label": "B", "e164": LONDON}]
    assert problems_of(transfer_destinations=twice) == [(["transfer_destinations", 1, "e164"],
                                                         "duplicate_destination")]


def test_every_broken_setting_is_reported_at_once():
    found = problems_of(objective=" ", transfer_max_attempts=6, voice_engine="gamma", language="english please",
                        timezone="Mars/Olympus", outcome_schema={"Bad Name": {"type": "string"}},
                        recording_enabled="yes", colour="blue")
    assert [loc[0] for loc, _ in found] == ["objective", "transfer_max_attempts", "voice_engine", "language",
                                           "timezone", "outcome_schema", "recording_enabled", "colour"]
    assert found[-1] == (["colour"], "extra_forbidden")
    assert found[5][0][:1] == ["outcome_schema"] and len(found[5][0]) == 2


@pytest.mark.parametrize("attempts", [0, 6, True, 2.5])
def test_transfer_attempts_are_a_whole_number_from_one_to_five(attempts):
    assert problems_of(transfer_max_attempts=attempts) == [(["transfer_max_attempts"], "transfer_max_attempts")]


def test_an_update_records_only_what_changed():
    number = register(greeting="Hi")
    assert number.update({"greeting": "Hi", "language": "en-US"}, by="key_1", at=NOW) == {}
    changed = number.update({"greeting": None, "persona": "Calm and brief", "transfer_max_attempts": 2},
                            by="key_1", at=NOW + timedelta(minutes=1))
    assert changed == {"greeting": None, "persona": "Calm and brief", "transfer_max_attempts": 2}
    events = number.collect_events()
    assert [type(e).__name__ for e in events] == ["Registered", "Updated"]
    assert events[1].changes == changed and events[1].tenant_id == "ten_1"
    assert number.updated_at == NOW + timedelta(minutes=1)


def test_null_clears_only_the_optional_settings():
    number = register(voice_engine="alpha_31", timezone="Europe/London")
    number.update({"voice_engine": None, "timezone": None}, by="key_1", at=NOW)
    assert (number.voice_engine, number.timezone) == (None, None)
    with pytest.raises(NumberConfigurationError) as refused:
        number.update({"objective": None, "transfer_destinations": None}, by="key_1", at=NOW)
    assert [loc for loc, *_ in refused.value.problems] == [["objective"], ["transfer_destinations"]]


def test_the_number_itself_cannot_be_changed_by_an_update():
    with pytest.raises(NumberConfigurationError) as refused:
        register().update({"e164": LONDON}, by="key_1", at=NOW)
    assert refused.value.problems[0][:1] == (["e164"],) and refused.value.problems[0][2] == "extra_forbidden"


def test_a_disconnected_number_stays_readable_but_cannot_change():
    number = register()
    assert number.disconnect(by="key_1", at=NOW) is True
    assert number.disconnect(by="key_1", at=NOW) is False
    assert not number.active and number.disconnected_by == "key_1"
    with pytest.raises(NumberDisconnectedError):
        number.update({"greeting": "Hello"}, by="key_1", at=NOW)


def test_replaying_a_numbers_events_rebuilds_it_exactly():
    number = register(transfer_destinations=[{"label": "Desk", "e164": LONDON}])
    number.update({"outcome_schema": {"ok": {"type": "boolean"}}, "persona": "Warm"}, by="key_1", at=NOW)
    number.disconnect(by="key_1", at=NOW)
    assert replayed(number).__dict__ == number.__dict__


def test_settings_missing_from_older_events_read_their_defaults():
    stored = {"objective": "Take a message"}
    assert configuration.complete(stored) == {**configuration.DEFAULTS, "objective": "Take a message"}


# --- NumberClaim: one active holder per E.164, across tenants ------------------------------------


def test_an_e164_has_one_claim_and_one_holder():
    claim = NumberClaim(tenant_id="ten_1", e164=OWN, number_id="n1", at=NOW)
    assert claim.id == NumberClaim.create_id(OWN) != NumberClaim.create_id(LONDON)
    with pytest.raises(NumberTakenError):
        claim.claim(tenant_id="ten_2", number_id="n2", at=NOW)
    assert (claim.tenant_id, claim.number_id) == ("ten_1", "n1")


def test_a_released_claim_can_be_taken_by_another_tenant_and_each_event_names_its_tenant():
    claim = NumberClaim(tenant_id="ten_1", e164=OWN, number_id="n1", at=NOW)
    assert claim.release("n-other", at=NOW) is False  # only the holder releases
    assert claim.release("n1", at=NOW) is True and not claim.held
    claim.claim(tenant_id="ten_2", number_id="n2", at=NOW)
    assert (claim.tenant_id, claim.number_id) == ("ten_2", "n2")
    assert replayed(claim).__dict__ == claim.__dict__


def test_claim_events_carry_the_tenant_they_concern():
    claim = NumberClaim(tenant_id="ten_1", e164=OWN, number_id="n1", at=NOW)
    claim.release("n1", at=NOW)
    claim.claim(tenant_id="ten_2", number_id="n2", at=NOW)
    assert [(type(e).__name__, e.tenant_id) for e in claim.collect_events()] == [
        ("Claimed", "ten_1"), ("Released", "ten_1"), ("Reclaimed", "ten_2")]


# --- TenantNumberIndex: the list and its cursor ----------------------------------------------------


def test_the_index_keeps_active_numbers_in_registration_order_with_stable_positions():
    index = TenantNumberIndex(tenant_id="ten_1")
    for number_id in ("a", "b", "c"):
        index.add(number_id)
    index.add("a")  # no second entry
    index.remove("b")
    assert index.after(0) == [(1, "a"), (3, "c")]
    assert index.after(1) == [(3, "c")]
    index.add("d")
    assert index.after(3) == [(4, "d")]
    assert index.id == TenantNumberIndex.create_id("ten_1")
    assert replayed(index).__dict__ == index.__dict__


# --- properties ------------------------------------------------------------------------------------

_VALUES = {
    "greeting": st.one_of(st.none(), st.text(max_size=20)),
    "persona": st.one_of(st.none(), st.text(max_size=20)),
    "recording_enabled": st.one_of(st.booleans(), st.integers(), st.none()),
    "voice_engine": st.one_of(st.none(), st.sampled_from(["alpha_25", "alpha_31", "beta_think_fast", "gamma"])),
    "transfer_max_attempts": st.one_of(st.integers(-2, 8), st.booleans(), st.text(max_size=2)),
    "language": st.sampled_from(["en-US", "fr", "pt-BR", "english", "", None]),
    "timezone": st.sampled_from(["Europe/London", "America/New_York", "Mars/Olympus", None]),
    "transfer_destinations": st.lists(
        st.fixed_dictionaries({"label": st.text(max_size=90), "e164": st.sampled_from(
            [LONDON, "+442079460958", "+1911", OWN, "+1415", "nope"])}), max_size=7),
    "colour": st.text(max_size=5),
}
_changes = st.dictionaries(st.sampled_from(sorted(_VALUES)), st.none(), max_size=4).flatmap(
    lambda keys: st.fixed_dictionaries({k: _VALUES[k] for k in keys}))


@settings(max_examples=150, deadline=None)
@given(st.lists(_changes, max_size=6))
def test_any_sequence_of_updates_is_refused_cleanly_or_applied_and_replays_exactly(updates):
    number = register()
    for fields in updates:
        before = number.settings()
        try:
            changed = number.update(fields, by="key_1", at=NOW)
        except NumberConfigurationError as refused:
            assert refused.problems and number.settings() == before  # nothing applied
            continue
        assert set(changed) <= set(fields) and number.settings() == {**before, **changed}
    assert replayed(number).__dict__ == number.__dict__


def test_the_greeting_audio_is_fresh_only_for_the_greeting_and_voice_it_was_rendered_from():
    number = register(greeting="Hello", greeting_voice_id="v1")
    assert not number.greeting_audio_fresh

    assert not number.greeting_audio_rendered(greeting="Hi", voice_id="v1", sha256="a" * 64, size=3, at=NOW)
    assert number.greeting_audio_rendered(greeting="Hello", voice_id="v1", sha256="b" * 64, size=3, at=NOW)
    assert number.greeting_audio_fresh
    assert not number.greeting_audio_rendered(greeting="Hello", voice_id="v1", sha256="b" * 64, size=3, at=NOW)
    number.update({"greeting_voice_id": "v2"}, by="key_1", at=NOW)
    assert not number.greeting_audio_fresh
    rebuilt = replayed(number)
    assert not rebuilt.greeting_audio_fresh and rebuilt.greeting_rendered["sha256"] == "b" * 64
