"""``Call.queue``: the pure rules of call creation in the order of ARCHITECTURE.md §7 (outcome
schema, E.164, consent, suppression, call hours), each refusal located at the request's field."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from domain.calls.call import Call
from domain.calls.call_rules import QUEUED
from domain.calls.outcome_schema import OutcomeSchema
from domain.calls.suppression import SuppressionIndex
from domain.errors import (
    ConsentMissingError,
    InvalidE164Error,
    NumberSuppressedError,
    OutcomeSchemaError,
    OutsideCallHoursError,
    RequestRuleError,
)

LONDON = "+442071838750"
NOON_IN_LONDON = datetime(2026, 3, 10, 12, 0, tzinfo=timezone.utc)
MIDNIGHT_IN_LONDON = datetime(2026, 3, 10, 23, 30, tzinfo=timezone.utc)
SCHEMA = {"confirmed": {"type": "boolean"}}


def queue(**overrides: Any) -> Call:
    fields: dict[str, Any] = dict(
        tenant_id="ten_" + "1" * 32, mode="simulated", to=LONDON, objective="Confirm", outcome_schema=SCHEMA,
        consent_type="prior_express", from_number="+15005550006", voice_engine="alpha_25", created_by="key_x",
        max_duration_seconds=600, now=NOON_IN_LONDON,
    )
    fields.update(overrides)
    return Call.queue(**fields)


def suppressed(*numbers: str) -> SuppressionIndex:
    index = SuppressionIndex(tenant_id="ten_" + "1" * 32)
    for number in numbers:
        index.list_number(number, None)
    return index


def refusal(**overrides: Any) -> RequestRuleError:
    with pytest.raises(RequestRuleError) as caught:
        queue(**overrides)
    return caught.value


def test_a_request_that_passes_every_rule_is_a_queued_call_holding_the_compiled_schema():
    call = queue(variables={"name": "Ada"}, voice_engine=lambda call_id: f"engine-for-{call_id}")
    assert call.status == QUEUED
    assert call.direction == "outbound"
    assert call.to == LONDON
    assert call.outcome_schema == OutcomeSchema.compile(SCHEMA)
    assert call.voice_engine == f"engine-for-{call.call_id}"
    assert call.variables == {"name": "Ada"}
    assert call.metadata == {}
    assert [type(event).__name__ for event in call.collect_events()] == ["Queued"]


def test_the_schema_is_checked_first_and_its_problems_are_located_in_outcome_schema():
    error = refusal(outcome_schema={"Bad": {"type": "colour"}}, to="0207", consent_type=None,
                    now=MIDNIGHT_IN_LONDON)
    assert isinstance(error, OutcomeSchemaError)
    assert [(loc, kind) for loc, _msg, kind, _input in error.details] == [
        (["outcome_schema", "Bad"], "field_name_invalid"),
        (["outcome_schema", "Bad", "type"], "enum"),
    ]


def test_e164_comes_before_consent():
    error = refusal(to="0207 183 8750", consent_type=None)
    assert isinstance(error, InvalidE164Error)
    assert error.details == [(["to"], error.message, "invalid_e164", "0207 183 8750")]


def test_consent_comes_before_suppression_and_call_hours():
    error = refusal(consent_type=None, suppressions=suppressed(LONDON), now=MIDNIGHT_IN_LONDON)
    assert isinstance(error, ConsentMissingError)
    assert error.details[0][0] == ["consent_type"]


def test_suppression_comes_before_call_hours():
    error = refusal(suppressions=suppressed(LONDON), now=MIDNIGHT_IN_LONDON)
    assert isinstance(error, NumberSuppressedError)
    assert error.details == [(["to"], "this number is on the suppression list", "suppressed", LONDON)]


def test_outside_call_hours_is_refused_at_to():
    error = refusal(now=MIDNIGHT_IN_LONDON)
    assert isinstance(error, OutsideCallHoursError)
    assert error.details[0][0] == ["to"] and error.details[0][2] == "outside_call_hours"


def test_the_caller_number_is_resolved_only_after_the_domain_rules_pass():
    asked: list[str] = []

    def caller() -> str:
        asked.append("caller")
        return "+15005550006"

    refusal(now=MIDNIGHT_IN_LONDON, from_number=caller)
    assert asked == []
    assert queue(from_number=caller).from_number == "+15005550006"
    assert asked == ["caller"]


def test_a_refusal_is_located_wherever_the_request_sits():
    error = refusal(to="+1")
    assert error.within(["body", "items", 3]) == [(["body", "items", 3, "to"], error.message, "invalid_e164", "+1")]
