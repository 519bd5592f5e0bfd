"""``GET``, ``PATCH /v1/webhooks/{id}`` and ``POST /v1/webhooks/{id}/rotate-secret`` (SPEC.md Webhook
endpoint; ARCHITECTURE.md §9): shapes, scopes, other tenants' ids, 422s, the secret shown once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.fakes.receiver import Receiver
from tests.support.call_requests import error_code, only_problem, problems
from tests.support.setup import Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures

APP_SETTINGS = {"webhook_allow_private": True, "webhook_allow_http": True, "webhook_timeout_seconds": 0.5}
FIELDS = {"id", "url", "description", "events", "created_at", "active", "deleted_at", "disabled",
          "rotation_grace_ends_at"}


@pytest.fixture
def tenant(client, container) -> Account:  # noqa: F811
    return new_tenant(client, container)


@pytest.fixture(scope="module")
def hook() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.close()


def register(client, tenant: Account, url: str, **extra: Any) -> dict[str, Any]:  # noqa: F811
    response = client.post("/v1/webhooks", json={"url": url, **extra}, headers=tenant.headers)
    assert response.status_code == 201, response.text
    return response.json()


def test_an_endpoint_is_read_by_its_id_without_its_secret(client, tenant, hook):  # noqa: F811
    created = register(client, tenant, hook.url, description="orders")

    read = client.get(f"/v1/webhooks/{created['id']}", headers=tenant.headers)

    assert read.status_code == 200, read.text
    body = read.json()
    assert set(body) == FIELDS and created["secret"] not in read.text
    assert {k: body[k] for k in ("id", "url", "description", "events", "active", "disabled")} == {
        "id": created["id"], "url": hook.url, "description": "orders", "events": ["call.completed"], "active": True,
        "disabled": None}
    assert body["created_at"].endswith("Z") or body["created_at"].endswith("+00:00")


def test_patch_changes_only_the_fields_sent_and_null_clears_the_description(client, tenant, hook):  # noqa: F811
    created = register(client, tenant, hook.url, description="orders")

    renamed = client.patch(f"/v1/webhooks/{created['id']}", json={"description": "billing"}, headers=tenant.headers)
    moved = client.patch(f"/v1/webhooks/{created['id']}", json={"url": hook.url + "/v2"}, headers=tenant.headers)
    cleared = client.patch(f"/v1/webhooks/{created['id']}", json={"description": None}, headers=tenant.headers)

    assert renamed.status_code == moved.status_code == cleared.status_code == 200, cleared.text
    assert (renamed.json()["description"], renamed.json()["url"]) == ("billing", hook.url)
    assert (moved.json()["description"], moved.json()["url"]) == ("billing", hook.url + "/v2")
    assert (cleared.json()["description"], cleared.json()["url"]) == (None, hook.url + "/v2")
    assert client.get(f"/v1/webhooks/{created['id']}", headers=tenant.headers).json() == cleared.json()


def test_patch_active_false_disables_and_true_reenables(client, tenant, hook):  # noqa: F811
    created = register(client, tenant, hook.url)

    off = client.patch(f"/v1/webhooks/{created['id']}", json={"active": False}, headers=tenant.headers).json()
    on = client.patch(f"/v1/webhooks/{created['id']}", json={"active": True}, headers=tenant.headers).json()

    assert off["active"] is False and off["disabled"]["code"] == "disabled_by_request" and off["disabled"]["at"]
    assert on["active"] is True and on["disabled"] is None


def test_patch_refuses_unknown_fields_nulls_bad_events_and_local_urls_listing_every_problem(client, tenant,  # noqa: F811
                                                                                            hook):
    created = register(client, tenant, hook.url)
    path = f"/v1/webhooks/{created['id']}"

    several = problems(client.patch(path, json={"colour": "red", "url": None, "active": None}, headers=tenant.headers))
    events = only_problem(client.patch(path, json={"events": ["call.started"]}, headers=tenant.headers))
    metadata = only_problem(client.patch(path, json={"url": "http://169.254.169.254/x"}, headers=tenant.headers))

    assert sorted(tuple(p["loc"]) for p in several) == [("body", "active"), ("body", "colour"), ("body", "url")]
    assert (events["loc"], events["type"]) == (["body", "events"], "unknown_event")
    assert (metadata["loc"], metadata["type"]) == (["body", "url"], "webhook_url_metadata")


def test_a_local_url_refused_in_production_names_the_development_flags(pg_server, tmp_path):
    from tests.support.shared_app import shared_app

    with shared_app(pg_server, tmp_path / "strict") as (strict, container):
        tenant = new_tenant(strict, container)
        private = only_problem(strict.post("/v1/webhooks", json={"url": "https://127.0.0.1/hook"},
                                           headers=tenant.headers))
        plain = only_problem(strict.post("/v1/webhooks", json={"url": "http://example.com/hook"},
                                         headers=tenant.headers))

    assert private["type"] == "webhook_url_private_address" and "CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=1" in private["msg"]
    assert plain["type"] == "webhook_url_not_https" and "CALLWRIGHT_WEBHOOK_ALLOW_HTTP=1" in plain["msg"]


def test_rotation_shows_a_new_secret_once_and_keeps_it_sealed(client, container, tenant, hook):  # noqa: F811
    created = register(client, tenant, hook.url)

    rotated = client.post(f"/v1/webhooks/{created['id']}/rotate-secret", headers=tenant.headers)

    assert rotated.status_code == 201, rotated.text
    body = rotated.json()
    assert body["secret"].startswith("whsec_") and body["secret"] != created["secret"]
    assert set(body) == FIELDS | {"secret"} and body["rotation_grace_ends_at"]
    read = client.get(f"/v1/webhooks/{created['id']}", headers=tenant.headers)
    assert body["secret"] not in read.text and read.json()["rotation_grace_ends_at"] == body[
        "rotation_grace_ends_at"]
    with psycopg.connect(container.database.conninfo()) as conn:
        rows = conn.execute("SELECT state FROM calling_events").fetchall()
    assert not any(s.encode() in bytes(row[0]) for row in rows for s in (body["secret"], created["secret"]))


def test_other_tenants_ids_are_unknown_and_deleted_endpoints_cannot_change(client, container, tenant, hook):  # noqa: F811
    created = register(client, tenant, hook.url)
    other = new_tenant(client, container)
    path = f"/v1/webhooks/{created['id']}"

    assert client.get(path, headers=other.headers).status_code == 404
    assert error_code(client.patch(path, json={"description": "x"}, headers=other.headers)) == "webhook_not_found"
    assert client.post(f"{path}/rotate-secret", headers=other.headers).status_code == 404
    assert client.get("/v1/webhooks/wh_nope", headers=tenant.headers).status_code == 422
    client.delete(path, headers=tenant.headers)
    assert client.get(path, headers=tenant.headers).json()["deleted_at"]
    assert error_code(client.patch(path, json={"active": True}, headers=tenant.headers)) == "webhook_deleted"
    assert error_code(client.post(f"{path}/rotate-secret", headers=tenant.headers)) == "webhook_deleted"


def test_reading_needs_webhooks_read_and_changing_webhooks_write(client, tenant, hook):  # noqa: F811
    created = register(client, tenant, hook.url)
    reader = scoped_key(client, tenant, ["webhooks:read"])
    writer = scoped_key(client, tenant, ["webhooks:write"])
    path = f"/v1/webhooks/{created['id']}"

    assert client.get(path, headers=writer).status_code == 403
    assert client.patch(path, json={"description": "x"}, headers=reader).status_code == 403
    assert client.post(f"{path}/rotate-secret", headers=reader).status_code == 403
    assert client.get(path, headers=reader).status_code == 200
    assert client.patch(path, json={"description": "x"}, headers=writer).status_code == 200
    assert client.post(f"{path}/rotate-secret", headers=writer).status_code == 201


def test_the_new_routes_are_typed_in_the_openapi_document(client):  # noqa: F811
    paths = client.get("/schema/openapi.json").json()["paths"]

    one, rotate = paths["/v1/webhooks/{endpoint_id}"], paths["/v1/webhooks/{endpoint_id}/rotate-secret"]
    assert {"get", "patch", "delete"} <= set(one)
    assert {"200", "404", "422"} <= set(one["get"]["responses"]) and {"200", "409", "422"} <= set(
        one["patch"]["responses"])
    assert {"201", "404", "409"} <= set(rotate["post"]["responses"])
    assert "requestBody" in one["patch"]
