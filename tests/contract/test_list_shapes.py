"""Every list answers one shape: ``{data: [...], next_cursor}`` (plus ``total``, ``limit`` and
``offset`` where the list is offset-paged); ``GET /v1/numbers`` alone stays a bare array (SPEC.md
Numbers: "Returns an array of Number"). A paged list's ``next_cursor`` is accepted back as
``cursor`` and walks every row once; a list answered whole always says ``next_cursor: null``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from adapters.postgres.database import DatabaseConfig
from application.accounts import registration
from entrypoints.bootstrap import Container
from tests.fakes.receiver import Answer, Receiver
from tests.fakes.twilio.rest import FakeTwilio
from tests.support.call_requests import LONDON, LONDON_2, LONDON_3, call_body
from tests.support.push import devices_of
from tests.support.setup import PASSWORD, Account, new_tenant
from tests.support.shared_app import shared_app

# path (with {endpoint} for the webhook id), the key of the row's identity, and whether it is paged
PAGED = {
    "/v1/calls": "call_id",
    "/v1/audit-events": "id",
    "/v1/suppressions": "e164",
    "/v1/templates": "id",
    "/v1/flows": "id",
    "/v1/webhooks/{endpoint}/deliveries": "delivery_id",
    "/v1/calls/{call}/events": "seq",
    "/auth/api-keys/{key}/events": "seq",
    "/auth/api_keys/{key}/events": "seq",
    "/v1/push/subscriptions": "id",
}
WHOLE = ("/auth/api-keys", "/auth/api_keys", "/v1/webhooks", "/v1/admin/voice-model-stats")
OFFSET_PAGED = ("/v1/calls", "/v1/webhooks/{endpoint}/deliveries")
# paged by cursor alone: no offset parameter
KEYSET_ONLY = ("/v1/templates", "/v1/flows", "/v1/calls/{call}/events", "/auth/api-keys/{key}/events",
               "/auth/api_keys/{key}/events", "/v1/push/subscriptions")
PLACEHOLDERS = {"{endpoint}": "{endpoint_id}", "{call}": "{call_id}", "{key}": "{key_id}"}


@pytest.fixture(scope="module")
def setup(pg_server: DatabaseConfig, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    receiver = Receiver(default=Answer(200))
    flags = {"webhook_allow_private": True, "webhook_allow_http": True, "webhook_timeout_seconds": 0.5}
    try:
        with FakeTwilio() as carrier, shared_app(pg_server, tmp_path_factory.mktemp("var"), carrier,
                                                 **flags) as (client, container):
            tenant = new_tenant(client, container)
            devices_of(client, carrier, tenant, 3)
            endpoint = client.post("/v1/webhooks", json={"url": receiver.url}, headers=tenant.headers).json()
            key = client.post("/auth/api-keys", json={}, headers=tenant.headers).json()["key_id"]
            client.post(f"/auth/api-keys/{key}/rotate", headers=tenant.headers)
            client.delete(f"/auth/api-keys/{key}", headers=tenant.headers)  # issued, rotated, revoked
            calls = []
            for to in (LONDON, LONDON_2, LONDON_3):
                created = client.post("/v1/calls", json=call_body(to=to), headers=tenant.headers)
                assert created.status_code == 201
                calls.append(created.json()["call_id"])
                assert client.post("/v1/suppressions", json={"e164": to}, headers=tenant.headers).status_code == 201
                assert client.post("/v1/templates", headers=tenant.headers, json={
                    "name": to, "objective": "Ask", "outcome_schema": {"ok": {"type": "boolean"}}}).status_code == 201
                assert client.post("/v1/flows", headers=tenant.headers, json={
                    "name": to, "graph_json": {"start": "bye", "nodes": [{"id": "bye", "type": "end"}]}}).status_code == 201
            receiver.wait_for(3)
            admin = _admin(container)
            yield {"client": client, "tenant": tenant, "endpoint": endpoint["id"], "admin": admin, "call": calls[0],
                   "key": key}
    finally:
        receiver.close()


def _admin(container: Container) -> dict[str, str]:
    done = registration.register(container.accounts, email="lists-operator@example.com", password=PASSWORD,
                                 name=None, admin=True, by="cli")
    return {"Authorization": f"Bearer {done.key.secret}"}


def _get(setup: dict[str, Any], path: str, **params: Any) -> dict[str, Any]:
    tenant: Account = setup["tenant"]
    headers = setup["admin"] if path.startswith("/v1/admin") else tenant.headers
    response = setup["client"].get(_url(setup, path), params=params, headers=headers)
    assert response.status_code == 200, (path, response.text)
    body = response.json()
    assert isinstance(body["data"], list) and "next_cursor" in body, (path, body)
    return body


def _url(setup: dict[str, Any], path: str) -> str:
    return path.format(endpoint=setup["endpoint"], call=setup["call"], key=setup["key"])


def _settled(setup: dict[str, Any], path: str, rows: int) -> None:
    """Deliveries are written by the dispatcher, after the calls: wait for all of them."""
    deadline = time.monotonic() + 10
    while len(_get(setup, path, limit=100)["data"]) < rows and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.parametrize("path", WHOLE)
def test_a_list_answered_whole_has_data_and_a_null_next_cursor(setup, path):
    body = _get(setup, path)
    assert body["data"] and body["next_cursor"] is None


@pytest.mark.parametrize("path", list(PAGED))
def test_a_paged_list_walks_every_row_once_through_next_cursor(setup, path):
    _settled(setup, path, 3)
    everything = [row[PAGED[path]] for row in _get(setup, path, limit=100)["data"]]
    assert len(everything) >= 3 and _get(setup, path, limit=100)["next_cursor"] is None

    pages, cursor = [], None
    while True:
        body = _get(setup, path, limit=2, **({"cursor": cursor} if cursor else {}))
        if path in OFFSET_PAGED:
            assert {"total", "limit", "offset"} <= set(body) and body["total"] == len(everything)
        pages.append([row[PAGED[path]] for row in body["data"]])
        cursor = body["next_cursor"]
        if cursor is None:
            break
        assert isinstance(cursor, str) and len(pages) < 10
    assert len(pages) >= 2 and [key for page in pages for key in page] == everything


@pytest.mark.parametrize("path", [p for p in PAGED if p != "/v1/audit-events"])
def test_a_cursor_of_another_list_or_beside_an_offset_is_422(setup, path):
    other = _get(setup, "/v1/calls" if path != "/v1/calls" else "/v1/suppressions", limit=1)["next_cursor"]
    client, headers = setup["client"], setup["tenant"].headers
    url = _url(setup, path)
    checks = [({"cursor": other}, "cursor"), ({"cursor": "%%%"}, "cursor")]
    if path not in KEYSET_ONLY:  # a list that takes no offset has none to refuse
        checks.append(({"cursor": _get(setup, path, limit=1)["next_cursor"], "offset": 1}, "offset"))
    for params, loc in checks:
        response = client.get(url, params=params, headers=headers)
        assert response.status_code == 422, (params, response.text)
        assert response.json()["detail"][0]["loc"] == ["query", loc]


def test_old_fields_stay_beside_data_for_one_release(setup):
    audit = _get(setup, "/v1/audit-events")
    assert audit["items"] == audit["data"]
    keys = _get(setup, "/auth/api-keys")
    assert keys["items"] == keys["data"]
    stats = _get(setup, "/v1/admin/voice-model-stats")
    assert stats["engines"] == stats["data"]


def test_numbers_stay_a_bare_array(setup):
    response = setup["client"].get("/v1/numbers", headers=setup["tenant"].headers)
    assert response.status_code == 200 and isinstance(response.json(), list)


def test_openapi_documents_data_and_next_cursor_for_every_list(setup):
    document = setup["client"].get("/schema/openapi.json").json()
    schemas = document["components"]["schemas"]
    lists = set()
    for path, item in document["paths"].items():
        answer = item.get("get", {}).get("responses", {}).get("200", {})
        schema = answer.get("content", {}).get("application/json", {}).get("schema", {})
        if "$ref" in schema:
            schema = schemas[schema["$ref"].rsplit("/", 1)[1]]
        if schema.get("type") == "array":
            assert path == "/v1/numbers", path  # the only bare array
        elif "data" in schema.get("properties", {}):
            assert {"data", "next_cursor"} <= set(schema["properties"]) and schema["properties"]["data"]["type"] == "array"
            lists.add(path)
    expected = set()
    for path in (p for p in (*PAGED, *WHOLE) if not p.startswith("/auth/api_keys")):  # aliases: not documented
        for short, name in PLACEHOLDERS.items():
            path = path.replace(short, name)
        expected.add(path)
    assert lists == expected
