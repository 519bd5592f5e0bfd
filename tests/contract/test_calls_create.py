"""``POST /v1/calls`` and ``GET /v1/calls/{id}`` (SPEC.md Calls, Call create request, Errors,
Limits; ARCHITECTURE.md §7 validation order and §9 ``Idempotency-Key``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import phonenumbers
import pytest
from litestar.testing import TestClient
from phonenumbers import PhoneNumberFormat, PhoneNumberType

from adapters.postgres.database import DatabaseConfig
from domain.calls.engine_choice import VoiceRouting
from entrypoints.bootstrap import Container
from tests.support.call_requests import (
    ABSENT,
    LONDON,
    NEW_YORK,
    batch_body,
    call_body,
    error_code,
    only_problem,
    problems,
    queued_call_ids,
)
from tests.support.setup import Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container, shared_app  # noqa: F401 - module-scoped fixtures

CALL_ID = re.compile(r"^cll_[0-9a-f]{32}$")
DECIMAL = re.compile(r"^-?[0-9]+\.[0-9]{4}$")
E164 = re.compile(r"^\+[1-9][0-9]{1,14}$")


@pytest.fixture(scope="module")
def account(client: TestClient[Any], container: Container) -> Account:
    return new_tenant(client, container)


@pytest.fixture
def isolated(pg_server: DatabaseConfig, tmp_path: Path) -> Iterator[tuple[TestClient[Any], Container]]:
    """An app with its own clock, for tests that move time."""
    with shared_app(pg_server, tmp_path / "var") as built:
        yield built


def create(client: TestClient[Any], account: Account, body: dict[str, Any], **headers: str) -> Any:
    return client.post("/v1/calls", json=body, headers={**account.headers, **headers})


# --- creation and the call record ------------------------------------------------------------


def test_create_answers_201_with_a_queued_call_id(client, account):
    response = create(client, account, call_body())

    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"call_id", "status"}  # SPEC.md Call create request: {call_id, status}
    assert CALL_ID.match(body["call_id"])
    assert body["status"] == "queued"


def test_the_call_record_has_every_field_of_the_spec_and_echoes_the_request(client, account):
    metadata = {"crm_id": 7, "tags": ["vip"], "note": "façade"}
    call_id = create(client, account, call_body(metadata=metadata)).json()["call_id"]

    response = client.get(f"/v1/calls/{call_id}", headers=account.headers)

    assert response.status_code == 200, response.text
    record = response.json()
    spec_fields = {"call_id", "status", "to", "from", "objective", "outcome", "transcript", "confidence",
                   "duration_seconds", "cost_voice", "cost_extraction", "cost_total", "error_code",
                   "recording_url", "created_at"}
    assert spec_fields <= set(record)
    assert record["call_id"] == call_id
    assert record["status"] in ("queued", "in_progress", "completed")
    assert record["to"] == LONDON
    assert E164.match(record["from"])
    assert record["objective"] == "Confirm the appointment"
    assert record["created_at"] == "2026-11-02T12:00:00Z"
    for money in ("cost_voice", "cost_extraction", "cost_total"):
        assert isinstance(record[money], str) and DECIMAL.match(record[money]), (money, record[money])
    assert record["metadata"] == metadata
    assert record["mode"] == "simulated"
    # No engine named: A/B routing by the call id, built-in weights alpha_25 1 : alpha_31 1 (decisions.md 27)
    assert record["voice_engine"] == VoiceRouting().engine_for(call_id)
    assert record["direction"] == "outbound"
    assert record["language"] == "en-US"


def test_alpha_31_is_kept_as_the_voice_engine(client, account):
    call_id = create(client, account, call_body(voice_engine="alpha_31", language="en-GB")).json()["call_id"]

    record = client.get(f"/v1/calls/{call_id}", headers=account.headers).json()

    assert record["voice_engine"] == "alpha_31"
    assert record["language"] == "en-GB"


# --- validation: each rule answers 422 with a stable type and the field's loc ---------------


@pytest.mark.parametrize("to", [
    "++442071838750",
    "+44 2071838750",
    " +442071838750",
    "+442071838750\n",
    "+\uff14\uff142071838750",  # full-width digits
    "+\u0664\u0664\u0662\u0660\u0667\u0661\u0668\u0663\u0668\u0667\u0665\u0660",  # Arabic-Indic digits
    "442071838750",
    "+0442071838750",
    "+44-20-7183-8750",
    "+4420718387501234",  # 16 digits
    "+4420",  # too short for the country
    "+447700900123",  # a drama number: the right shape, but not a valid UK number
    "+9991234567",  # no such country code
])
def test_a_malformed_destination_is_invalid_e164(client, account, to):
    problem = only_problem(create(client, account, call_body(to=to)))

    assert problem["type"] == "invalid_e164"
    assert problem["loc"] == ["body", "to"]
    assert problem["input"] == to


@pytest.mark.parametrize(("to", "kind"), [
    ("+1911", "emergency_number"),
    ("+44999", "emergency_number"),
    ("+44112", "emergency_number"),
    ("+1411", "n11_number"),
    ("+1611", "n11_number"),
])
def test_emergency_and_n11_numbers_are_never_called(client, account, to, kind):
    problem = only_problem(create(client, account, call_body(to=to, consent_type="emergency")))

    assert (problem["type"], problem["loc"]) == (kind, ["body", "to"])


@pytest.fixture(scope="module")
def uk_premium() -> str:
    example = phonenumbers.example_number_for_type("GB", PhoneNumberType.PREMIUM_RATE)
    number = phonenumbers.format_number(example, PhoneNumberFormat.E164)
    assert number.startswith("+449")
    return number


def test_a_uk_09_premium_rate_number_is_refused(client, account, uk_premium):
    problem = only_problem(create(client, account, call_body(to=uk_premium)))

    assert (problem["type"], problem["loc"], problem["input"]) == ("premium_number", ["body", "to"], uk_premium)


@pytest.mark.parametrize("consent", [ABSENT, None, "", "   "])
def test_a_call_without_consent_is_refused(client, account, consent):
    problem = only_problem(create(client, account, call_body(consent_type=consent)))

    assert (problem["type"], problem["loc"]) == ("consent_missing", ["body", "consent_type"])


@pytest.mark.parametrize("consent", ["verbal", "PRIOR_EXPRESS", "prior express"])
def test_a_consent_type_outside_the_spec_enum_is_refused(client, account, consent):
    problem = only_problem(create(client, account, call_body(consent_type=consent)))

    assert (problem["type"], problem["loc"], problem["input"]) == ("invalid_consent_type", ["body", "consent_type"], consent)


def test_a_suppressed_number_is_refused(client, account):
    suppressed = "+442079460002"
    added = client.post("/v1/suppressions", json={"e164": suppressed, "reason": "asked not to be called"},
                        headers=account.headers)
    assert added.status_code == 201, added.text

    problem = only_problem(create(client, account, call_body(to=suppressed)))

    assert (problem["type"], problem["loc"], problem["input"]) == ("suppressed", ["body", "to"], suppressed)


def test_a_suppression_applies_to_the_next_create_and_its_removal_too(client, container):
    tenant = new_tenant(client, container)
    number = "+442079460004"
    assert create(client, tenant, call_body(to=number)).status_code == 201  # this process now remembers the list

    assert client.post("/v1/suppressions", json={"e164": number}, headers=tenant.headers).status_code == 201
    refused = create(client, tenant, call_body(to=number))
    assert client.delete(f"/v1/suppressions/{number}", headers=tenant.headers).status_code in (200, 204)
    allowed = create(client, tenant, call_body(to=number))

    assert only_problem(refused)["type"] == "suppressed"
    assert allowed.status_code == 201, allowed.text


def test_a_suppression_is_per_tenant(client, container, account):
    number = "+442079460003"
    assert client.post("/v1/suppressions", json={"e164": number}, headers=account.headers).status_code == 201
    other = new_tenant(client, container)

    assert create(client, other, call_body(to=number)).status_code == 201


def test_a_number_outside_call_hours_is_refused(client, account):
    # 12:00 UTC is 07:00 in New York: before the 08:00-21:00 window in the callee's local time.
    problem = only_problem(create(client, account, call_body(to=NEW_YORK)))

    assert (problem["type"], problem["loc"], problem["input"]) == ("outside_call_hours", ["body", "to"], NEW_YORK)


def test_emergency_consent_skips_call_hours_only(client, account):
    response = create(client, account, call_body(to=NEW_YORK, consent_type="emergency"))

    assert response.status_code == 201, response.text


def test_a_caller_number_the_tenant_does_not_own_is_refused(client, account):
    problem = only_problem(create(client, account, call_body(from_number="+442079460004")))

    assert (problem["type"], problem["loc"]) == ("from_number_not_owned", ["body", "from_number"])


@pytest.mark.parametrize("mode", [ABSENT, "live"])
def test_a_live_call_needs_carrier_credentials(client, account, mode):
    # mode defaults to live; no carrier credentials are verified for this tenant.
    problem = only_problem(create(client, account, call_body(mode=mode)))

    assert (problem["type"], problem["loc"]) == ("carrier_not_configured", ["body", "mode"])


@pytest.mark.parametrize("engine", ["beta_think_fast", "alpha_99", ""])
def test_a_voice_engine_outside_alpha_25_and_alpha_31_is_refused_on_a_call(client, account, engine):
    # SPEC.md: beta_think_fast is accepted at number and tenant level only.
    problem = only_problem(create(client, account, call_body(voice_engine=engine)))

    assert problem["loc"] == ["body", "voice_engine"]
    assert problem["type"] == "literal_error"
    assert problem["input"] == engine


@pytest.mark.parametrize("language", ["english", "en_US", "", "e", "en-", "en-US-" + "x" * 40])
def test_a_language_that_is_not_a_bcp47_tag_is_refused(client, account, language):
    problem = only_problem(create(client, account, call_body(language=language)))

    assert problem["loc"] == ["body", "language"]
    assert problem["type"] in ("string_pattern_mismatch", "string_too_long")


def test_an_objective_with_a_nul_character_is_refused(client, account):
    problem = only_problem(create(client, account, call_body(objective="Confirm\x00the appointment")))

    assert (problem["loc"], problem["type"]) == (["body", "objective"], "value_error")


@pytest.mark.parametrize("surrogate", [b"\\ud800", b"\\udfff", b"\xed\xa0\x80"])
def test_an_objective_with_a_lone_surrogate_is_refused(client, account, surrogate):
    # A lone surrogate is not text: whether escaped or as raw bytes, the body is not valid JSON text.
    raw = (b'{"to": "%s", "objective": "Confirm ' % LONDON.encode() + surrogate
           + b' it", "outcome_schema": {"a": {"type": "string"}}, "consent_type": "prior_express", "mode": "simulated"}')

    response = client.post("/v1/calls", content=raw, headers={**account.headers, "Content-Type": "application/json"})

    problem = only_problem(response)
    assert (problem["loc"], problem["type"]) == (["body"], "json_invalid")


@pytest.mark.parametrize("schema", [{}, []])
def test_an_outcome_schema_needs_at_least_one_field(client, account, schema):
    found = problems(create(client, account, call_body(outcome_schema=schema)))

    assert found[0]["loc"][:2] == ["body", "outcome_schema"]


def test_every_outcome_schema_problem_is_listed(client, account):
    schema = {
        "amount": {"type": "money"},
        "choice": {"type": "enum"},
        "empty_choice": {"type": "enum", "values": []},
        "Bad-Name": {"type": "string"},
        "fine": {"type": "string", "colour": "red"},
    }

    found = problems(create(client, account, call_body(outcome_schema=schema)))

    by_loc = {tuple(p["loc"]): p["type"] for p in found}
    assert by_loc == {
        ("body", "outcome_schema", "amount", "type"): "enum",
        ("body", "outcome_schema", "choice", "values"): "missing",
        ("body", "outcome_schema", "empty_choice", "values"): "too_short",
        ("body", "outcome_schema", "Bad-Name"): "field_name_invalid",
        ("body", "outcome_schema", "fine", "colour"): "extra_forbidden",
    }


def test_an_outcome_schema_of_more_than_50_fields_is_refused(client, account):
    schema = {f"field_{i}": {"type": "string"} for i in range(51)}

    found = problems(create(client, account, call_body(outcome_schema=schema)))

    assert [(p["loc"], p["type"]) for p in found] == [(["body", "outcome_schema"], "too_long")]


def test_an_outcome_schema_of_exactly_50_fields_is_accepted(client, account):
    schema = {f"field_{i}": {"type": "string", "optional": True} for i in range(50)}

    assert create(client, account, call_body(outcome_schema=schema)).status_code == 201


def test_unknown_body_fields_are_refused(client, account):
    problem = only_problem(create(client, account, call_body(callback_url="https://example.com")))

    assert (problem["loc"], problem["type"]) == (["body", "callback_url"], "extra_forbidden")


# --- the order of the checks (ARCHITECTURE.md §7) -------------------------------------------


def test_a_bad_number_is_reported_before_missing_consent(client, account):
    problem = only_problem(create(client, account, call_body(to="+44 20", consent_type=ABSENT)))

    assert problem["type"] == "invalid_e164"


def test_an_outcome_schema_problem_is_reported_before_a_bad_number(client, account):
    found = problems(create(client, account, call_body(to="nope", outcome_schema={"a": {"type": "money"}})))

    assert [p["type"] for p in found] == ["enum"]


def test_missing_consent_is_reported_before_suppression(client, account):
    number = "+442079460010"
    assert client.post("/v1/suppressions", json={"e164": number}, headers=account.headers).status_code == 201

    problem = only_problem(create(client, account, call_body(to=number, consent_type=ABSENT)))

    assert problem["type"] == "consent_missing"


def test_suppression_is_reported_before_call_hours(client, account):
    number = "+12125550100"  # New York: also outside call hours at 07:00 local
    assert client.post("/v1/suppressions", json={"e164": number}, headers=account.headers).status_code == 201

    problem = only_problem(create(client, account, call_body(to=number)))

    assert problem["type"] == "suppressed"


def test_call_hours_are_reported_before_the_caller_number_and_the_carrier(client, account):
    problem = only_problem(create(client, account, call_body(to=NEW_YORK, from_number="+442079460004", mode="live")))

    assert problem["type"] == "outside_call_hours"


def test_the_caller_number_is_reported_before_the_carrier(client, account):
    problem = only_problem(create(client, account, call_body(from_number="+442079460004", mode="live")))

    assert problem["type"] == "from_number_not_owned"


# --- scopes and tenancy ---------------------------------------------------------------------


def test_a_key_without_calls_create_cannot_create_a_call(client, account):
    reader = scoped_key(client, account, ["calls:read"])

    response = client.post("/v1/calls", json=call_body(), headers=reader)

    assert response.status_code == 403, response.text
    assert error_code(response) == "insufficient_scope"


def test_a_key_without_calls_read_cannot_read_a_call(client, account):
    creator = scoped_key(client, account, ["calls:create"])
    created = client.post("/v1/calls", json=call_body(), headers=creator)
    assert created.status_code == 201, created.text

    response = client.get(f"/v1/calls/{created.json()['call_id']}", headers=creator)

    assert response.status_code == 403, response.text


def test_unknown_and_other_tenants_call_ids_give_the_same_404(client, container, account):
    other = new_tenant(client, container)
    theirs = create(client, other, call_body()).json()["call_id"]
    unknown = "cll_" + "0" * 32

    their_answer = client.get(f"/v1/calls/{theirs}", headers=account.headers)
    unknown_answer = client.get(f"/v1/calls/{unknown}", headers=account.headers)

    assert their_answer.status_code == unknown_answer.status_code == 404
    assert error_code(their_answer) == error_code(unknown_answer) == "call_not_found"
    # The bodies differ only by the id they name: nothing tells the caller the call exists.
    assert their_answer.text.replace(theirs, "ID") == unknown_answer.text.replace(unknown, "ID")
    assert client.get(f"/v1/calls/{theirs}", headers=other.headers).status_code == 200


def test_a_malformed_call_id_is_a_path_validation_error(client, account):
    problem = only_problem(client.get("/v1/calls/not-a-call", headers=account.headers))

    assert problem["loc"] == ["path", "call_id"]


# --- Idempotency-Key (SPEC.md Limits; ARCHITECTURE.md §9) -----------------------------------


def test_the_same_key_and_body_replays_the_original_call(client, container):
    tenant = new_tenant(client, container)
    body = call_body(metadata={"a": 1, "b": 2})
    reordered = dict(reversed(list({**body, "metadata": {"b": 2, "a": 1}}.items())))

    first = create(client, tenant, body, **{"Idempotency-Key": "order-42:attempt.1_x"})
    again = create(client, tenant, reordered, **{"Idempotency-Key": "order-42:attempt.1_x"})

    assert first.status_code == again.status_code == 201
    assert "idempotent-replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert queued_call_ids(container, tenant.tenant_id) == [first.json()["call_id"]]


def test_the_same_key_with_another_body_is_a_409(client, container):
    tenant = new_tenant(client, container)
    first = create(client, tenant, call_body(), **{"Idempotency-Key": "k-1"})

    reused = create(client, tenant, call_body(objective="Something else"), **{"Idempotency-Key": "k-1"})

    assert first.status_code == 201
    assert reused.status_code == 409, reused.text
    assert error_code(reused) == "idempotency_key_reused"
    assert queued_call_ids(container, tenant.tenant_id) == [first.json()["call_id"]]


@pytest.mark.parametrize("key", ["", "x" * 256, "a b", "clé", "tab\there", "slash/no"])
def test_an_idempotency_key_outside_the_spec_syntax_is_refused(client, account, key):
    headers = {**account.headers, "Idempotency-Key": key.encode("utf-8")}

    problem = only_problem(client.post("/v1/calls", json=call_body(), headers=headers))

    assert problem["loc"] == ["header", "Idempotency-Key"]


def test_a_255_character_key_of_every_allowed_kind_is_accepted(client, account):
    key = ("AZaz09_.:-" * 26)[:255]

    assert create(client, account, call_body(), **{"Idempotency-Key": key}).status_code == 201


def test_a_refused_request_is_not_remembered_under_its_key(client, container):
    tenant = new_tenant(client, container)
    refused = create(client, tenant, call_body(to="+44 20"), **{"Idempotency-Key": "retry-me"})

    fixed = create(client, tenant, call_body(), **{"Idempotency-Key": "retry-me"})
    replayed = create(client, tenant, call_body(), **{"Idempotency-Key": "retry-me"})

    assert refused.status_code == 422
    assert fixed.status_code == 201 and "idempotent-replayed" not in fixed.headers
    assert replayed.json() == fixed.json() and replayed.headers["Idempotent-Replayed"] == "true"


def test_keys_are_per_tenant(client, container):
    first, second = new_tenant(client, container), new_tenant(client, container)

    a = create(client, first, call_body(), **{"Idempotency-Key": "shared-key"})
    b = create(client, second, call_body(), **{"Idempotency-Key": "shared-key"})

    assert a.status_code == b.status_code == 201
    assert "idempotent-replayed" not in b.headers
    assert a.json()["call_id"] != b.json()["call_id"]


def test_a_key_starts_a_new_call_after_24_hours(isolated):
    client, container = isolated
    tenant = new_tenant(client, container)
    first = create(client, tenant, call_body(), **{"Idempotency-Key": "daily"})

    container.clock.advance(timedelta(hours=23, minutes=59))
    within = create(client, tenant, call_body(), **{"Idempotency-Key": "daily"})
    container.clock.advance(timedelta(minutes=1))
    after = create(client, tenant, call_body(), **{"Idempotency-Key": "daily"})
    after_again = create(client, tenant, call_body(), **{"Idempotency-Key": "daily"})

    assert within.json() == first.json() and within.headers["Idempotent-Replayed"] == "true"
    assert after.status_code == 201, after.text
    assert "idempotent-replayed" not in after.headers
    assert after.json()["call_id"] != first.json()["call_id"]
    assert after_again.json() == after.json()  # the new call is now the one the key replays
    assert sorted(queued_call_ids(container, tenant.tenant_id)) == sorted([first.json()["call_id"], after.json()["call_id"]])


def test_a_key_held_by_another_endpoint_is_free_again_after_24_hours(isolated):
    """SPEC.md Limits: a key is unique per tenant *in the 24 h window*: the batch refuses a key a
    single call used (409 as a reuse with another body) until the window has passed, then the key
    is the batch's, and a single call with it is the one refused."""
    client, container = isolated
    tenant = new_tenant(client, container)
    batch = batch_body([{"to": LONDON}])
    first = create(client, tenant, call_body(), **{"Idempotency-Key": "moves"})

    container.clock.advance(timedelta(hours=23, minutes=59))
    within = client.post("/v1/calls/batch", json=batch, headers={**tenant.headers, "Idempotency-Key": "moves"})
    container.clock.advance(timedelta(minutes=1))
    after = client.post("/v1/calls/batch", json=batch, headers={**tenant.headers, "Idempotency-Key": "moves"})
    single = create(client, tenant, call_body(), **{"Idempotency-Key": "moves"})

    assert first.status_code == 201
    assert (within.status_code, error_code(within)) == (409, "idempotency_key_reused")
    assert after.status_code == 207 and "idempotent-replayed" not in after.headers, after.text
    assert (single.status_code, error_code(single)) == (409, "idempotency_key_reused")


def test_a_retry_is_replayed_even_when_the_rules_would_now_refuse_the_request(isolated):
    """A retry with its key gets the original answer, not a fresh validation: by then the callee's
    call hours may have ended (here: London at 22:00)."""
    client, container = isolated
    tenant = new_tenant(client, container)
    first = create(client, tenant, call_body(), **{"Idempotency-Key": "late-retry"})

    container.clock.advance(timedelta(hours=10))
    retried = create(client, tenant, call_body(), **{"Idempotency-Key": "late-retry"})
    fresh = create(client, tenant, call_body(), **{"Idempotency-Key": "another-key"})

    assert first.status_code == retried.status_code == 201
    assert retried.json() == first.json() and retried.headers["Idempotent-Replayed"] == "true"
    assert only_problem(fresh)["type"] == "outside_call_hours"


def test_fifty_concurrent_identical_requests_create_exactly_one_call(client, container):
    tenant = new_tenant(client, container)
    headers = {**tenant.headers, "Idempotency-Key": "burst-1"}
    body = call_body()

    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(lambda _: client.post("/v1/calls", json=body, headers=headers), range(50)))

    created = [a for a in answers if a.status_code == 201]
    in_flight = [a for a in answers if a.status_code == 409]
    assert len(created) + len(in_flight) == 50, [a.text for a in answers]
    assert all(a.headers.get("Retry-After") for a in in_flight)  # ARCHITECTURE.md §9: still in flight
    assert len({a.json()["call_id"] for a in created}) == 1
    assert sum(1 for a in created if "idempotent-replayed" not in a.headers) == 1
    call_ids = queued_call_ids(container, tenant.tenant_id)
    assert call_ids == [created[0].json()["call_id"]]
    assert client.get(f"/v1/calls/{call_ids[0]}", headers=tenant.headers).status_code == 200
