"""A call whose outcome cannot be completed keeps what it did collect: it fails with
``extraction_failed`` and ``outcome: null`` (the status rule of SPEC.md), and ``partial_outcome``
holds the fields that were collected, typed per schema, on the record and in ``call.completed``."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from domain.calls.call import Call
from domain.calls.outcome_schema import OutcomeSchema
from domain.webhooks.payload import call_completed
from entrypoints.bootstrap import Container
from tests.support.call_requests import call_body, wait_until_ended
from tests.support.calls import NOW, started_call
from tests.support.setup import Account, new_tenant
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures

SCHEMA = {
    "confirmed": {"type": "boolean"},
    "party_size": {"type": "integer"},
    "callback_at": {"type": "datetime"},
}
FACTS = {"confirmed": True, "callback_at": "2026-12-01T09:30:00-05:00"}  # no party_size: the callee cannot say


@pytest.fixture(scope="module")
def account(client: TestClient[Any], container: Container) -> Account:
    return new_tenant(client, container)


def run(client: TestClient[Any], account: Account, schema: dict[str, Any]) -> dict[str, Any]:
    created = client.post("/v1/calls", headers=account.headers,
                          json=call_body(outcome_schema=schema, simulation={"facts": FACTS}))
    assert created.status_code == 201, created.text
    return wait_until_ended(client, account.headers, created.json()["call_id"])


def test_a_missing_required_field_fails_the_call_and_keeps_what_was_collected(client, account):
    record = run(client, account, SCHEMA)

    assert (record["status"], record["error_code"], record["outcome"]) == ("failed", "extraction_failed", None)
    assert record["partial_outcome"] == {"confirmed": True, "callback_at": "2026-12-01T14:30:00Z"}


def test_the_same_field_marked_optional_completes_the_call_with_it_null(client, account):
    record = run(client, account, {**SCHEMA, "party_size": {"type": "integer", "optional": True}})

    assert record["status"] == "completed"
    assert record["outcome"] == {"confirmed": True, "party_size": None, "callback_at": "2026-12-01T14:30:00Z"}
    assert record["partial_outcome"] is None


def test_the_call_completed_payload_carries_the_partial_outcome_of_a_failed_call():
    call = started_call()
    call.record_partial_outcome({"confirmed": True}, NOW)
    call.fail("extraction_failed", "the outcome did not match the outcome_schema", NOW)

    data = call_completed(call)["data"]

    assert (data["outcome"], data["error_code"], data["partial_outcome"]) == (None, "extraction_failed",
                                                                               {"confirmed": True})


def test_other_failures_carry_a_null_partial_outcome():
    call: Call = started_call()
    call.fail("no_answer", "nobody answered", NOW)

    assert call_completed(call)["data"]["partial_outcome"] is None


@pytest.mark.parametrize("outcome,partial", [
    ({"confirmed": "yes", "party_size": 4, "callback_at": "2026-12-01T09:30:00-05:00"},
     {"party_size": 4, "callback_at": "2026-12-01T14:30:00Z"}),  # "yes" is not a boolean: left out
    ({"confirmed": False, "party_size": None, "extra": 1}, {"confirmed": False}),
    ("not an object", {}),
])
def test_only_fields_valid_on_their_own_are_kept_normalized(outcome, partial):
    assert OutcomeSchema.compile(SCHEMA).partial(outcome) == partial
