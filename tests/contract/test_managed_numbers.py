"""Managed numbers (SPEC.md "What the service does" 4; issue 14 item 6; docs/numbers.md "Managed
numbers") over HTTP: ``POST /v1/numbers`` buys a number on the service's managed sub-account of the
fake carrier, ``DELETE /v1/numbers/{id}`` releases it there."""

from __future__ import annotations

from dataclasses import replace

import itertools
import time
import uuid
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest
from structlog.testing import capture_logs
from twilio.request_validator import RequestValidator

from application.calling import inbound
from domain import ids
from domain.numbers.use_cases import ALLOWED
from domain.wizard.configs import config_for
from entrypoints.bootstrap.managed import managed_numbering
from entrypoints.settings import Settings
from tests.support.call_requests import call_body, error_code, only_problem, problems
from tests.support.calls import queued_call
from tests.support.setup import Account, carrier_tenant, new_tenant, scoped_key
from tests.support.shared_app import NOWHERE, app, client, container, fake  # noqa: F401 - fixtures

MANAGED_SID, MANAGED_TOKEN = "AC" + "5a" * 16, "managed-token-" + "7" * 18
APP_SETTINGS = {"managed_account_sid": MANAGED_SID, "managed_auth_token": MANAGED_TOKEN}
DENTAL = "Acme Dental, a family dental practice in Austin, Texas: patients call to book checkups and cleanings."
_area_codes = itertools.count(201)  # each test buys in area codes of its own (five numbers on sale in each)


@pytest.fixture(scope="module", autouse=True)
def managed_account(fake):
    return fake.add_account(sid=MANAGED_SID, auth_token=MANAGED_TOKEN, friendly_name="callwright managed")


@pytest.fixture
def tenant(client, container) -> Account:
    return new_tenant(client, container)


@pytest.fixture
def area_code() -> str:
    return str(next(_area_codes))


def buy(client, headers: dict[str, str], area_code: str, use_case: str = "receptionist", **extra: Any) -> Any:
    return client.post("/v1/numbers", json={"area_code": area_code, "use_case": use_case, **extra}, headers=headers)


def bought(client, headers: dict[str, str], area_code: str, use_case: str = "receptionist") -> dict[str, Any]:
    response = buy(client, headers, area_code, use_case)
    assert response.status_code == 201, response.text
    return response.json()


def purchases(fake) -> int:
    return len(fake.requests_to("/IncomingPhoneNumbers.json", "POST"))


def test_a_managed_number_is_bought_in_the_area_code_with_its_traffic_sent_to_the_service(client, tenant, fake,
                                                                                         area_code):
    body = bought(client, tenant.headers, area_code)

    assert (body["source"], body["active"]) == ("managed", True)
    assert body["e164"].startswith(f"+1{area_code}")
    resource = next(r for r in fake.market.purchased.values() if r["phone_number"] == body["e164"])
    assert resource["account_sid"] == MANAGED_SID
    assert resource["voice_url"] == f"{NOWHERE}/webhooks/carrier/inbound"
    assert resource["sms_url"] == f"{NOWHERE}/webhooks/carrier/sms"
    assert body["e164"] not in fake.market.on_sale(area_code)
    assert client.get(f"/v1/numbers/{body['id']}", headers=tenant.headers).json() == body
    assert body["id"] in [n["id"] for n in client.get("/v1/numbers", headers=tenant.headers).json()]


def test_a_managed_number_is_configured_like_any_number(client, tenant, area_code):
    number = bought(client, tenant.headers, area_code, "appointments")

    changed = client.patch(f"/v1/numbers/{number['id']}", json={"greeting": "Acme Dental, how can I help?"},
                           headers=tenant.headers)

    assert changed.status_code == 200, changed.text
    assert (changed.json()["greeting"], changed.json()["source"]) == ("Acme Dental, how can I help?", "managed")


def test_deleting_a_managed_number_releases_it_at_the_carrier_and_disconnects_it(client, tenant, fake, area_code):
    number = bought(client, tenant.headers, area_code)

    deleted = client.delete(f"/v1/numbers/{number['id']}", headers=tenant.headers)

    assert deleted.status_code == 204, deleted.text
    assert number["e164"] in [r["phone_number"] for r in fake.market.released]
    assert number["e164"] in fake.market.on_sale(area_code)
    after = client.get(f"/v1/numbers/{number['id']}", headers=tenant.headers).json()
    assert (after["active"], after["disconnected_at"] is not None) == (False, True)
    again = client.delete(f"/v1/numbers/{number['id']}", headers=tenant.headers)
    assert (again.status_code, error_code(again)) == (404, "number_not_found")


@pytest.mark.parametrize("use_case", ALLOWED)
def test_every_supported_use_case_is_accepted(client, tenant, area_code, use_case):
    assert bought(client, tenant.headers, area_code, use_case)["source"] == "managed"


def test_an_unsupported_use_case_is_refused_with_the_supported_ones(client, tenant, fake, area_code):
    before = purchases(fake)

    problem = only_problem(buy(client, tenant.headers, area_code, "debt_collection"))

    assert (problem["loc"], problem["type"], problem["input"]) == (["body", "use_case"], "use_case_not_supported",
                                                                   "debt_collection")
    assert problem["ctx"] == {"allowed": list(ALLOWED)}
    assert "debt_collection" in problem["msg"] and "receptionist" in problem["msg"]
    assert purchases(fake) == before


def test_an_area_code_with_nothing_on_sale_is_a_422_at_area_code(client, tenant, fake):
    before = purchases(fake)
    problem = only_problem(buy(client, tenant.headers, "999"))
    assert (problem["loc"], problem["type"], problem["input"]) == (["body", "area_code"], "no_number_available", "999")
    assert purchases(fake) == before


@pytest.mark.parametrize("area_code", ["41", "4155", "abc", "015", 415])
def test_an_area_code_is_three_digits(client, tenant, area_code):
    assert [p["loc"] for p in problems(buy(client, tenant.headers, area_code))] == [["body", "area_code"]]


def test_the_body_takes_no_other_field_and_reports_every_problem(client, tenant):
    found = problems(buy(client, tenant.headers, "1", "spam", e164="+14155550100"))
    assert sorted(tuple(p["loc"]) for p in found) == [("body", "area_code"), ("body", "e164"), ("body", "use_case")]


def test_a_carrier_that_cannot_be_reached_is_a_502_and_nothing_is_saved(client, tenant, fake, area_code):
    fake.stop()
    try:
        refused = buy(client, tenant.headers, area_code)
    finally:
        fake.start(fake.port)
    assert (refused.status_code, error_code(refused)) == (502, "upstream_unavailable")
    assert client.get("/v1/numbers", headers=tenant.headers).json() == []


def test_without_a_managed_account_the_server_answers_503_naming_the_settings(client, container, tenant, fake,
                                                                              monkeypatch, area_code):
    services = client.app.state.services
    monkeypatch.setattr(client.app.state, "services", replace(services, numbering=replace(services.numbering, managed=None)))
    before = purchases(fake)

    refused = buy(client, tenant.headers, area_code)

    assert (refused.status_code, error_code(refused)) == (503, "managed_numbers_unavailable")
    message = refused.json()["error"]["message"]
    assert "CALLWRIGHT_MANAGED_ACCOUNT_SID" in message and "CALLWRIGHT_MANAGED_AUTH_TOKEN" in message
    assert "Retry-After" not in refused.headers
    assert purchases(fake) == before


def test_a_managed_account_the_carrier_refuses_is_a_503(client, tenant, managed_account, area_code):
    managed_account.auth_token = "revoked"
    try:
        refused = buy(client, tenant.headers, area_code)
    finally:
        managed_account.auth_token = MANAGED_TOKEN
    assert (refused.status_code, error_code(refused)) == (503, "managed_numbers_unavailable")


def test_a_number_bought_but_not_saved_is_released_again(client, container, tenant, fake, monkeypatch, area_code):
    def failing_commit(*_: Any, **__: Any) -> int:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(container.calling, "commit", failing_commit)
    failed = buy(client, tenant.headers, area_code)
    monkeypatch.undo()

    assert failed.status_code == 500
    bought_then = [r["phone_number"] for r in fake.market.released if r["phone_number"].startswith(f"+1{area_code}")]
    assert len(bought_then) == 1 and bought_then[0] in fake.market.on_sale(area_code)


def test_a_key_another_endpoint_used_buys_nothing(client, tenant, fake, area_code):
    """SPEC.md Limits: an Idempotency-Key is unique per tenant in the window. A key a call used is
    refused on POST /v1/numbers, and one POST /v1/numbers used is refused on the wizard's
    provision and on a call, each a 409 ``idempotency_key_reused`` (as a reuse with another body),
    before anything is bought."""
    call = client.post("/v1/calls", json=call_body(), headers={**tenant.headers, "Idempotency-Key": "k-call"})
    assert call.status_code == 201, call.text
    before = purchases(fake)

    refused = buy(client, {**tenant.headers, "Idempotency-Key": "k-call"}, area_code)

    assert (refused.status_code, error_code(refused)) == (409, "idempotency_key_reused"), refused.text
    assert purchases(fake) == before
    headers = {**tenant.headers, "Idempotency-Key": f"k-number-{area_code}"}
    number = bought(client, headers, area_code)
    wizard = client.post("/v1/wizard/provision", headers=headers, json={
        "business_name": "Acme Dental", "business_description": DENTAL, "area_code": area_code,
        "config": config_for("dental", DENTAL)})
    again = client.post("/v1/calls", json=call_body(), headers=headers)
    for other in (wizard, again):
        assert (other.status_code, error_code(other)) == (409, "idempotency_key_reused"), other.text
    assert purchases(fake) == before + 1
    assert buy(client, headers, area_code).json() == number


def test_an_idempotency_key_buys_once_and_replays_the_answer(client, tenant, fake, area_code):
    headers = {**tenant.headers, "Idempotency-Key": f"managed-{area_code}"}
    before = purchases(fake)

    first = buy(client, headers, area_code)
    second = buy(client, headers, area_code)
    other = buy(client, headers, area_code, "support")

    assert (first.status_code, second.status_code) == (201, 201)
    assert second.json() == first.json() and second.headers.get("Idempotent-Replayed") == "true"
    assert purchases(fake) == before + 1
    assert (other.status_code, error_code(other)) == (409, "idempotency_key_reused")


def test_a_number_restricted_key_cannot_buy_numbers(client, tenant, area_code):
    """SPEC.md Authentication §6, as for bring your own: a new number is outside the key's list."""
    mine = bought(client, tenant.headers, area_code)["id"]
    created = client.post("/auth/api-keys", json={"scopes": ["numbers:write"], "number_ids": [mine]},
                          headers=tenant.headers)
    restricted = {"Authorization": f"Bearer {created.json()['secret']}"}
    refused = buy(client, restricted, area_code)
    assert (refused.status_code, error_code(refused)) == (403, "number_not_allowed")
    unscoped = scoped_key(client, tenant, ["calls:read"])
    for response in (buy(client, unscoped, area_code), client.delete(f"/v1/numbers/{mine}", headers=unscoped)):
        assert (response.status_code, error_code(response)) == (403, "insufficient_scope")


def test_a_bring_your_own_number_is_not_released_through_the_managed_route(client, container, fake):
    byo_e164 = "+13125550142"
    owner, _ = carrier_tenant(client, container, fake, [(byo_e164, "Line")], select=False)
    number = client.post("/v1/numbers/byo", json={"e164": byo_e164}, headers=owner.headers).json()

    refused = client.delete(f"/v1/numbers/{number['id']}", headers=owner.headers)

    assert (refused.status_code, error_code(refused)) == (409, "number_not_managed")
    assert f"DELETE /v1/numbers/byo/{number['id']}" in refused.json()["error"]["message"]
    assert client.get(f"/v1/numbers/{number['id']}", headers=owner.headers).json()["active"] is True


def test_another_tenants_managed_number_is_not_found(client, container, tenant, area_code):
    number = bought(client, tenant.headers, area_code)
    stranger = new_tenant(client, container)
    refused = client.delete(f"/v1/numbers/{number['id']}", headers=stranger.headers)
    assert (refused.status_code, error_code(refused)) == (404, "number_not_found")


def test_the_openapi_document_lists_the_use_cases_and_the_errors(client):
    document = client.get("/schema/openapi.json").json()
    request = document["components"]["schemas"]["ManagedNumberCreate"]
    assert request["properties"]["use_case"]["enum"] == list(ALLOWED)
    assert set(request["required"]) == {"area_code", "use_case"}
    create = document["paths"]["/v1/numbers"]["post"]
    assert {"201", "403", "409", "422", "502", "503"} <= set(create["responses"])
    release = document["paths"]["/v1/numbers/{number_id}"]["delete"]
    assert {"204", "403", "404", "409", "502", "503"} <= set(release["responses"])


@pytest.mark.parametrize("given", [{"managed_account_sid": MANAGED_SID}, {"managed_auth_token": MANAGED_TOKEN}])
def test_one_managed_setting_alone_leaves_the_feature_off_with_a_warning(given, tmp_path):
    with capture_logs() as logs:
        assert managed_numbering(Settings(data_dir=tmp_path, **given)) is None
    warned = [line for line in logs if line["event"] == "managed_numbers.misconfigured"]
    assert len(warned) == 1 and MANAGED_TOKEN not in str(logs)


def test_the_managed_token_is_read_from_the_environment_and_never_shown():
    settings = Settings.from_env({"CALLWRIGHT_MANAGED_ACCOUNT_SID": MANAGED_SID,
                                  "CALLWRIGHT_MANAGED_AUTH_TOKEN": MANAGED_TOKEN})
    assert (settings.managed_account_sid, settings.managed_auth_token) == (MANAGED_SID, MANAGED_TOKEN)
    numbering = managed_numbering(settings)
    assert numbering is not None
    assert MANAGED_TOKEN not in repr(settings) and MANAGED_TOKEN not in repr(numbering)


def test_a_managed_number_is_not_disconnected_through_the_bring_your_own_route(client, tenant, area_code):
    number = bought(client, tenant.headers, area_code)
    refused = client.delete(f"/v1/numbers/byo/{number['id']}", headers=tenant.headers)
    assert (refused.status_code, error_code(refused)) == (404, "number_not_found")
    assert client.get(f"/v1/numbers/{number['id']}", headers=tenant.headers).json()["active"] is True


def test_a_managed_number_texts_after_its_calls_from_the_managed_account(client, container, tenant, fake, area_code):
    """Post-call SMS (issue 14 item 3) of a managed number go out on the service's sub-account:
    the tenant has no carrier account of its own."""
    number = bought(client, tenant.headers, area_code)
    assert client.patch(f"/v1/numbers/{number['id']}", headers=tenant.headers, json={
        "sms_enabled": True, "sms_templates": [{"name": "Thanks", "body": "Thanks for calling {{ number.e164 }}."}]},
    ).status_code == 200
    caller, now = "+442071830091", container.clock()
    call = queued_call(tenant_id=tenant.tenant_id, call_id=ids.to_public(ids.CALL, uuid.uuid4()), direction="inbound",
                       mode="live", to=number["e164"], from_number=caller, metadata={"number_id": number["id"]},
                       simulation=None, at=now)
    call.inbound_answered("CA" + uuid.uuid4().hex, now)
    call.end(5, now)
    call.record_outcome({"confirmed": True}, 0.9, {}, now)
    call.complete(Decimal("0.0100"), Decimal("0"), now)
    container.calling.commit(call)

    deadline = time.monotonic() + 10
    while not [m for m in fake.messages.values() if m["to"] == caller] and time.monotonic() < deadline:
        time.sleep(0.02)
    texts = [m for m in fake.messages.values() if m["to"] == caller]
    assert [(m["account_sid"], m["from"], m["body"]) for m in texts] == [
        (MANAGED_SID, number["e164"], f"Thanks for calling {number['e164']}.")]


def test_a_text_to_a_managed_number_is_acknowledged_with_no_reply_and_its_body_is_not_logged(client, container,
                                                                                              tenant, area_code,
                                                                                              monkeypatch):
    """The number's SMS URL (set at purchase) answers the carrier: signed by the managed account,
    200 with an empty reply document; anything else 403."""
    number = bought(client, tenant.headers, area_code)
    form = {"MessageSid": "SM" + "1" * 32, "AccountSid": MANAGED_SID, "From": "+14155550142",
            "To": number["e164"], "Body": "Is the clinic open on Sunday?", "NumSegments": "1"}
    url = container.settings.base_url + "/webhooks/carrier/sms"
    signature = RequestValidator(MANAGED_TOKEN).compute_signature(url, form)

    lines: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(inbound, "log", SimpleNamespace(info=lambda event, **fields: lines.append((event, fields))))
    answered = client.post("/webhooks/carrier/sms", data=form, headers={"X-Twilio-Signature": signature})

    assert answered.status_code == 200, answered.text
    assert answered.text.endswith("<Response />") and answered.headers["content-type"].startswith("application/xml")
    assert lines == [("number.sms_received", {"number_id": number["id"], "tenant_id": tenant.tenant_id})], lines
    forged = client.post("/webhooks/carrier/sms", data=form, headers={"X-Twilio-Signature": "x" + signature[1:]})
    assert forged.status_code == 403
    unknown = {**form, "To": "+14155550999"}
    signature = RequestValidator(MANAGED_TOKEN).compute_signature(url, unknown)
    assert client.post("/webhooks/carrier/sms", data=unknown, headers={"X-Twilio-Signature": signature}).status_code == 403
