"""The onboarding wizard over HTTP (SPEC.md Wizard; issue 19 items 1 and 2; docs/wizard.md):
``POST /v1/wizard/generate`` answers a verdict, its reason and a ready configuration;
``POST /v1/wizard/provision`` buys a managed number on the fake carrier's managed account and
configures it in the same operation, once per Idempotency-Key."""

from __future__ import annotations

from dataclasses import replace

import itertools
from typing import Any

import pytest

from adapters.anthropic.client import make_client
from adapters.anthropic.wizard import AnthropicWizardGenerator
from domain.wizard.configs import config_for
from tests.fakes.anthropic.fixture import fake_anthropic  # noqa: F401 - fixture
from tests.fakes.anthropic.server import FakeAnthropic, Reply, ToolCall
from tests.support.call_requests import error_code, only_problem, problems
from tests.support.setup import Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

MANAGED_SID, MANAGED_TOKEN = "AC" + "6b" * 16, "managed-token-" + "8" * 18
APP_SETTINGS = {"managed_account_sid": MANAGED_SID, "managed_auth_token": MANAGED_TOKEN}
DENTAL = "Acme Dental, a family dental practice in Austin, Texas: patients call to book checkups and cleanings."
DEBTS = "We are a collections agency and want a line for people who owe money to our clients."
LAW = "A small law firm: callers want to talk to an attorney about their case."
_area_codes = itertools.count(601)


@pytest.fixture(scope="module", autouse=True)
def managed_account(fake):
    return fake.add_account(sid=MANAGED_SID, auth_token=MANAGED_TOKEN, friendly_name="callwright managed")


@pytest.fixture
def tenant(client, container) -> Account:
    return new_tenant(client, container)


@pytest.fixture
def area_code() -> str:
    return str(next(_area_codes))


def generate(client, headers: dict[str, str], description: Any, **extra: Any) -> Any:
    return client.post("/v1/wizard/generate", json={"business_description": description, **extra}, headers=headers)


def provision_body(area_code: str, description: str = DENTAL, config: dict[str, Any] | None = None,
                   **extra: Any) -> dict[str, Any]:
    return {"business_name": "Acme Dental", "business_description": description, "area_code": area_code,
            "config": config if config is not None else config_for("dental", description), **extra}


def provision(client, headers: dict[str, str], body: dict[str, Any]) -> Any:
    return client.post("/v1/wizard/provision", json=body, headers=headers)


def purchases(fake) -> int:
    return len(fake.requests_to("/IncomingPhoneNumbers.json", "POST"))


# --- generate ---------------------------------------------------------------------------------------

def test_a_supported_description_gets_a_verdict_a_reason_and_a_ready_config(client, tenant):
    answer = generate(client, tenant.headers, DENTAL)

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == {"verdict", "reason", "config"}
    assert body["verdict"] == "supported" and "dental" in body["reason"]
    assert body["config"] == config_for("dental", DENTAL)
    assert body["config"]["timezone"] == "America/Chicago" and body["config"]["transfer_destinations"] == []


def test_an_unsupported_description_gets_its_reason_and_no_config(client, tenant):
    body = generate(client, tenant.headers, DEBTS).json()
    assert (body["verdict"], body["config"]) == ("unsupported", None)
    assert body["reason"].startswith("Debt collection is not supported")


def test_an_ambiguous_description_needs_review_and_still_gets_a_config(client, tenant):
    body = generate(client, tenant.headers, LAW).json()
    assert body["verdict"] == "needs_review" and "legal advice" in body["reason"]
    assert body["config"] == config_for("general", LAW)


@pytest.mark.parametrize("description", ["", "x" * 4001, None, 42])
def test_the_description_is_1_to_4000_characters_of_text(client, tenant, description):
    assert [p["loc"] for p in problems(generate(client, tenant.headers, description))] == [
        ["body", "business_description"]]


def test_generate_takes_no_other_field(client, tenant):
    assert only_problem(generate(client, tenant.headers, DENTAL, area_code="512"))["loc"] == ["body", "area_code"]


def test_generate_needs_any_valid_key_and_no_scope(client, tenant):
    narrow = scoped_key(client, tenant, ["calls:read"])
    assert generate(client, narrow, DENTAL).status_code == 200
    anonymous = generate(client, {}, DENTAL)
    assert (anonymous.status_code, error_code(anonymous)) == (401, "missing_credentials")


def numbering(client, monkeypatch, **changes: Any) -> None:
    """The app's numbering service with ``changes`` (its generator, its managed account) for one test."""
    services = client.app.state.services
    monkeypatch.setattr(client.app.state, "services", replace(services, numbering=replace(services.numbering, **changes)))


def test_a_generator_that_answers_twice_with_an_invalid_config_is_a_502(client, container, tenant, monkeypatch,
                                                                        fake_anthropic: FakeAnthropic):  # noqa: F811
    model = make_client(fake_anthropic.api_key, base_url=fake_anthropic.base_url, timeout=5.0, max_retries=0)
    numbering(client, monkeypatch, wizard=AnthropicWizardGenerator(model, model="claude-test"))
    broken = {**config_for("dental", DENTAL), "hours_json": {"mon": [["18:00", "09:00"]]}}
    fake_anthropic.queue(*(Reply(tool_calls=(ToolCall("configure_number", broken),)) for _ in range(2)))

    failed = generate(client, tenant.headers, DENTAL)

    assert (failed.status_code, error_code(failed)) == (502, "generation_invalid")
    assert "hours_json" in failed.json()["error"]["message"]
    fake_anthropic.fail(529)
    unreachable = generate(client, tenant.headers, DENTAL)
    assert (unreachable.status_code, error_code(unreachable)) == (502, "generator_unavailable")


# --- provision --------------------------------------------------------------------------------------

def test_provision_buys_one_number_in_the_area_code_and_configures_it(client, tenant, fake, area_code):
    config = generate(client, tenant.headers, DENTAL).json()["config"]

    answer = provision(client, tenant.headers, provision_body(area_code, config=config))

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == {"tenant_id", "number"} and body["tenant_id"] == tenant.tenant_id
    number = body["number"]
    assert (number["source"], number["active"]) == ("managed", True) and number["e164"].startswith(f"+1{area_code}")
    shown = client.get(f"/v1/numbers/{number['id']}", headers=tenant.headers).json()
    # The greeting's audio is rendered after the answer, so its freshness may change between the reads.
    assert {**shown, "greeting_audio_fresh": None} == {**number, "greeting_audio_fresh": None}
    for name in ("greeting", "persona", "objective", "timezone", "hours_json", "overflow_action", "voicemail_mode",
                 "voicemail_persona", "sms_enabled", "transfer_destinations"):
        assert shown[name] == config[name], name
    assert [(t["name"], t["body"]) for t in shown["sms_templates"]] == [
        (t["name"], t["body"]) for t in config["sms_templates"]]
    bought = [r for r in fake.market.purchased.values() if r["phone_number"] == number["e164"]]
    assert len(bought) == 1 and bought[0]["account_sid"] == MANAGED_SID
    assert bought[0]["friendly_name"].startswith("wzp_")  # the provision's tag, to find it again after a crash


def test_a_retry_with_the_same_idempotency_key_buys_exactly_one_number(client, tenant, fake, area_code):
    headers = {**tenant.headers, "Idempotency-Key": f"wizard-{area_code}"}
    before = purchases(fake)

    first = provision(client, headers, provision_body(area_code))
    second = provision(client, headers, provision_body(area_code))
    other = provision(client, headers, provision_body(area_code, description=DENTAL + " Walk-ins welcome."))

    assert (first.status_code, second.status_code) == (200, 200), (first.text, second.text)
    assert second.json() == first.json() and second.headers.get("Idempotent-Replayed") == "true"
    assert purchases(fake) == before + 1
    assert (other.status_code, error_code(other)) == (409, "idempotency_key_reused")


@pytest.mark.parametrize(("description", "verdict"), [(LAW, "needs_review"), (DEBTS, "unsupported")])
def test_a_verdict_other_than_supported_is_refused_with_its_reason(client, tenant, fake, area_code, description,
                                                                  verdict):
    before = purchases(fake)
    problem = only_problem(provision(client, tenant.headers, provision_body(area_code, description=description)))
    assert (problem["loc"], problem["type"]) == (["body", "business_description"], f"use_case_{verdict}")
    assert problem["ctx"]["verdict"] == verdict and problem["msg"]
    assert purchases(fake) == before


def test_the_gate_also_reads_the_configs_texts(client, tenant, fake, area_code):
    config = {**config_for("dental", DENTAL), "objective": "Collect overdue payments from patients who owe us."}
    problem = only_problem(provision(client, tenant.headers, provision_body(area_code, config=config)))
    assert (problem["type"], problem["ctx"]["category"]) == ("use_case_unsupported", "debt_collection")


def test_a_config_patch_would_refuse_is_refused_at_config_with_every_problem(client, tenant, fake, area_code):
    before = purchases(fake)
    config = {**config_for("dental", DENTAL), "overflow_action": "fax", "transfer_max_attempts": 9, "colour": "red"}
    found = problems(provision(client, tenant.headers, provision_body(area_code, config=config)))
    assert sorted(p["loc"] for p in found) == [["body", "config", "colour"], ["body", "config", "overflow_action"],
                                              ["body", "config", "transfer_max_attempts"]]
    assert purchases(fake) == before


def test_an_area_code_with_nothing_on_sale_is_a_422(client, tenant):
    problem = only_problem(provision(client, tenant.headers, provision_body("999")))
    assert (problem["loc"], problem["type"], problem["input"]) == (["body", "area_code"], "no_numbers_in_area_code",
                                                                   "999")


def test_a_key_whose_provision_bought_nothing_may_be_sent_with_another_body(client, tenant, fake, area_code):
    """ARCHITECTURE.md §9: refusals are not stored, so the client may correct the request."""
    headers = {**tenant.headers, "Idempotency-Key": f"wizard-fix-{area_code}"}
    refused = provision(client, headers, provision_body("999"))
    assert only_problem(refused)["type"] == "no_numbers_in_area_code"

    done = provision(client, headers, provision_body(area_code))

    assert done.status_code == 200, done.text
    assert done.json()["number"]["e164"].startswith(f"+1{area_code}")


def test_the_provision_body_is_checked_whole(client, tenant):
    body = provision_body("41")
    del body["business_name"]
    found = problems(provision(client, tenant.headers, {**body, "extra": 1}))
    assert sorted(tuple(p["loc"]) for p in found) == [("body", "area_code"), ("body", "business_name"),
                                                      ("body", "extra")]


def test_provision_needs_numbers_write_and_an_unrestricted_key(client, tenant, area_code):
    unscoped = scoped_key(client, tenant, ["calls:read"])
    refused = provision(client, unscoped, provision_body(area_code))
    assert (refused.status_code, error_code(refused)) == (403, "insufficient_scope")
    created = client.post("/auth/api-keys", headers=tenant.headers, json={
        "scopes": ["numbers:write"], "number_ids": ["0f8fad5b-d9cb-469f-a165-70867728950e"]}).json()
    restricted = provision(client, {"Authorization": f"Bearer {created['secret']}"}, provision_body(area_code))
    assert (restricted.status_code, error_code(restricted)) == (403, "number_not_allowed")


def test_without_a_managed_account_provision_is_a_503(client, container, tenant, monkeypatch, area_code):
    numbering(client, monkeypatch, managed=None)
    refused = provision(client, tenant.headers, provision_body(area_code))
    assert (refused.status_code, error_code(refused)) == (503, "managed_numbers_unavailable")


def test_a_carrier_that_cannot_be_reached_is_a_502_and_nothing_is_registered(client, tenant, fake, area_code):
    fake.stop()
    try:
        refused = provision(client, tenant.headers, provision_body(area_code))
    finally:
        fake.start(fake.port)
    assert (refused.status_code, error_code(refused)) == (502, "upstream_unavailable")
    assert client.get("/v1/numbers", headers=tenant.headers).json() == []


def test_the_openapi_document_names_and_types_both_operations(client):
    document = client.get("/schema/openapi.json").json()
    generate_op = document["paths"]["/v1/wizard/generate"]["post"]
    provision_op = document["paths"]["/v1/wizard/provision"]["post"]
    assert (generate_op["operationId"], provision_op["operationId"]) == ("wizard_generate", "wizard_provision")
    assert {"200", "401", "422", "502"} <= set(generate_op["responses"])
    assert {"200", "403", "409", "422", "502", "503"} <= set(provision_op["responses"])
    assert "provision_in_progress" in provision_op["responses"]["409"]["description"]
    schemas = document["components"]["schemas"]
    assert schemas["WizardGeneration"]["properties"]["verdict"]["enum"] == ["supported", "needs_review", "unsupported"]
    assert set(schemas["WizardProvisioned"]["properties"]) == {"tenant_id", "number"}
    assert provision_op["requestBody"]["content"]["application/json"]["example"]["config"]["greeting"]
