"""Templates (SPEC.md Template; issue 15 item 1; docs/templates.md) over HTTP: define, list newest
first with a cursor, read, soft-delete; ``template_id`` on a call and a batch fills what the
request leaves out, the request wins where both give a value, and the record names the template."""

from __future__ import annotations

import time
from typing import Any

import pytest

from application.accounts import registration
from domain.accounts import scopes
from tests.support.call_requests import ABSENT, LONDON, batch_body, call_body, error_code, only_problem, problems
from tests.support.setup import PASSWORD, Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container  # noqa: F401 - fixtures

SCHEMA = {"confirmed": {"type": "boolean"}, "slot": {"type": "enum", "values": ["am", "pm"], "optional": True}}
BODY = {"name": "Appointment check", "objective": "Confirm tomorrow's appointment", "outcome_schema": SCHEMA,
        "description": "Reminder calls", "context": "The clinic opens at 9.", "tools": [{"name": "transfer_call"}],
        "consent_type": "prior_express", "language": "en-GB"}


@pytest.fixture
def tenant(client, container) -> Account:
    return new_tenant(client, container)


def define(client, tenant: Account, **body: Any) -> dict[str, Any]:
    created = client.post("/v1/templates", json={**BODY, **body}, headers=tenant.headers)
    assert created.status_code == 201, created.text
    return created.json()


def finished(client, tenant: Account, call_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        record = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()
        if record["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return record
        time.sleep(0.02)


def test_a_template_is_defined_with_every_field_and_read_back(client, tenant):
    template = define(client, tenant)

    assert template["id"].startswith("tpl_") and len(template["id"]) == 36
    assert {k: template[k] for k in BODY} == {**BODY, "outcome_schema": {
        "confirmed": {"type": "boolean", "optional": False},
        "slot": {"type": "enum", "values": ["am", "pm"], "optional": True}}}
    assert template["voice_engine"] == "alpha_25" and template["created_at"].endswith("Z")
    assert client.get(f"/v1/templates/{template['id']}", headers=tenant.headers).json() == template


def test_only_name_objective_and_outcome_schema_are_required_and_defaults_fill_the_rest(client, tenant):
    minimal = {"name": "Min", "objective": "Ask", "outcome_schema": {"ok": {"type": "boolean"}}}
    created = client.post("/v1/templates", json=minimal, headers=tenant.headers)
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["language"], body["tools"], body["consent_type"], body["context"]) == ("en-US", [], None, None)
    missing = client.post("/v1/templates", json={"description": "x"}, headers=tenant.headers)
    assert sorted(p["loc"][-1] for p in problems(missing)) == ["name", "objective", "outcome_schema"]


def test_a_template_without_voice_engine_holds_the_workspace_default_of_its_creation(client, container, tenant):
    """SPEC.md Template: ``voice_engine`` "defaults to the workspace default" (the tenant's
    ``voice_engine_default``, else the system default). It is fixed when the template is defined:
    the create answer, the list and the single read show it, a later change of either default
    leaves the template as it was, and calls made from the template get that engine."""
    admin = registration.register(container.accounts, email="templates-ops@example.com", password=PASSWORD,
                                  name=None, admin=True, by="cli")
    operator = {"Authorization": f"Bearer {admin.key.secret}"}
    built_in = define(client, tenant, name="Built-in default")  # neither the tenant nor the operator set one
    try:
        changed = client.patch("/v1/admin/system-defaults", json={"voice_engine_default": "alpha_31"},
                               headers=operator)
        assert changed.status_code == 200, changed.text
        system = define(client, tenant, name="System default")
        assert client.patch("/v1/tenants/me", json={"voice_engine_default": "beta_think_fast"},
                            headers=tenant.headers).status_code == 200
        workspace = define(client, tenant, name="Workspace default")
        chosen = define(client, tenant, name="Chosen", voice_engine="alpha_31")
        assert client.patch("/v1/tenants/me", json={"voice_engine_default": "alpha_25"},
                            headers=tenant.headers).status_code == 200
    finally:
        restored = client.patch("/v1/admin/system-defaults", json={"voice_engine_default": "alpha_25"},
                                headers=operator)
        assert restored.status_code == 200, restored.text

    expected = {built_in["id"]: "alpha_25", system["id"]: "alpha_31", workspace["id"]: "beta_think_fast",
                chosen["id"]: "alpha_31"}
    assert {t["id"]: t["voice_engine"] for t in (built_in, system, workspace, chosen)} == expected
    listed = client.get("/v1/templates", params={"limit": 200}, headers=tenant.headers).json()["data"]
    assert {t["id"]: t["voice_engine"] for t in listed if t["id"] in expected} == expected
    for template_id, engine in expected.items():
        read = client.get(f"/v1/templates/{template_id}", headers=tenant.headers).json()
        assert read["voice_engine"] == engine, read

    created = client.post("/v1/calls", json=call_body(template_id=workspace["id"]), headers=tenant.headers)
    assert created.status_code == 201, created.text
    record = client.get(f"/v1/calls/{created.json()['call_id']}", headers=tenant.headers).json()
    assert (record["template_id"], record["voice_engine"]) == (workspace["id"], "beta_think_fast")


@pytest.mark.parametrize("body,loc,kind", [
    ({"outcome_schema": {"Bad Name": {"type": "string"}}}, ["body", "outcome_schema"], None),
    ({"consent_type": "whenever"}, ["body", "consent_type"], "invalid_consent_type"),
    ({"tools": [{"name": "launch_rocket"}]}, ["body", "tools", 0, "name"], None),
    ({"voice_engine": "gamma"}, ["body", "voice_engine"], None),
    ({"name": "   "}, ["body", "name"], None),
    ({"colour": "red"}, ["body", "colour"], "extra_forbidden"),
])
def test_a_bad_template_is_a_422_naming_the_field(client, tenant, body, loc, kind):
    problem = problems(client.post("/v1/templates", json={**BODY, **body}, headers=tenant.headers))[0]
    assert problem["loc"][:len(loc)] == loc, problem
    assert kind is None or problem["type"] == kind


def test_the_list_is_newest_first_with_a_cursor_and_leaves_deleted_ones_out(client, tenant):
    made = [define(client, tenant, name=f"T{n}")["id"] for n in range(5)]
    client.delete(f"/v1/templates/{made[2]}", headers=tenant.headers)

    first = client.get("/v1/templates", params={"limit": 2}, headers=tenant.headers).json()
    second = client.get("/v1/templates", params={"limit": 2, "cursor": first["next_cursor"]},
                        headers=tenant.headers).json()

    assert [t["id"] for t in first["data"]] == [made[4], made[3]]
    assert [t["id"] for t in second["data"]] == [made[1], made[0]] and second["next_cursor"] is None
    assert set(first) == {"data", "next_cursor"}


def test_a_deleted_template_reads_404_and_another_tenants_is_the_same_404(client, container, tenant):
    template = define(client, tenant)
    other = new_tenant(client, container)

    assert error_code(client.get(f"/v1/templates/{template['id']}", headers=other.headers)) == "template_not_found"
    assert client.delete(f"/v1/templates/{template['id']}", headers=other.headers).status_code == 404
    assert client.delete(f"/v1/templates/{template['id']}", headers=tenant.headers).status_code == 204
    gone = client.get(f"/v1/templates/{template['id']}", headers=tenant.headers)
    assert (gone.status_code, error_code(gone)) == (404, "template_not_found")
    assert client.delete(f"/v1/templates/{template['id']}", headers=tenant.headers).status_code == 404
    assert only_problem(client.get("/v1/templates/tpl_nope", headers=tenant.headers))["type"] == "invalid_id"


def test_a_call_takes_what_it_leaves_out_from_the_template_and_its_own_values_win(client, tenant):
    template = define(client, tenant)
    body = call_body(objective=ABSENT, outcome_schema=ABSENT, consent_type=ABSENT, template_id=template["id"],
                     variables={"name": "Ada"}, simulation={"facts": {"confirmed": True, "slot": "pm"}})
    created = client.post("/v1/calls", json=body, headers=tenant.headers)
    assert created.status_code == 201, created.text

    record = finished(client, tenant, created.json()["call_id"])

    assert (record["status"], record["template_id"], record["objective"]) == (
        "completed", template["id"], BODY["objective"]), record
    assert (record["consent_type"], record["language"], record["outcome"]) == (
        "prior_express", "en-GB", {"confirmed": True, "slot": "pm"})
    assert record["variables"] == {"name": "Ada", "context": "The clinic opens at 9."}

    own = client.post("/v1/calls", json=call_body(template_id=template["id"], objective="My own objective",
                                                  language="fr-FR"), headers=tenant.headers)
    record = client.get(f"/v1/calls/{own.json()['call_id']}", headers=tenant.headers).json()
    assert (record["objective"], record["language"], record["outcome_schema"]) == (
        "My own objective", "fr-FR", {"confirmed": {"type": "boolean", "optional": False}})


def test_a_call_without_objective_or_schema_needs_a_template(client, tenant):
    found = problems(client.post("/v1/calls", json=call_body(objective=ABSENT, outcome_schema=ABSENT),
                                 headers=tenant.headers))
    assert sorted((tuple(p["loc"]), p["type"]) for p in found) == [
        (("body", "objective"), "missing"), (("body", "outcome_schema"), "missing")]


def test_a_deleted_or_foreign_template_on_a_call_is_a_422_at_template_id(client, container, tenant):
    template = define(client, tenant)
    other = new_tenant(client, container)
    foreign = only_problem(client.post("/v1/calls", json=call_body(template_id=template["id"]), headers=other.headers))
    assert (foreign["loc"], foreign["type"]) == (["body", "template_id"], "template_not_found")
    client.delete(f"/v1/templates/{template['id']}", headers=tenant.headers)
    deleted = only_problem(client.post("/v1/calls", json=call_body(template_id=template["id"]), headers=tenant.headers))
    assert deleted["type"] == "template_not_found"


def test_a_batch_takes_the_template_for_every_item(client, tenant):
    template = define(client, tenant)
    body = batch_body([{"to": LONDON}, {"to": "+442079460123"}], objective=ABSENT, outcome_schema=ABSENT,
                      consent_type=ABSENT, template_id=template["id"])
    answered = client.post("/v1/calls/batch", json=body, headers=tenant.headers)
    assert answered.status_code == 207 and answered.json()["accepted"] == 2, answered.text
    for item in answered.json()["items"]:
        record = client.get(f"/v1/calls/{item['call_id']}", headers=tenant.headers).json()
        assert (record["template_id"], record["objective"]) == (template["id"], BODY["objective"])


def test_templates_take_their_own_scopes(client, tenant):
    template = define(client, tenant)
    reader = scoped_key(client, tenant, [scopes.TEMPLATES_READ])
    writer = scoped_key(client, tenant, [scopes.TEMPLATES_WRITE])
    calls_only = scoped_key(client, tenant, [scopes.CALLS_CREATE, scopes.CALLS_READ])

    assert client.get(f"/v1/templates/{template['id']}", headers=reader).status_code == 200
    assert client.get("/v1/templates", headers=reader).status_code == 200
    assert client.post("/v1/templates", json=BODY, headers=reader).status_code == 403
    assert client.delete(f"/v1/templates/{template['id']}", headers=reader).status_code == 403
    assert client.post("/v1/templates", json=BODY, headers=writer).status_code == 201
    assert client.get("/v1/templates", headers=calls_only).status_code == 403
    # A call may name a template with calls:create alone: the template is the tenant's configuration.
    assert client.post("/v1/calls", json=call_body(template_id=template["id"]), headers=calls_only).status_code == 201
