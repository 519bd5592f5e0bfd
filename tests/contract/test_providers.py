"""``/v1/providers`` (SPEC.md Providers, Provider credential; issue 5 item 1) against the fake
carrier: the credentials are checked with the carrier through the ``twilio`` SDK, then stored
sealed; the caller number must be one of the account's numbers."""

from __future__ import annotations

import pytest

from tests.fakes.twilio.rest import FakeAccount
from tests.support.call_requests import call_body, only_problem
from tests.support.setup import (
    SELECT_NUMBER,
    VERIFY_CARRIER,
    Account,
    new_tenant,
    scoped_key,
    select_number,
    verify_carrier,
)
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

NUMBERS = [("+14155550100", "Front desk"), ("+14155550101", "Reminders")]


@pytest.fixture
def tenant(client, container) -> Account:
    return new_tenant(client, container)


@pytest.fixture
def twilio_account(fake) -> FakeAccount:
    return fake.add_account(friendly_name="Acme Dental", numbers=NUMBERS)


def test_verified_credentials_answer_the_account_and_its_numbers(client, tenant, twilio_account, fake):
    response = verify_carrier(client, tenant.headers, twilio_account.sid, twilio_account.auth_token)

    assert response.status_code == 200, response.text
    body = response.json()
    assert {k: body[k] for k in ("status", "account_name", "phone_numbers")} == {
        "status": "verified", "account_name": "Acme Dental",
        "phone_numbers": [{"number": "+14155550100", "friendly": "Front desk"},
                          {"number": "+14155550101", "friendly": "Reminders"}]}
    asked = [(r.method, r.path, r.account_sid) for r in fake.received if r.account_sid == twilio_account.sid]
    assert asked == [("GET", f"/2010-04-01/Accounts/{twilio_account.sid}.json", twilio_account.sid),
                     ("GET", f"/2010-04-01/Accounts/{twilio_account.sid}/IncomingPhoneNumbers.json", twilio_account.sid)]


def test_status_shows_not_configured_then_verified_with_the_tokens_last_four(client, tenant, twilio_account):
    """SPEC.md Provider credential: the stored-credential view is {status, last4}."""
    for name in ("twilio", "carrier"):
        before = client.get(f"/v1/providers/{name}", headers=tenant.headers)
        assert (before.status_code, before.json()) == (200, {"status": "not_configured", "last4": None})

    assert verify_carrier(client, tenant.headers, twilio_account.sid, twilio_account.auth_token).status_code == 200

    for name in ("twilio", "carrier"):
        after = client.get(f"/v1/providers/{name}", headers=tenant.headers)
        assert after.json() == {"status": "verified", "last4": twilio_account.auth_token[-4:]}


def test_an_unknown_provider_is_not_found(client, tenant):
    response = client.get("/v1/providers/plivo", headers=tenant.headers)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "provider_not_found"


def test_a_wrong_token_is_refused_with_a_clear_reason_and_nothing_is_stored(client, tenant, twilio_account):
    wrong = "0" * 28 + "beef"
    problem = only_problem(verify_carrier(client, tenant.headers, twilio_account.sid, wrong))

    assert (problem["loc"], problem["type"]) == (["body", "auth_token"], "carrier_auth_failed")
    assert "did not accept" in problem["msg"] and problem["input"] is None  # the token is never echoed
    assert client.get("/v1/providers/twilio", headers=tenant.headers).json()["status"] == "not_configured"


def test_an_unknown_account_is_refused(client, tenant, fake):
    unknown = "AC" + "1" * 32
    problem = only_problem(verify_carrier(client, tenant.headers, unknown, "a" * 32))
    # Twilio answers 401 for an account these credentials cannot sign in to, whether it exists or not.
    assert problem["type"] == "carrier_auth_failed"


def test_a_malformed_account_sid_is_refused_before_the_carrier_is_asked(client, tenant, fake):
    before = len(fake.received)
    problem = only_problem(verify_carrier(client, tenant.headers, "AC../../Calls", "a" * 32))
    assert (problem["loc"], problem["type"]) == (["body", "account_sid"], "invalid_account_sid")
    assert len(fake.received) == before


def test_a_suspended_account_is_refused(client, tenant, fake):
    suspended = fake.add_account(status="suspended", numbers=NUMBERS)
    problem = only_problem(verify_carrier(client, tenant.headers, suspended.sid, suspended.auth_token))
    assert (problem["loc"], problem["type"]) == (["body", "account_sid"], "carrier_account_inactive")


def test_an_unreachable_carrier_answers_502_and_stores_nothing(client, tenant, twilio_account, fake):
    port = fake.port
    fake.stop()
    try:
        response = verify_carrier(client, tenant.headers, twilio_account.sid, twilio_account.auth_token)
    finally:
        fake.start(port)
    assert response.status_code == 502, response.text
    assert response.json()["error"]["code"] == "carrier_unreachable"
    assert twilio_account.auth_token not in response.text
    assert client.get("/v1/providers/twilio", headers=tenant.headers).json()["status"] == "not_configured"


def test_the_caller_number_must_be_one_of_the_accounts_numbers(client, tenant, twilio_account):
    refused_first = only_problem(select_number(client, tenant.headers, NUMBERS[0][0]))
    assert refused_first["type"] == "carrier_not_configured"

    assert verify_carrier(client, tenant.headers, twilio_account.sid, twilio_account.auth_token).status_code == 200
    chosen = select_number(client, tenant.headers, "+14155550101")
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["caller_number"] == "+14155550101"

    refused = only_problem(select_number(client, tenant.headers, "+14155550199"))
    assert (refused["loc"], refused["type"], refused["input"]) == (["body", "e164"], "number_not_in_account",
                                                                   "+14155550199")


def test_reverifying_another_account_replaces_the_credentials(client, tenant, twilio_account, fake):
    assert verify_carrier(client, tenant.headers, twilio_account.sid, twilio_account.auth_token).status_code == 200
    select_number(client, tenant.headers, NUMBERS[0][0])
    other = fake.add_account(friendly_name="Other", numbers=[("+14155550555", "Main")])

    body = verify_carrier(client, tenant.headers, other.sid, other.auth_token).json()

    assert (body["account_name"], body["caller_number"]) == ("Other", None)  # the old number is not in it
    assert client.get("/v1/providers/twilio", headers=tenant.headers).json()["last4"] == other.auth_token[-4:]


def test_credentials_are_per_tenant(client, container, tenant, twilio_account):
    assert verify_carrier(client, tenant.headers, twilio_account.sid, twilio_account.auth_token).status_code == 200
    other = new_tenant(client, container)
    assert client.get("/v1/providers/twilio", headers=other.headers).json()["status"] == "not_configured"


def test_provider_routes_need_the_providers_write_scope(client, tenant, twilio_account):
    """SPEC.md Authentication §5; GET /v1/providers/{provider} takes providers:write too (our choice)."""
    reader = scoped_key(client, tenant, ["calls:read", "calls:create", "webhooks:write"])
    writer = scoped_key(client, tenant, ["providers:write"])
    attempts = [
        ("POST", VERIFY_CARRIER, {"account_sid": twilio_account.sid, "auth_token": twilio_account.auth_token}),
        ("POST", SELECT_NUMBER, {"e164": NUMBERS[0][0]}),
        ("GET", "/v1/providers/twilio", None),
    ]
    for method, path, body in attempts:
        refused = client.request(method, path, json=body, headers=reader)
        assert refused.status_code == 403, (path, refused.text)
        assert refused.json()["error"]["code"] == "insufficient_scope"
    for method, path, body in attempts:
        assert client.request(method, path, json=body, headers=writer).status_code == 200, path


def test_live_calls_need_verified_credentials_then_a_caller_number(client, tenant, twilio_account):
    before = only_problem(client.post("/v1/calls", json=call_body(mode="live"), headers=tenant.headers))
    assert (before["loc"], before["type"]) == (["body", "mode"], "carrier_not_configured")

    assert verify_carrier(client, tenant.headers, twilio_account.sid, twilio_account.auth_token).status_code == 200

    unchosen = only_problem(client.post("/v1/calls", json=call_body(mode="live"), headers=tenant.headers))
    assert (unchosen["loc"], unchosen["type"]) == (["body", "from_number"], "caller_number_not_selected")
    batch = only_problem(client.post("/v1/calls/batch", headers=tenant.headers, json={
        "items": [{"to": "+442071838750"}], **{k: v for k, v in call_body(mode="live").items() if k != "to"}}))
    assert batch["type"] == "caller_number_not_selected"
    foreign = only_problem(client.post("/v1/calls", json=call_body(mode="live", from_number="+14155550999"),
                                       headers=tenant.headers))
    assert (foreign["loc"], foreign["type"]) == (["body", "from_number"], "from_number_not_owned")

    explicit = client.post("/v1/calls", json=call_body(mode="live", from_number=NUMBERS[1][0]), headers=tenant.headers)
    assert explicit.status_code == 201, explicit.text
    assert select_number(client, tenant.headers, NUMBERS[0][0]).status_code == 200
    chosen = client.post("/v1/calls", json=call_body(mode="live"), headers=tenant.headers)
    assert chosen.status_code == 201, chosen.text
    shown = client.get(f"/v1/calls/{chosen.json()['call_id']}", headers=tenant.headers).json()
    assert (shown["from"], shown["mode"]) == (NUMBERS[0][0], "live")
    simulated = client.post("/v1/calls", json=call_body(), headers=tenant.headers)
    assert simulated.status_code == 201, simulated.text
