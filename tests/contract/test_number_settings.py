"""Every field of SPEC.md's Number table over HTTP (issue 14, item 1): read on GET, set by PATCH
(absent unchanged, null cleared where nullable), unknown fields and every problem at once in the
422 shape, the rules between fields, and the SMS preview (item 4)."""

from __future__ import annotations

import hashlib
import itertools
import time
from typing import Any

import pytest

from tests.support.call_requests import error_code, problems
from tests.support.setup import Account, carrier_tenant
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

_serial = itertools.count(500)
HOURS = {"mon": [["13:30", "17:30"], ["09:00", "12:30"]], "sat": [["10:00", "24:00"]]}
TEMPLATE = {"name": "Callback", "body": "Hi {{ outcome.caller_name }}, we will call {{ call.from }} back.",
            "condition": {"field": "callback_requested", "op": "eq", "value": True}}
DESTINATION = {"label": "Front desk", "e164": "+442079460958"}


@pytest.fixture
def tenant_and_number(client, container, fake) -> tuple[Account, dict[str, Any]]:
    e164 = f"+1415555{next(_serial):04d}"
    tenant = carrier_tenant(client, container, fake, [(e164, "Main line")], select=False)[0]
    created = client.post("/v1/numbers/byo", json={"e164": e164}, headers=tenant.headers)
    assert created.status_code == 201, created.text
    return tenant, created.json()


def patch(client, tenant: Account, number: dict[str, Any], **fields: Any):
    return client.patch(f"/v1/numbers/{number['id']}", json=fields, headers=tenant.headers)


def patched(client, tenant: Account, number: dict[str, Any], **fields: Any) -> dict[str, Any]:
    response = patch(client, tenant, number, **fields)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_new_number_shows_every_field_with_its_default(tenant_and_number):
    _, number = tenant_and_number
    assert {key: number[key] for key in ("greeting_voice_id", "flow_id", "hours_json", "overflow_message",
                                         "voicemail_persona", "sms_brand_id")} == dict.fromkeys(
        ("greeting_voice_id", "flow_id", "hours_json", "overflow_message", "voicemail_persona", "sms_brand_id"))
    assert (number["overflow_action"], number["voicemail_mode"], number["sms_enabled"]) == (
        "voicemail", "overflow_only", False)
    assert number["routes"] == [] and number["sms_templates"] == []
    assert number["greeting_audio_fresh"] is True  # no greeting, nothing to render
    assert set(number["voicemail_schema"]) == {"message", "caller_name", "callback_number"}


def test_every_field_is_set_by_patch_and_read_back(client, tenant_and_number):
    tenant, number = tenant_and_number
    body = patched(
        client, tenant, number, greeting="Thanks for calling Acme Dental.", greeting_voice_id="voice-warm-1",
        persona="Calm and brief", timezone="America/Los_Angeles", hours_json=HOURS, overflow_action="message",
        overflow_message="We are closed; call again from 9 am.", transfer_destinations=[DESTINATION],
        routes=[{"match": {"keypad": "2"}, "action": "transfer", "destination": "Front desk"},
                {"match": {"caller_prefix": "+44"}, "action": "agent"}],
        voicemail_mode="always", voicemail_persona="Friendly",
        voicemail_schema={"message": {"type": "string"}, "urgent": {"type": "boolean", "optional": True}},
        sms_enabled=True, sms_brand_id="brand-acme", sms_templates=[TEMPLATE], voice_engine="alpha_31",
    )
    assert body["hours_json"] == {"mon": [["09:00", "12:30"], ["13:30", "17:30"]], "sat": [["10:00", "24:00"]]}
    assert body["routes"] == [{"match": {"keypad": "2"}, "action": "transfer", "destination": "Front desk"},
                              {"match": {"caller_prefix": "+44"}, "action": "agent"}]
    template = body["sms_templates"][0]
    assert template["id"].startswith("smt_") and len(template["id"]) == 36
    assert {k: template[k] for k in ("name", "body", "condition")} == TEMPLATE
    assert (body["overflow_action"], body["voicemail_mode"], body["sms_enabled"], body["sms_brand_id"]) == (
        "message", "always", True, "brand-acme")
    assert body["greeting_audio_fresh"] is False  # the greeting changed: its audio is rendered afterwards
    assert body["voicemail_schema"]["urgent"] == {"type": "boolean", "optional": True}
    assert client.get(f"/v1/numbers/{number['id']}", headers=tenant.headers).json()["routes"] == body["routes"]

    again = patched(client, tenant, number, sms_templates=body["sms_templates"])
    assert again["sms_templates"] == body["sms_templates"]  # ids sent back are kept


def test_absent_is_unchanged_and_null_clears_the_nullable_fields(client, tenant_and_number):
    tenant, number = tenant_and_number
    patched(client, tenant, number, greeting="Hello", greeting_voice_id="v1", hours_json=HOURS,
            overflow_message="Closed", sms_brand_id="b1", voicemail_persona="Kind")
    kept = patched(client, tenant, number, persona="Brief")
    assert (kept["greeting"], kept["hours_json"] is not None, kept["sms_brand_id"]) == ("Hello", True, "b1")

    cleared = patched(client, tenant, number, greeting_voice_id=None, hours_json=None, overflow_message=None,
                      sms_brand_id=None, voicemail_persona=None)
    assert [cleared[k] for k in ("greeting_voice_id", "hours_json", "overflow_message", "sms_brand_id",
                                 "voicemail_persona")] == [None] * 5
    for name in ("overflow_action", "routes", "voicemail_mode", "voicemail_schema", "sms_enabled", "sms_templates"):
        response = patch(client, tenant, number, **{name: None})
        assert response.status_code == 422, (name, response.text)
        assert [p["loc"] for p in problems(response)] == [["body", name]], name


def test_every_problem_is_reported_at_once(client, tenant_and_number):
    tenant, number = tenant_and_number
    response = patch(
        client, tenant, number, shoe_size=9,
        hours_json={"mon": [["09:00", "12:00"], ["11:00", "13:00"]], "funday": [], "tue": [["25:00", "26:00"]]},
        routes=[{"match": {"keypad": "22"}, "action": "transfer"}, {"match": {}, "action": "dance"}],
        sms_templates=[{"name": "A", "body": "{{ outcome.nope }} {{ call.when }}"}],
    )
    assert response.status_code == 422
    found = {(tuple(p["loc"]), p["type"]) for p in problems(response)}
    assert {(("body", "shoe_size"), "extra_forbidden"),
            (("body", "hours_json", "mon", 1), "window_overlap"),
            (("body", "hours_json", "funday"), "unknown_day"),
            (("body", "hours_json", "tue", 0, 0), "time_format"),
            (("body", "routes", 0, "match", "keypad"), "keypad"),
            (("body", "routes", 0, "destination"), "missing"),
            (("body", "routes", 1, "match"), "match_kind"),
            (("body", "routes", 1, "action"), "enum"),
            (("body", "sms_templates", 0, "body"), "unknown_placeholder")} <= found, found


def test_a_value_a_setting_does_not_know_has_its_own_type_not_extra_forbidden(client, tenant_and_number):
    """SPEC.md Validation error: ``{loc, msg, type, input, ctx}``. ``extra_forbidden`` says the
    resource has no such field, and stays for that; an unknown day of ``hours_json``, an unknown
    kind of route ``match``, a route ``destination`` an action takes none of and a condition
    ``value`` an op takes none of are other problems, each with its own type, ``loc`` at the key
    at fault and a ``msg`` naming it and what is allowed."""
    tenant, number = tenant_and_number
    patched(client, tenant, number, transfer_destinations=[DESTINATION])
    response = patch(
        client, tenant, number, colour="red",
        hours_json={"monday": [["09:00", "17:00"]], "tue": [["09:00", "17:00"]]},
        routes=[{"match": {"dialled": "2"}, "action": "agent"},
                {"match": {"keypad": "3"}, "action": "voicemail", "destination": "Front desk"},
                {"match": {"keypad": "4"}, "action": "agent", "priority": 1}],
        sms_templates=[{**TEMPLATE, "condition": {"field": "callback_requested", "op": "present", "value": True}}],
    )
    assert response.status_code == 422, response.text
    found = {tuple(p["loc"]): p for p in problems(response)}

    expected = {
        ("body", "colour"): ("extra_forbidden", []),
        ("body", "routes", 2, "priority"): ("extra_forbidden", []),
        ("body", "hours_json", "monday"): ("unknown_day", ["monday", "mon", "tue", "wed", "thu", "fri", "sat", "sun"]),
        ("body", "routes", 0, "match", "dialled"): ("unknown_match", ["dialled", "caller_prefix", "keypad"]),
        ("body", "routes", 1, "destination"): ("destination_not_allowed", ["voicemail", "transfer"]),
        ("body", "sms_templates", 0, "condition", "value"): ("value_not_allowed", ["present", "eq"]),
    }
    for loc, (kind, named) in expected.items():
        assert loc in found, (loc, found)
        problem = found[loc]
        assert problem["type"] == kind, problem
        assert all(word in problem["msg"] for word in named), problem
        assert set(problem) == {"loc", "msg", "type", "input", "ctx"}
    assert found[("body", "hours_json", "monday")]["input"] == [["09:00", "17:00"]]
    assert [p["type"] for p in problems(response)].count("extra_forbidden") == 2


def test_the_rules_between_fields_see_the_settings_as_they_will_be(client, tenant_and_number):
    tenant, number = tenant_and_number
    cases = [
        ({"overflow_action": "transfer"}, ["body", "overflow_action"], "transfer_destination_missing"),
        ({"overflow_action": "message"}, ["body", "overflow_message"], "overflow_message_missing"),
        ({"routes": [{"match": {"keypad": "1"}, "action": "transfer", "destination": "Nobody"}]},
         ["body", "routes", 0, "destination"], "unknown_destination"),
        ({"voicemail_mode": "off"}, ["body", "voicemail_mode"], "voicemail_off"),
        ({"sms_templates": [{**TEMPLATE, "body": "{{ outcome.shoe_size }}"}]},
         ["body", "sms_templates", 0, "body"], "unknown_outcome_field"),
        ({"flow_id": "flw_0123456789abcdef0123456789abcdef"}, ["body", "flow_id"], "flow_not_found"),
    ]
    for fields, loc, kind in cases:
        response = patch(client, tenant, number, **fields)
        assert response.status_code == 422, (fields, response.text)
        assert (loc, kind) in [(p["loc"], p["type"]) for p in problems(response)], (fields, problems(response))

    patched(client, tenant, number, sms_templates=[TEMPLATE])
    orphaned = patch(client, tenant, number, outcome_schema={"summary": {"type": "string"}})
    assert orphaned.status_code == 422  # the template names caller_name and callback_requested
    assert {tuple(p["loc"][:3]) for p in problems(orphaned)} == {("body", "sms_templates", 0)}
    assert patched(client, tenant, number, voicemail_mode="off", overflow_action="hangup")["voicemail_mode"] == "off"


def test_the_sms_preview_renders_a_template_against_the_example_outcome(client, tenant_and_number):
    tenant, number = tenant_and_number
    body = patched(client, tenant, number, sms_templates=[
        TEMPLATE, {"name": "Never", "body": "Unused", "condition": {"field": "callback_requested", "op": "absent"}}])
    firing, never = (t["id"] for t in body["sms_templates"])
    url = f"/v1/numbers/{number['id']}/sms/preview"

    shown = client.post(url, json={"template_id": firing}, headers=tenant.headers)
    assert shown.status_code == 200, shown.text
    assert shown.json() == {"would_fire": True,
                            "rendered_body": "Hi caller name, we will call +15555550123 back."}
    assert client.post(url, json={"template_id": never}, headers=tenant.headers).json()["would_fire"] is False

    unknown = client.post(url, json={"template_id": "smt_" + "0" * 32}, headers=tenant.headers)
    assert unknown.status_code == 404 and error_code(unknown) == "template_not_found"
    assert client.post(url, json={}, headers=tenant.headers).status_code == 422
    other = client.post("/auth/api-keys", json={"scopes": ["numbers:write"], "number_ids": []},
                        headers=tenant.headers).json()["secret"]
    refused = client.post(url, json={"template_id": firing}, headers={"Authorization": f"Bearer {other}"})
    assert refused.status_code == 403 and error_code(refused) == "number_not_allowed"


def test_the_openapi_document_types_every_field_and_the_preview(client):
    document = client.get("/schema/openapi.json").json()
    schemas = document["components"]["schemas"]
    view = schemas["NumberView"]["properties"]
    for name in ("greeting_audio_fresh", "hours_json", "routes", "voicemail_mode", "sms_templates", "flow_id"):
        assert name in view, name
    patch_body = document["paths"]["/v1/numbers/{number_id}"]["patch"]["requestBody"]["content"]["application/json"]
    settings = schemas[patch_body["schema"]["$ref"].rsplit("/", 1)[-1]]["properties"]
    assert settings["hours_json"]["title"] == "OpeningHours"
    assert settings["routes"]["items"]["properties"]["action"]["enum"] == ["transfer", "voicemail", "agent"]
    assert "{{ outcome.<field> }}" in settings["sms_templates"]["description"]
    preview = document["paths"]["/v1/numbers/{number_id}/sms/preview"]["post"]
    assert {"200", "403", "404", "422"} <= set(preview["responses"])


def test_the_greeting_audio_is_rendered_after_a_change_of_the_greeting_or_its_voice(client, container,
                                                                                    tenant_and_number):
    tenant, number = tenant_and_number
    url = f"/v1/numbers/{number['id']}"

    def fresh_within(seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if client.get(url, headers=tenant.headers).json()["greeting_audio_fresh"]:
                return True
            time.sleep(0.05)
        return False

    assert patched(client, tenant, number, greeting="Thanks for calling Acme.")["greeting_audio_fresh"] is False
    assert fresh_within(5.0)
    first = container.greeting_audio.get(number["id"])
    assert first is not None and first[0] == hashlib.sha256(first[1]).hexdigest() and first[1]

    assert patched(client, tenant, number, persona="Warm")["greeting_audio_fresh"] is True  # nothing to say anew
    assert patched(client, tenant, number, greeting_voice_id="voice-2")["greeting_audio_fresh"] is False
    assert fresh_within(5.0)
    assert patched(client, tenant, number, greeting="Hello again.")["greeting_audio_fresh"] is False
    assert fresh_within(5.0)
    latest = container.greeting_audio.get(number["id"])
    assert latest is not None and latest[0] != first[0]
    assert patched(client, tenant, number, greeting=None)["greeting_audio_fresh"] is True
