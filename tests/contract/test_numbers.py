"""``/v1/numbers`` (SPEC.md Number, Numbers and SMS, Limits, Authentication §5–§6) over HTTP, with
carrier accounts verified against the fake carrier so that tenants hold numbers."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from litestar.testing import TestClient

from application.numbers.lookups import number_for_e164, tenant_number
from entrypoints.bootstrap import Container
from tests.fakes.twilio.rest import FakeTwilio
from tests.support.call_requests import ABSENT, batch_body, call_body, error_code, only_problem, problems
from tests.support.setup import Account, carrier_tenant, new_tenant, scoped_key, select_number
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

LONDON, LONDON_2 = "+442071838750", "+442079460958"
NUMBER_FIELDS = {"id", "e164", "source", "active", "objective", "greeting", "greeting_voice_id", "greeting_audio_fresh",
                 "persona", "outcome_schema", "recording_enabled", "voice_engine", "flow_id", "transfer_destinations",
                 "transfer_max_attempts", "language", "timezone", "hours_json", "overflow_action", "overflow_message",
                 "routes", "voicemail_mode", "voicemail_schema", "voicemail_persona", "sms_enabled", "sms_brand_id",
                 "sms_templates", "created_at", "updated_at", "disconnected_at"}
_serial = itertools.count(100)


@pytest.fixture
def numbers() -> list[str]:
    """Three E.164 numbers no other test of this module uses (claims are global)."""
    return [f"+1415555{next(_serial):04d}" for _ in range(3)]


def tenant_holding(client: TestClient[Any], container: Container, fake: FakeTwilio, held: list[str]) -> Account:
    """An approved tenant whose verified carrier account holds ``held``."""
    numbers = [(n, f"Line {n[-4:]}") for n in held]
    return carrier_tenant(client, container, fake, numbers, friendly_name="Acme Dental", select=False)[0]


@pytest.fixture
def tenant(client, container, fake, numbers) -> Account:
    return tenant_holding(client, container, fake, numbers)


def register(client: TestClient[Any], headers: dict[str, str], e164: str, **settings: Any) -> Any:
    return client.post("/v1/numbers/byo", json={"e164": e164, **settings}, headers=headers)


def registered(client: TestClient[Any], headers: dict[str, str], e164: str, **settings: Any) -> dict[str, Any]:
    response = register(client, headers, e164, **settings)
    assert response.status_code == 201, response.text
    return response.json()


def test_a_bring_your_own_number_is_registered_with_defaults(client, tenant, numbers):
    body = registered(client, tenant.headers, numbers[0])

    assert set(body) == NUMBER_FIELDS
    assert (body["e164"], body["source"], body["active"], body["recording_enabled"]) == (numbers[0], "byo", True, True)
    assert (body["language"], body["transfer_max_attempts"], body["transfer_destinations"]) == ("en-US", 3, [])
    assert body["timezone"] == "America/Los_Angeles" and body["voice_engine"] is None
    assert body["objective"] and "summary" in body["outcome_schema"]
    assert client.get(f"/v1/numbers/{body['id']}", headers=tenant.headers).json() == body


def test_every_setting_can_be_given_at_registration(client, tenant, numbers):
    settings = {"objective": "Book a cleaning", "greeting": "Acme Dental, how can I help?", "persona": "Warm",
                "outcome_schema": {"booked": {"type": "boolean"}}, "recording_enabled": False,
                "voice_engine": "beta_think_fast", "transfer_destinations": [{"label": "Front desk", "e164": LONDON}],
                "transfer_max_attempts": 2, "language": "es-US", "timezone": "America/Chicago"}
    body = registered(client, tenant.headers, numbers[0], **settings)
    assert {k: body[k] for k in settings} == {**settings,
                                              "outcome_schema": {"booked": {"type": "boolean", "optional": False}}}


def test_a_number_outside_the_carrier_account_is_refused(client, tenant):
    problem = only_problem(register(client, tenant.headers, "+14155559999"))
    assert (problem["loc"], problem["type"], problem["input"]) == (
        ["body", "e164"], "number_not_in_carrier_account", "+14155559999")


def test_without_verified_carrier_credentials_the_number_is_refused(client, container, numbers):
    unverified = new_tenant(client, container)
    problem = only_problem(register(client, unverified.headers, numbers[0]))
    assert (problem["loc"], problem["type"]) == (["body", "e164"], "carrier_not_configured")


def test_a_number_held_by_an_active_number_is_taken(client, container, fake, tenant, numbers):
    registered(client, tenant.headers, numbers[0])
    again = register(client, tenant.headers, numbers[0])
    assert again.status_code == 409 and error_code(again) == "number_taken"

    rival = tenant_holding(client, container, fake, [numbers[0]])  # the same number in another account
    taken = register(client, rival.headers, numbers[0])
    assert taken.status_code == 409 and error_code(taken) == "number_taken"


def test_at_most_five_transfer_destinations(client, tenant, numbers):
    """SPEC.md Limits: transfer destinations per number, 5."""
    six = [{"label": f"Desk {i}", "e164": f"+4420794609{50 + i}"} for i in range(6)]
    problem = only_problem(register(client, tenant.headers, numbers[0], transfer_destinations=six))
    assert (problem["loc"], problem["type"]) == (["body", "transfer_destinations"], "too_long")

    number = registered(client, tenant.headers, numbers[0], transfer_destinations=six[:5])
    assert number["transfer_destinations"] == six[:5]  # order kept
    patched = client.patch(f"/v1/numbers/{number['id']}", json={"transfer_destinations": six}, headers=tenant.headers)
    assert only_problem(patched)["type"] == "too_long"


def test_a_transfer_destination_must_be_a_valid_e164(client, tenant, numbers):
    response = register(client, tenant.headers, numbers[0], transfer_destinations=[
        {"label": "Desk", "e164": "+1415555"}, {"label": "Desk", "e164": "0207 183 8750"},
        {"label": "Home", "e164": numbers[0]}, {"label": "Desk", "e164": LONDON}])
    found = [(p["loc"], p["type"], p["input"]) for p in problems(response)]
    assert found == [(["body", "transfer_destinations", 0, "e164"], "invalid_e164", "+1415555"),
                     (["body", "transfer_destinations", 1, "e164"], "invalid_e164", "0207 183 8750"),
                     (["body", "transfer_destinations", 2, "e164"], "transfer_to_self", numbers[0])]
    unlabelled = only_problem(register(client, tenant.headers, numbers[0],
                                       transfer_destinations=[{"label": "", "e164": LONDON}]))
    assert (unlabelled["loc"], unlabelled["type"]) == (["body", "transfer_destinations", 0, "label"], "label")


def test_broken_settings_are_all_reported_in_the_validation_shape(client, tenant, numbers):
    response = register(client, tenant.headers, numbers[0], transfer_max_attempts=6, voice_engine="gamma",
                        timezone="Mars/Olympus", outcome_schema={"Bad Name": {"type": "string"}}, colour="blue")
    locs = {tuple(p["loc"][:2]) for p in problems(response)}
    assert {("body", "transfer_max_attempts"), ("body", "voice_engine"), ("body", "colour")} <= locs
    # Types and bounds first (the request model); the domain rules report once those pass.
    domain = register(client, tenant.headers, numbers[0], timezone="Mars/Olympus",
                      outcome_schema={"Bad Name": {"type": "string"}})
    assert {(p["loc"][1], p["type"]) for p in problems(domain)} >= {("timezone", "timezone")}
    assert any(p["loc"][:2] == ["body", "outcome_schema"] for p in problems(domain))


def test_patch_changes_only_the_given_fields(client, tenant, numbers):
    number = registered(client, tenant.headers, numbers[0], greeting="Hello", persona="Warm")
    path = f"/v1/numbers/{number['id']}"

    changed = client.patch(path, json={"greeting": None, "transfer_max_attempts": 5,
                                       "transfer_destinations": [{"label": "Desk", "e164": LONDON_2}]},
                           headers=tenant.headers)

    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["greeting"], body["persona"], body["transfer_max_attempts"]) == (None, "Warm", 5)
    assert body["transfer_destinations"] == [{"label": "Desk", "e164": LONDON_2}] and body["updated_at"]
    assert client.get(path, headers=tenant.headers).json() == body
    assert client.patch(path, json={}, headers=tenant.headers).json() == body


def test_patch_refuses_unknown_fields_the_e164_and_null_for_required_settings(client, tenant, numbers):
    number = registered(client, tenant.headers, numbers[0])
    path = f"/v1/numbers/{number['id']}"
    for body, loc, kind in (({"colour": "blue"}, ["body", "colour"], "extra_forbidden"),
                            ({"e164": numbers[1]}, ["body", "e164"], "extra_forbidden"),
                            ({"objective": None}, ["body", "objective"], "string_type"),
                            ({"recording_enabled": "yes"}, ["body", "recording_enabled"], "bool_type")):
        problem = only_problem(client.patch(path, json=body, headers=tenant.headers))
        assert (problem["loc"], problem["type"]) == (loc, kind), body


def test_disconnect_then_register_again(client, container, tenant, numbers):
    first = registered(client, tenant.headers, numbers[0])
    assert number_for_e164(container.calling, numbers[0]).number_id == first["id"]

    gone = client.delete(f"/v1/numbers/byo/{first['id']}", headers=tenant.headers)

    assert gone.status_code == 204 and gone.content == b""
    assert number_for_e164(container.calling, numbers[0]) is None
    shown = client.get(f"/v1/numbers/{first['id']}", headers=tenant.headers).json()
    assert (shown["active"], shown["disconnected_at"] is not None) == (False, True)
    assert [n["id"] for n in client.get("/v1/numbers", headers=tenant.headers).json()] == []
    again = client.delete(f"/v1/numbers/byo/{first['id']}", headers=tenant.headers)
    assert again.status_code == 404 and error_code(again) == "number_not_found"
    refused = client.patch(f"/v1/numbers/{first['id']}", json={"greeting": "Hi"}, headers=tenant.headers)
    assert refused.status_code == 404

    second = registered(client, tenant.headers, numbers[0])
    assert second["id"] != first["id"]
    found = number_for_e164(container.calling, numbers[0])
    assert found is not None and found.number_id == second["id"] and found.active
    assert tenant_number(container.calling, tenant.tenant_id, numbers[0]).number_id == second["id"]


def test_the_list_is_oldest_first_and_pages_with_a_cursor(client, tenant, numbers):
    ids = [registered(client, tenant.headers, e164)["id"] for e164 in numbers]

    everything = client.get("/v1/numbers", headers=tenant.headers)
    assert everything.status_code == 200 and "x-next-cursor" not in everything.headers
    assert [n["id"] for n in everything.json()] == ids and all(set(n) == NUMBER_FIELDS for n in everything.json())

    seen, cursor = [], None
    while True:
        page = client.get("/v1/numbers", params={"limit": 2, **({"cursor": cursor} if cursor else {})},
                          headers=tenant.headers)
        assert page.status_code == 200, page.text
        seen += [n["id"] for n in page.json()]
        cursor = page.headers.get("x-next-cursor")
        if cursor is None:
            break
        assert 'rel="next"' in page.headers["link"]
    assert seen == ids


def test_list_parameters_are_checked(client, tenant):
    for params, loc in (({"limit": 0}, ["query", "limit"]), ({"limit": 201}, ["query", "limit"]),
                        ({"cursor": "bm90IGEgY3Vyc29y"}, ["query", "cursor"])):
        assert only_problem(client.get("/v1/numbers", params=params, headers=tenant.headers))["loc"] == loc
    assert client.get("/v1/numbers", params={"limit": 200}, headers=tenant.headers).status_code == 200


def test_a_number_restricted_key_sees_and_changes_only_its_numbers(client, tenant, numbers):
    """SPEC.md Numbers: a key with number_ids sees only those numbers; Authentication §6 and Errors:
    any other target number is refused with 403."""
    mine, other = (registered(client, tenant.headers, e164)["id"] for e164 in numbers[:2])
    created = client.post("/auth/api-keys", json={"scopes": ["numbers:write"], "number_ids": [mine]},
                          headers=tenant.headers)
    restricted = {"Authorization": f"Bearer {created.json()['secret']}"}

    assert [n["id"] for n in client.get("/v1/numbers", headers=restricted).json()] == [mine]
    assert client.get(f"/v1/numbers/{mine}", headers=restricted).status_code == 200
    assert client.patch(f"/v1/numbers/{mine}", json={"persona": "Brief"}, headers=restricted).status_code == 200
    for method, path, body in (("GET", f"/v1/numbers/{other}", None),
                               ("PATCH", f"/v1/numbers/{other}", {"persona": "Brief"}),
                               ("DELETE", f"/v1/numbers/byo/{other}", None),
                               ("POST", "/v1/numbers/byo", {"e164": numbers[2]})):
        refused = client.request(method, path, json=body, headers=restricted)
        assert refused.status_code == 403, (method, path, refused.text)
        assert error_code(refused) == "number_not_allowed"
    assert client.get(f"/v1/numbers/{other}", headers=tenant.headers).json()["persona"] is None


def test_another_tenants_number_is_not_found(client, container, fake, tenant, numbers):
    number = registered(client, tenant.headers, numbers[0])
    stranger = tenant_holding(client, container, fake, [numbers[1]])
    for method, path in (("GET", f"/v1/numbers/{number['id']}"), ("PATCH", f"/v1/numbers/{number['id']}"),
                         ("DELETE", f"/v1/numbers/byo/{number['id']}")):
        response = client.request(method, path, json={} if method == "PATCH" else None, headers=stranger.headers)
        assert response.status_code == 404 and error_code(response) == "number_not_found", method
    assert client.get("/v1/numbers", headers=stranger.headers).json() == []


def test_a_malformed_number_id_is_a_422_at_the_path(client, tenant):
    problem = only_problem(client.get("/v1/numbers/nope", headers=tenant.headers))
    assert (problem["loc"], problem["type"]) == (["path", "number_id"], "invalid_id")


def test_number_routes_need_the_numbers_write_scope(client, tenant, numbers):
    """SPEC.md Authentication §5 names numbers:write for PATCH; reads take it too (no numbers:read)."""
    number = registered(client, tenant.headers, numbers[0])
    others = scoped_key(client, tenant, ["calls:create", "calls:read", "providers:write", "webhooks:write"])
    for method, path, body in (("GET", "/v1/numbers", None), ("GET", f"/v1/numbers/{number['id']}", None),
                               ("PATCH", f"/v1/numbers/{number['id']}", {}),
                               ("POST", "/v1/numbers/byo", {"e164": numbers[1]}),
                               ("DELETE", f"/v1/numbers/byo/{number['id']}", None)):
        refused = client.request(method, path, json=body, headers=others)
        assert refused.status_code == 403 and error_code(refused) == "insufficient_scope", (method, path)


def test_a_number_restricted_key_never_dials_from_a_number_outside_its_list(client, tenant, numbers):
    """Issue 14 item 5: a key restricted to ``number_ids`` that creates a live call without
    ``from_number`` would have dialled from the tenant's caller number, whichever line it is. It
    is 403 unless that number is one of the key's; a batch the same; ``from_number`` of its own
    goes through."""
    caller, own = (registered(client, tenant.headers, e164) for e164 in numbers[:2])
    assert select_number(client, tenant.headers, caller["e164"]).status_code == 200
    created = client.post("/auth/api-keys", json={"scopes": ["calls:create"], "number_ids": [own["id"]]},
                          headers=tenant.headers)
    restricted = {"Authorization": f"Bearer {created.json()['secret']}"}
    live = call_body(mode="live", simulation=ABSENT)

    refused = client.post("/v1/calls", json=live, headers=restricted)
    assert refused.status_code == 403, refused.text
    assert error_code(refused) == "number_not_allowed"
    assert caller["e164"] in refused.json()["error"]["message"]
    batch = client.post("/v1/calls/batch", json=batch_body([{"to": LONDON}], mode="live", simulation=ABSENT),
                        headers=restricted)
    assert batch.status_code == 403, batch.text
    assert error_code(batch) == "number_not_allowed"

    assert client.post("/v1/calls", json={**live, "from_number": own["e164"]}, headers=restricted).status_code == 201
    allowed = client.post("/auth/api-keys", json={"scopes": ["calls:create"], "number_ids": [caller["id"]]},
                          headers=tenant.headers).json()["secret"]
    assert client.post("/v1/calls", json=live, headers={"Authorization": f"Bearer {allowed}"}).status_code == 201
    assert client.post("/v1/calls", json=live, headers=tenant.headers).status_code == 201  # unrestricted
