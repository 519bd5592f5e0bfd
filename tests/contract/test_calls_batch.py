"""``POST /v1/calls/batch`` (SPEC.md Calls › Batch request and response, Errors › 207, Limits):
every item is validated, the accepted ones become queued calls saved together."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from application.calling import batch as batch_use_case
from domain.calls.idempotency import IdempotencyRecord
from entrypoints.bootstrap import Container
from tests.support.call_requests import (
    ABSENT,
    LONDON,
    LONDON_2,
    LONDON_3,
    NEW_YORK,
    SCHEMA,
    batch_body,
    error_code,
    only_problem,
    problems,
    queued_call_ids,
    queued_notification_ids,
)
from tests.support.setup import Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures


@pytest.fixture(scope="module")
def account(client: TestClient[Any], container: Container) -> Account:
    return new_tenant(client, container)


def post_batch(client: TestClient[Any], account: Account, body: dict[str, Any], **headers: str) -> Any:
    return client.post("/v1/calls/batch", json=body, headers={**account.headers, **headers})


def test_a_batch_answers_207_with_a_result_per_item_in_order(client, account):
    response = post_batch(client, account, batch_body([{"to": LONDON}, {"to": LONDON_2}]))

    assert response.status_code == 207, response.text
    body = response.json()
    assert set(body) == {"accepted", "rejected", "items"}
    assert (body["accepted"], body["rejected"]) == (2, 0)
    assert [item["to"] for item in body["items"]] == [LONDON, LONDON_2]
    for item in body["items"]:
        assert set(item) == {"to", "call_id", "status", "error"}
        assert item["call_id"].startswith("cll_") and item["status"] == "queued" and item["error"] is None


def test_each_item_is_rejected_with_its_own_reason(client, account):
    suppressed = "+442079460020"
    assert client.post("/v1/suppressions", json={"e164": suppressed}, headers=account.headers).status_code == 201
    items = [
        {"to": LONDON},
        {"to": "+44 20 7183 8750"},
        {"to": suppressed},
        {"to": NEW_YORK},
        {"to": LONDON},
        {"to": "+1911"},
        {"to": "+44999"},
        {"to": "+1411"},
        {"to": LONDON_2},
    ]

    body = post_batch(client, account, batch_body(items)).json()

    reasons = [item["error"]["code"] if item["error"] else None for item in body["items"]]
    assert reasons == [None, "invalid_e164", "suppressed", "outside_call_hours", "duplicate_in_batch",
                       "emergency_number", "emergency_number", "n11_number", None]
    assert (body["accepted"], body["rejected"]) == (2, 7)
    for item, sent in zip(body["items"], items, strict=True):
        assert item["to"] == sent["to"]
        if item["error"] is not None:
            assert item["call_id"] is None and item["status"] == "rejected"
            assert isinstance(item["error"]["message"], str) and item["error"]["message"]


def test_accepted_items_are_queued_calls_that_exist(client, container):
    tenant = new_tenant(client, container)
    body = post_batch(client, tenant, batch_body([{"to": LONDON}, {"to": "+4420"}, {"to": LONDON_2}])).json()

    accepted = [item for item in body["items"] if item["call_id"]]

    assert len(accepted) == body["accepted"] == 2
    assert sorted(queued_call_ids(container, tenant.tenant_id)) == sorted(item["call_id"] for item in accepted)
    for item in accepted:
        record = client.get(f"/v1/calls/{item['call_id']}", headers=tenant.headers)
        assert record.status_code == 200
        assert record.json()["to"] == item["to"]
        assert record.json()["objective"] == "Confirm the appointment"


def test_per_item_variables_and_metadata_are_kept_on_each_call(client, account):
    items = [
        {"to": LONDON, "variables": {"first_name": "Ada"}, "metadata": {"row": 1}},
        {"to": LONDON_2, "variables": {"first_name": "Grace"}, "metadata": {"row": 2, "campaign": "override"}},
        {"to": LONDON_3, "consent_record_id": "consent-3"},
    ]
    body = batch_body(items, metadata={"campaign": "november"}, variables={"clinic": "North"})

    result = post_batch(client, account, body).json()

    records = [client.get(f"/v1/calls/{item['call_id']}", headers=account.headers).json() for item in result["items"]]
    assert [r["variables"] for r in records] == [
        {"clinic": "North", "first_name": "Ada"},
        {"clinic": "North", "first_name": "Grace"},
        {"clinic": "North"},
    ]
    assert [r["metadata"] for r in records] == [
        {"campaign": "november", "row": 1},
        {"campaign": "override", "row": 2},
        {"campaign": "november"},
    ]


def test_a_batch_where_every_item_is_rejected_is_still_a_207(client, account):
    body = post_batch(client, account, batch_body([{"to": NEW_YORK}, {"to": "nope"}])).json()

    assert (body["accepted"], body["rejected"]) == (0, 2)


def test_200_items_are_allowed(client, account):
    # New York numbers at 07:00 local: every item is refused for call hours, so no call is run.
    items = [{"to": f"+1212555{i:04d}"} for i in range(200)]

    response = post_batch(client, account, batch_body(items))

    assert response.status_code == 207, response.text
    assert (response.json()["accepted"], response.json()["rejected"]) == (0, 200)
    assert {item["error"]["code"] for item in response.json()["items"]} == {"outside_call_hours"}


def test_more_than_200_items_is_refused_as_a_whole(client, container):
    tenant = new_tenant(client, container)
    items = [{"to": LONDON}] + [{"to": f"+1212555{i:04d}"} for i in range(200)]

    problem = only_problem(post_batch(client, tenant, batch_body(items)))

    assert problem["loc"] == ["body", "items"]
    assert problem["type"] == "too_long"
    assert queued_call_ids(container, tenant.tenant_id) == []


def test_an_empty_batch_is_refused(client, account):
    problem = only_problem(post_batch(client, account, batch_body([])))

    assert problem["loc"] == ["body", "items"]


@pytest.mark.parametrize(("overrides", "loc", "kind"), [
    ({"consent_type": ABSENT}, ["body", "consent_type"], "consent_missing"),
    ({"consent_type": "verbal"}, ["body", "consent_type"], "invalid_consent_type"),
    ({"outcome_schema": {"amount": {"type": "money"}}}, ["body", "outcome_schema", "amount", "type"], "enum"),
    ({"mode": ABSENT}, ["body", "mode"], "carrier_not_configured"),
    ({"from_number": "+442079460004"}, ["body", "from_number"], "from_number_not_owned"),
    ({"voice_engine": "beta_think_fast"}, ["body", "voice_engine"], "literal_error"),
])
def test_a_problem_with_a_shared_field_refuses_the_whole_batch(client, container, overrides, loc, kind):
    tenant = new_tenant(client, container)

    problem = only_problem(post_batch(client, tenant, batch_body([{"to": LONDON}, {"to": LONDON_2}], **overrides)))

    assert (problem["loc"], problem["type"]) == (loc, kind)
    assert queued_call_ids(container, tenant.tenant_id) == []


def test_a_malformed_item_field_refuses_the_whole_batch_with_its_index(client, account):
    found = problems(post_batch(client, account, batch_body([{"to": LONDON}, {"to": LONDON_2, "colour": "red"}])))

    assert [p["loc"] for p in found] == [["body", "items", 1, "colour"]]


def test_a_key_without_calls_create_cannot_post_a_batch(client, account):
    reader = scoped_key(client, account, ["calls:read"])

    response = client.post("/v1/calls/batch", json=batch_body([{"to": LONDON}]), headers=reader)

    assert response.status_code == 403
    assert error_code(response) == "insufficient_scope"


# --- Idempotency-Key and the atomic save ----------------------------------------------------


def test_a_replayed_batch_returns_the_identical_207_and_creates_nothing_new(client, container):
    tenant = new_tenant(client, container)
    body = batch_body([{"to": LONDON}, {"to": "+4420"}, {"to": LONDON_2}])

    first = post_batch(client, tenant, body, **{"Idempotency-Key": "batch-1"})
    calls_after_first = sorted(queued_call_ids(container, tenant.tenant_id))
    again = post_batch(client, tenant, body, **{"Idempotency-Key": "batch-1"})

    assert first.status_code == again.status_code == 207
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert sorted(queued_call_ids(container, tenant.tenant_id)) == calls_after_first
    assert len(calls_after_first) == 2


def test_a_batch_key_reused_with_another_body_is_a_409(client, container):
    tenant = new_tenant(client, container)
    post_batch(client, tenant, batch_body([{"to": LONDON}]), **{"Idempotency-Key": "batch-2"})

    reused = post_batch(client, tenant, batch_body([{"to": LONDON_2}]), **{"Idempotency-Key": "batch-2"})

    assert reused.status_code == 409
    assert error_code(reused) == "idempotency_key_reused"
    assert len(queued_call_ids(container, tenant.tenant_id)) == 1


def test_a_key_is_unique_per_tenant_whichever_endpoint_used_it(client, container):
    """SPEC.md Limits: an Idempotency-Key is "unique per tenant in the window", and Errors: reusing
    it with a different body is a 409. The same key on the other creating endpoint is such a
    reuse (409 ``idempotency_key_reused``, nothing created), while a retry on the endpoint that
    used it still answers the stored answer, and another tenant's key of the same name is its own."""
    tenant, other = new_tenant(client, container), new_tenant(client, container)
    single_body = {"to": LONDON, "objective": "Confirm the appointment", "outcome_schema": SCHEMA,
                   "consent_type": "prior_express", "mode": "simulated"}
    single = client.post("/v1/calls", headers={**tenant.headers, "Idempotency-Key": "same"}, json=single_body)
    batch = post_batch(client, tenant, batch_body([{"to": LONDON}]), **{"Idempotency-Key": "batch-first"})
    assert single.status_code == 201 and batch.status_code == 207, (single.text, batch.text)
    made = sorted(queued_call_ids(container, tenant.tenant_id))

    on_batch = post_batch(client, tenant, batch_body([{"to": LONDON_2}]), **{"Idempotency-Key": "same"})
    on_single = client.post("/v1/calls", headers={**tenant.headers, "Idempotency-Key": "batch-first"},
                            json=single_body)

    for refused in (on_batch, on_single):
        assert (refused.status_code, error_code(refused)) == (409, "idempotency_key_reused"), refused.text
    assert sorted(queued_call_ids(container, tenant.tenant_id)) == made
    replayed = client.post("/v1/calls", headers={**tenant.headers, "Idempotency-Key": "same"}, json=single_body)
    assert (replayed.status_code, replayed.json()) == (201, single.json())
    assert replayed.headers["Idempotent-Replayed"] == "true"
    again = post_batch(client, tenant, batch_body([{"to": LONDON}]), **{"Idempotency-Key": "batch-first"})
    assert (again.status_code, again.json(), again.headers["Idempotent-Replayed"]) == (207, batch.json(), "true")
    theirs = post_batch(client, other, batch_body([{"to": LONDON_2}]), **{"Idempotency-Key": "same"})
    assert theirs.status_code == 207 and "idempotent-replayed" not in theirs.headers


def test_an_invalid_key_on_a_batch_is_refused(client, account):
    problem = only_problem(post_batch(client, account, batch_body([{"to": LONDON}]), **{"Idempotency-Key": "a b"}))

    assert problem["loc"] == ["header", "Idempotency-Key"]


def test_the_accepted_calls_of_a_batch_are_saved_together(client, container):
    tenant = new_tenant(client, container)
    items = [{"to": f"+4420794600{i:02d}"} for i in range(30, 40)]

    result = post_batch(client, tenant, batch_body(items)).json()

    call_ids = [item["call_id"] for item in result["items"]]
    positions = queued_notification_ids(container, call_ids)
    assert len(positions) == 10
    # One atomic save: the ten Queued events sit side by side in the log, nothing in between.
    assert positions == list(range(positions[0], positions[0] + 10))


def test_a_batch_whose_save_fails_leaves_no_call_behind(client, container, monkeypatch):
    """The save is atomic: when it fails, none of the built calls exists (no partial batch)."""
    tenant = new_tenant(client, container)
    built: list[str] = []
    original = batch_use_case.prepare_batch

    def prepare_then_lose_the_race(calling, principal, shared, items, now):
        result = original(calling, principal, shared, items, now)
        built.extend(call.call_id for call in result.calls)
        # Another request with the same key and another body commits first.
        rival = IdempotencyRecord(tenant_id=principal.tenant_id, endpoint="POST /v1/calls/batch", key="race",
                                  fingerprint="another body", status_code=207, response={}, at=now)
        calling.commit(rival)
        return result

    monkeypatch.setattr(batch_use_case, "prepare_batch", prepare_then_lose_the_race)

    response = post_batch(client, tenant, batch_body([{"to": LONDON}, {"to": LONDON_2}, {"to": LONDON_3}]),
                          **{"Idempotency-Key": "race"})

    assert response.status_code == 409
    assert len(built) == 3
    assert queued_call_ids(container, tenant.tenant_id) == []
    for call_id in built:
        assert client.get(f"/v1/calls/{call_id}", headers=tenant.headers).status_code == 404


def test_an_empty_number_rejects_only_its_own_item(client, account):
    response = post_batch(client, account, batch_body([{"to": ""}, {"to": LONDON}]))

    assert response.status_code == 207, response.text
    first, second = response.json()["items"]
    assert first["error"]["code"] == "invalid_e164" and first["call_id"] is None
    assert second["status"] == "queued"
