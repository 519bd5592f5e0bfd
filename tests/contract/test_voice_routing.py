"""Voice engine A/B routing over HTTP: ``/v1/tenants/me`` (SPEC.md Tenant: ``voice_engine_default``,
``voice_ab_disabled``), the admin-only ``/v1/admin/system-defaults`` and ``/v1/admin/voice-model-stats``
(SPEC.md Endpoints › Other endpoints named; ARCHITECTURE.md §8), and the engine a created call gets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from litestar.testing import TestClient

from application.accounts import registration
from domain.calls.engine_choice import VoiceDefaults, VoiceRouting, weights_from
from entrypoints.bootstrap import Container
from tests.support.call_requests import (
    LONDON,
    LONDON_2,
    call_body,
    error_code,
    only_problem,
    problems,
    wait_until_ended,
)
from tests.support.setup import PASSWORD, Account, new_tenant, scoped_key, signup
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures

DEFAULTS = {"voice_engine_default": "alpha_25", "voice_ab_weights": {"alpha_25": 1.0, "alpha_31": 1.0}}


@dataclass(frozen=True)
class Operator:
    headers: dict[str, str]
    key_id: str


@pytest.fixture(scope="module")
def admin(container: Container) -> Operator:
    done = registration.register(container.accounts, email="voice-ops@example.com", password=PASSWORD, name=None,
                                 admin=True, by="cli")
    return Operator({"Authorization": f"Bearer {done.key.secret}"}, done.key.key_id)


@pytest.fixture
def tenant(client: TestClient[Any], container: Container) -> Account:
    return new_tenant(client, container)


@pytest.fixture
def system_defaults(client: TestClient[Any], admin: Operator):
    """Tests that change the system defaults put the built-in ones back."""
    yield
    restored = client.patch("/v1/admin/system-defaults", json=DEFAULTS, headers=admin.headers)
    assert restored.status_code == 200, restored.text


def settings_of(client: TestClient[Any], headers: dict[str, str]) -> dict[str, Any]:
    response = client.get("/v1/tenants/me", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def created_engine(client: TestClient[Any], tenant: Account, **overrides: Any) -> tuple[str, str]:
    response = client.post("/v1/calls", json=call_body(**overrides), headers=tenant.headers)
    assert response.status_code == 201, response.text
    call_id = response.json()["call_id"]
    record = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()
    return call_id, record["voice_engine"]


# --- /v1/tenants/me ---------------------------------------------------------------------------------


def test_a_new_tenant_has_no_default_engine_and_ab_routing_on(client, tenant):
    assert settings_of(client, tenant.headers) == {
        "tenant_id": tenant.tenant_id, "voice_engine_default": None, "voice_ab_disabled": False}


def test_patch_sets_the_given_fields_and_answers_the_whole_settings(client, tenant):
    changed = client.patch("/v1/tenants/me", json={"voice_engine_default": "beta_think_fast"}, headers=tenant.headers)
    assert changed.status_code == 200, changed.text
    assert changed.json() == {"tenant_id": tenant.tenant_id, "voice_engine_default": "beta_think_fast",
                              "voice_ab_disabled": False}

    switched = client.patch("/v1/tenants/me", json={"voice_ab_disabled": True}, headers=tenant.headers).json()
    assert switched == {"tenant_id": tenant.tenant_id, "voice_engine_default": "beta_think_fast",
                        "voice_ab_disabled": True}
    assert settings_of(client, tenant.headers) == switched

    cleared = client.patch("/v1/tenants/me", json={"voice_engine_default": None}, headers=tenant.headers).json()
    assert cleared["voice_engine_default"] is None and cleared["voice_ab_disabled"] is True


@pytest.mark.parametrize(("body", "loc", "kind"), [
    ({"voice_engine_default": "gamma_9"}, ["body", "voice_engine_default"], "literal_error"),
    ({"voice_engine_default": 25}, ["body", "voice_engine_default"], "literal_error"),
    ({"voice_ab_disabled": "yes"}, ["body", "voice_ab_disabled"], "bool_type"),
    ({"voice_ab_disabled": None}, ["body", "voice_ab_disabled"], "bool_type"),
    ({"voice_engine": "alpha_31"}, ["body", "voice_engine"], "extra_forbidden"),
])
def test_unknown_values_are_422_naming_the_field(client, tenant, body, loc, kind):
    problem = only_problem(client.patch("/v1/tenants/me", json=body, headers=tenant.headers))
    assert (problem["loc"], problem["type"]) == (loc, kind)
    assert settings_of(client, tenant.headers)["voice_ab_disabled"] is False  # nothing changed


def test_every_problem_of_a_patch_is_listed(client, tenant):
    found = problems(client.patch("/v1/tenants/me", json={"voice_engine_default": "x", "voice_ab_disabled": 3},
                                  headers=tenant.headers))
    assert sorted(p["loc"][-1] for p in found) == ["voice_ab_disabled", "voice_engine_default"]


def test_the_settings_need_the_tenants_write_scope(client, tenant):
    """decisions.md 27: an additive scope, held by every all-permissions key."""
    caller = scoped_key(client, tenant, ["calls:create", "calls:read"])
    for method in ("GET", "PATCH"):
        refused = client.request(method, "/v1/tenants/me", json={"voice_ab_disabled": True} if method == "PATCH"
                                 else None, headers=caller)
        assert refused.status_code == 403 and error_code(refused) == "insufficient_scope"
    settings_key = scoped_key(client, tenant, ["tenants:write"])
    assert client.patch("/v1/tenants/me", json={"voice_ab_disabled": True}, headers=settings_key).status_code == 200
    assert settings_of(client, tenant.headers)["voice_ab_disabled"] is True


def test_a_pending_tenant_cannot_change_its_settings(client):
    pending = signup(client)
    response = client.patch("/v1/tenants/me", json={"voice_ab_disabled": True}, headers=pending.headers)
    assert response.status_code == 403 and error_code(response) == "account_pending_review"


def test_a_change_is_in_the_tenants_audit_trail(client, tenant):
    client.patch("/v1/tenants/me", json={"voice_engine_default": "alpha_31", "voice_ab_disabled": True},
                 headers=tenant.headers)
    trail = client.get("/v1/audit-events", params={"type": "tenant.voice_settings_changed"}, headers=tenant.headers)
    assert trail.status_code == 200, trail.text
    [item] = trail.json()["items"]
    assert (item["actor"], item["subject"]) == (tenant.key_id, tenant.tenant_id)
    assert item["data"] == {"voice_engine_default": "alpha_31", "voice_ab_disabled": True}


# --- the engine a call gets ---------------------------------------------------------------------------


def test_a_call_without_an_engine_gets_the_ab_engine_of_its_id(client, tenant):
    seen: set[str] = set()
    for _ in range(40):
        call_id, engine = created_engine(client, tenant)
        assert engine == VoiceRouting().engine_for(call_id)  # built-in weights: alpha_25 1 : alpha_31 1
        seen.add(engine)
        if seen == {"alpha_25", "alpha_31"}:
            break
    assert seen == {"alpha_25", "alpha_31"}


def test_the_kill_switch_pins_the_default_engine(client, tenant):
    client.patch("/v1/tenants/me", json={"voice_ab_disabled": True}, headers=tenant.headers)
    assert {created_engine(client, tenant)[1] for _ in range(8)} == {"alpha_25"}  # the system default

    client.patch("/v1/tenants/me", json={"voice_engine_default": "beta_think_fast"}, headers=tenant.headers)
    assert {created_engine(client, tenant)[1] for _ in range(8)} == {"beta_think_fast"}
    assert created_engine(client, tenant, voice_engine="alpha_31")[1] == "alpha_31"  # the request wins

    batch = client.post("/v1/calls/batch", headers=tenant.headers, json={
        "objective": "Confirm", "outcome_schema": {"ok": {"type": "boolean"}}, "consent_type": "prior_express",
        "mode": "simulated", "items": [{"to": LONDON}, {"to": LONDON_2}]})
    assert batch.status_code == 207, batch.text
    for item in batch.json()["items"]:
        assert client.get(f"/v1/calls/{item['call_id']}", headers=tenant.headers).json()["voice_engine"] == \
            "beta_think_fast"


def test_system_weights_route_every_tenant_with_ab_on(client, tenant, admin, system_defaults):
    changed = client.patch("/v1/admin/system-defaults", json={"voice_ab_weights": {"beta_think_fast": 1}},
                           headers=admin.headers)
    assert changed.status_code == 200, changed.text
    client.patch("/v1/tenants/me", json={"voice_engine_default": "alpha_31"}, headers=tenant.headers)
    # A/B on: the tenant's default is not used (decisions.md 27)
    assert {created_engine(client, tenant)[1] for _ in range(6)} == {"beta_think_fast"}


# --- /v1/admin/system-defaults ----------------------------------------------------------------------------


def test_system_defaults_start_as_the_built_in_ones(client, admin):
    response = client.get("/v1/admin/system-defaults", headers=admin.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert {k: body[k] for k in DEFAULTS} == DEFAULTS
    assert set(body) == {"voice_engine_default", "voice_ab_weights", "updated_at", "updated_by"}


def test_an_admin_changes_the_system_defaults(client, admin, system_defaults):
    changed = client.patch("/v1/admin/system-defaults", headers=admin.headers, json={
        "voice_engine_default": "alpha_31", "voice_ab_weights": {"alpha_25": 3, "alpha_31": 1, "beta_think_fast": 0}})
    assert changed.status_code == 200, changed.text
    expected = {"voice_engine_default": "alpha_31", "voice_ab_weights": {"alpha_25": 3.0, "alpha_31": 1.0},
                "updated_at": "2026-11-02T12:00:00Z", "updated_by": admin.key_id}
    assert changed.json() == expected
    assert client.get("/v1/admin/system-defaults", headers=admin.headers).json() == expected

    only_engine = client.patch("/v1/admin/system-defaults", json={"voice_engine_default": "beta_think_fast"},
                               headers=admin.headers).json()
    assert only_engine["voice_ab_weights"] == {"alpha_25": 3.0, "alpha_31": 1.0}  # left out: kept
    assert VoiceDefaults(voice_engine_default="beta_think_fast",
                         voice_ab_weights=weights_from(only_engine["voice_ab_weights"])).weights_dict() == \
        only_engine["voice_ab_weights"]


@pytest.mark.parametrize(("body", "loc", "kind"), [
    ({"voice_ab_weights": {"alpha_25": 0, "alpha_31": 0}}, ["body", "voice_ab_weights"], "value_error"),
    ({"voice_ab_weights": {}}, ["body", "voice_ab_weights"], "value_error"),
    ({"voice_ab_weights": {"alpha_25": -1}}, ["body", "voice_ab_weights", "alpha_25"], "greater_than_equal"),
    ({"voice_ab_weights": {"alpha_25": "1"}}, ["body", "voice_ab_weights", "alpha_25"], "float_type"),
    ({"voice_ab_weights": {"gamma": 1}}, ["body", "voice_ab_weights", "gamma", "[key]"], "literal_error"),
    ({"voice_engine_default": "gamma"}, ["body", "voice_engine_default"], "literal_error"),
    ({"voice_engine_default": None}, ["body", "voice_engine_default"], "literal_error"),
    ({"weights": {"alpha_25": 1}}, ["body", "weights"], "extra_forbidden"),
])
def test_bad_system_defaults_are_422_in_the_spec_shape(client, admin, body, loc, kind):
    problem = only_problem(client.patch("/v1/admin/system-defaults", json=body, headers=admin.headers))
    assert (problem["loc"], problem["type"]) == (loc, kind)


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/v1/admin/system-defaults"),
    ("PATCH", "/v1/admin/system-defaults"),
    ("GET", "/v1/admin/voice-model-stats"),
])
def test_admin_routes_refuse_tenant_keys(client, tenant, method, path):
    response = client.request(method, path, headers=tenant.headers,
                              json={"voice_engine_default": "alpha_31"} if method == "PATCH" else None)
    assert response.status_code == 403, response.text
    assert error_code(response) == "admin_required"


# --- /v1/admin/voice-model-stats ---------------------------------------------------------------------------


def test_voice_model_stats_count_terminal_calls_per_engine(client, container, admin):
    before = {row["voice_engine"]: row for row in client.get(
        "/v1/admin/voice-model-stats", headers=admin.headers).json()["engines"]}
    tenant = new_tenant(client, container)
    made = [
        created_engine(client, tenant, voice_engine="alpha_31")[0],
        created_engine(client, tenant, voice_engine="alpha_31")[0],
        created_engine(client, tenant, voice_engine="alpha_31", to=LONDON_2,
                       simulation={"answered_by": "machine_start"})[0],
    ]
    for call_id in made:
        assert wait_until_ended(client, tenant.headers, call_id)["status"] in ("completed", "failed")

    response = client.get("/v1/admin/voice-model-stats", params={"days": 7}, headers=admin.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["days"] == 7 and (body["since"], body["until"]) == ("2026-10-27", "2026-11-02")
    engines = {row["voice_engine"]: row for row in body["engines"]}
    assert {"alpha_25", "alpha_31", "beta_think_fast"} <= set(engines)
    row = engines["alpha_31"]
    assert set(row) >= {"voice_engine", "calls", "completed", "completion_rate", "mean_confidence",
                        "p50_duration_seconds", "p95_duration_seconds", "cost_per_call"}
    previous = before.get("alpha_31", {"calls": 0, "completed": 0})
    assert row["calls"] - previous["calls"] == 3
    assert row["completed"] - previous["completed"] == 2
    if previous["calls"] == 0:
        assert row["completion_rate"] == pytest.approx(2 / 3, abs=1e-4)
        assert row["mean_confidence"] == 1.0
        assert row["cost_per_call"] == "0.0000"  # simulated calls spend no voice minutes
    assert isinstance(row["cost_per_call"], str)


@pytest.mark.parametrize("query", ["days=0", "days=366", "days=ten", "mode=carrier"])
def test_voice_model_stats_refuse_bad_queries(client, admin, query):
    response = client.get(f"/v1/admin/voice-model-stats?{query}", headers=admin.headers)
    problem = only_problem(response)
    assert problem["loc"] == ["query", query.split("=")[0]]


def test_voice_model_stats_default_to_thirty_days(client, admin):
    body = client.get("/v1/admin/voice-model-stats", headers=admin.headers).json()
    assert body["days"] == 30 and body["since"] == "2026-10-04"
