"""A key's history and the key as of an instant (issue 17 item 2; docs/audit.md "Histories"):
issued, rotated with its successor and expiry, each use in the grace window, revoked, and expired
once the clock passes the expiry; ``as_of`` replays the key's events up to the instant."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from domain.accounts import scopes
from domain.timestamps import iso
from tests.support.setup import Account, new_tenant, scoped_key


def history(client, tenant: Account, key_id: str, **params: Any) -> dict[str, Any]:
    response = client.get(f"/auth/api-keys/{key_id}/events", params=params, headers=tenant.headers)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def tenant(client, container) -> Account:
    return new_tenant(client, container)


def test_a_rotated_key_used_in_grace_then_expired_shows_each_step(client, tenant, clock):
    issued = client.post("/auth/api-keys", json={"name": "ci", "scopes": [scopes.CALLS_READ]},
                         headers=tenant.headers).json()
    clock.advance(timedelta(minutes=5))
    rotated = client.post(f"/auth/api-keys/{issued['key_id']}/rotate", headers=tenant.headers).json()
    clock.advance(timedelta(minutes=5))
    old = {"Authorization": f"Bearer {issued['secret']}"}
    assert client.get("/v1/calls", headers=old).status_code == 200  # used in its grace window
    clock.advance(timedelta(hours=25))

    body = history(client, tenant, issued["key_id"])
    assert [entry["type"] for entry in body["data"]] == [
        "api_key.issued", "api_key.rotated", "api_key.rotated_key_used", "api_key.expired"]
    first, rotation, use, expiry = body["data"]
    assert (first["seq"], first["by"], first["data"]["name"], first["data"]["scopes"]) == (
        1, tenant.key_id, "ci", [scopes.CALLS_READ])
    assert "key_hash" not in first["data"] and issued["secret"] not in str(body)
    assert rotation["data"] == {"successor_key_id": rotated["key_id"], "expires_at": rotated["old_key_expires_at"]}
    assert use["data"] == {"method": "GET", "path": "/v1/calls"} and use["by"] == issued["key_id"]
    assert (expiry["seq"], expiry["at"]) == (None, rotated["old_key_expires_at"])
    assert body["next_cursor"] is None


def test_as_of_answers_the_key_as_it_stood(client, tenant, clock):
    issued = client.post("/auth/api-keys", json={"name": "ci"}, headers=tenant.headers).json()
    before_rotation = clock()
    clock.advance(timedelta(minutes=5))
    client.post(f"/auth/api-keys/{issued['key_id']}/rotate", headers=tenant.headers)
    clock.advance(timedelta(minutes=5))
    client.delete(f"/auth/api-keys/{issued['key_id']}", headers=tenant.headers)
    entries = history(client, tenant, issued["key_id"])["data"]
    at = {entry["type"]: entry["at"] for entry in entries}

    def as_of(instant: str) -> Any:
        return client.get(f"/auth/api-keys/{issued['key_id']}", params={"as_of": instant}, headers=tenant.headers)

    assert as_of(at["api_key.issued"]).json()["status"] == "active"
    rotated = as_of(at["api_key.rotated"]).json()
    assert (rotated["status"], rotated["revoked_at"]) == ("rotated", None) and rotated["rotated_to"]
    assert as_of(at["api_key.revoked"]).json()["status"] == "revoked"
    now = client.get(f"/auth/api-keys/{issued['key_id']}", headers=tenant.headers).json()
    assert now == as_of(at["api_key.revoked"]).json()
    assert as_of(iso(before_rotation - timedelta(days=1))).status_code == 404
    assert as_of("2026-11-01T00:00:00").json()["detail"][0]["type"] == "timezone_missing"


def test_paging_another_tenants_key_and_the_scope(client, container, tenant):
    issued = client.post("/auth/api-keys", json={}, headers=tenant.headers).json()
    for _ in range(3):
        issued = client.post(f"/auth/api-keys/{issued['key_id']}/rotate", headers=tenant.headers).json()
    first = client.post("/auth/api-keys", json={}, headers=tenant.headers).json()
    client.post(f"/auth/api-keys/{first['key_id']}/rotate", headers=tenant.headers)
    client.delete(f"/auth/api-keys/{first['key_id']}", headers=tenant.headers)
    page = history(client, tenant, first["key_id"], limit=2)
    rest = history(client, tenant, first["key_id"], limit=2, cursor=page["next_cursor"])
    assert [e["type"] for e in page["data"] + rest["data"]] == ["api_key.issued", "api_key.rotated", "api_key.revoked"]
    assert rest["next_cursor"] is None

    stranger = new_tenant(client, container)
    assert client.get(f"/auth/api-keys/{first['key_id']}/events", headers=stranger.headers).status_code == 404
    assert client.get(f"/auth/api-keys/{first['key_id']}", headers=stranger.headers).status_code == 404
    reader = scoped_key(client, tenant, [scopes.CALLS_READ])
    assert client.get(f"/auth/api-keys/{first['key_id']}/events", headers=reader).status_code == 403
