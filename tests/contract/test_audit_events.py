"""The audit trail (``GET /v1/audit-events``), the admin routes and the verification gate.

SPEC.md States › API key (grace-window uses are audited), Authentication §7–§8, Overview §9.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from litestar.testing import TestClient

from application.accounts import registration
from entrypoints.http.app import create_app
from tests.support.setup import PASSWORD, approve, signup


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def trail(client: TestClient[Any], headers: dict[str, str], **params: Any) -> list[dict[str, Any]]:
    response = client.get("/v1/audit-events", headers=headers, params={"limit": 200, **params})
    assert response.status_code == 200, response.text
    return response.json()["items"]


@dataclass(frozen=True)
class Operator:
    headers: dict[str, str]
    key_id: str
    tenant_id: str


@pytest.fixture
def admin(container) -> Operator:
    done = registration.register(container.accounts, email="operator@example.com", password=PASSWORD, name=None,
                                 admin=True, by="cli")
    return Operator(bearer(done.key.secret), done.key.key_id, done.tenant.tenant_id)


def test_trail_records_keys_sessions_and_approval_with_actor_subject_and_time(client, clock, pending_account, admin):
    account = pending_account
    clock.advance(timedelta(minutes=1))
    approved = client.post(f"/v1/admin/users/{account.user_id}/approve", headers=admin.headers)
    assert approved.status_code == 200

    clock.advance(timedelta(minutes=1))
    created = client.post("/auth/api-keys", headers=account.headers, json={"name": "to rotate"}).json()
    clock.advance(timedelta(minutes=1))
    rotated = client.post(f"/auth/api-keys/{created['key_id']}/rotate", headers=account.headers).json()
    clock.advance(timedelta(minutes=1))
    assert client.get("/auth/me", headers=bearer(created["secret"])).status_code == 200  # grace-window use
    clock.advance(timedelta(minutes=1))
    assert client.delete(f"/auth/api-keys/{created['key_id']}", headers=account.headers).status_code == 200
    clock.advance(timedelta(minutes=1))
    token = client.post("/auth/login", json={"email": account.email, "password": PASSWORD}).json()["access_token"]
    clock.advance(timedelta(minutes=1))
    assert client.post("/auth/logout", json={"token": token}).status_code == 200

    events = trail(client, account.headers)
    seen = [(e["type"], e["actor"], e["subject"], e["occurred_at"]) for e in reversed(events)]
    assert seen == [
        ("user.registered", account.user_id, account.user_id, "2026-11-02T12:00:00Z"),
        ("api_key.issued", "signup", account.key_id, "2026-11-02T12:00:00Z"),
        ("tenant.approved", admin.key_id, account.tenant_id, "2026-11-02T12:01:00Z"),
        ("api_key.issued", account.key_id, created["key_id"], "2026-11-02T12:02:00Z"),
        ("api_key.rotated", account.key_id, created["key_id"], "2026-11-02T12:03:00Z"),
        ("api_key.issued", account.key_id, rotated["key_id"], "2026-11-02T12:03:00Z"),
        ("api_key.rotated_key_used", created["key_id"], created["key_id"], "2026-11-02T12:04:00Z"),
        ("api_key.revoked", account.key_id, created["key_id"], "2026-11-02T12:05:00Z"),
        ("user.login", account.user_id, account.user_id, "2026-11-02T12:06:00Z"),
        ("user.logout", account.user_id, account.user_id, "2026-11-02T12:07:00Z"),
    ]
    by_type = {e["type"]: e for e in events}
    rotation = by_type["api_key.rotated"]["data"]
    assert rotation["successor_key_id"] == rotated["key_id"]
    assert datetime.fromisoformat(rotation["expires_at"]) == datetime(2026, 11, 3, 12, 3, tzinfo=timezone.utc)
    assert by_type["api_key.rotated_key_used"]["data"] == {"method": "GET", "path": "/auth/me"}
    assert all(e["id"].startswith("aud_") for e in events)
    assert len({e["id"] for e in events}) == len(events)


def test_paging_with_limit_and_next_cursor_returns_every_event_once(client, account):
    for i in range(6):
        client.post("/auth/api-keys", headers=account.headers, json={"name": f"key {i}"})
    everything = [e["id"] for e in trail(client, account.headers)]
    assert len(everything) == 9  # user.registered, the initial key, the approval and six more keys

    pages: list[list[str]] = []
    cursor = None
    while True:
        params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        body = client.get("/v1/audit-events", headers=account.headers, params=params).json()
        pages.append([e["id"] for e in body["items"]])
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert [len(p) for p in pages] == [3, 3, 3]  # a full last page still ends without a cursor
    assert [i for page in pages for i in page] == everything

    bad_cursor = client.get("/v1/audit-events", headers=account.headers, params={"cursor": "abc"})
    assert bad_cursor.status_code == 422
    assert bad_cursor.json()["detail"][0]["loc"] == ["query", "cursor"]
    assert client.get("/v1/audit-events", headers=account.headers, params={"limit": 0}).status_code == 422
    assert client.get("/v1/audit-events", headers=account.headers, params={"limit": 201}).status_code == 422


def test_type_filter_keeps_only_that_type(client, account):
    created = client.post("/auth/api-keys", headers=account.headers).json()
    client.delete(f"/auth/api-keys/{created['key_id']}", headers=account.headers)
    issued = trail(client, account.headers, type="api_key.issued")
    assert [e["subject"] for e in issued] == [created["key_id"], account.key_id]
    assert {e["type"] for e in issued} == {"api_key.issued"}
    assert [e["subject"] for e in trail(client, account.headers, type="api_key.revoked")] == [created["key_id"]]
    assert trail(client, account.headers, type="no.such.type") == []


def test_tenants_never_see_each_others_events(client, container, account):
    other = signup(client)
    approve(container, other)
    client.post("/auth/api-keys", headers=other.headers, json={"name": "other's key"})
    client.post("/auth/login", json={"email": other.email, "password": PASSWORD})

    mine = trail(client, account.headers)
    theirs = trail(client, other.headers)
    assert {e["id"] for e in mine}.isdisjoint({e["id"] for e in theirs})
    names_of_other = {other.user_id, other.tenant_id, other.key_id} | {e["subject"] for e in theirs}
    assert not any(e["subject"] in names_of_other or e["actor"] in names_of_other for e in mine)
    assert {e["type"] for e in theirs} == {"user.registered", "api_key.issued", "tenant.approved", "user.login"}
    assert all(e["type"] != "tenant.approved" or e["subject"] == other.tenant_id for e in theirs)


# --- admin routes and the verification gate ------------------------------------------------------------


def test_a_pending_tenant_is_gated_until_an_admin_approves_it(client, pending_account, admin, clock):
    """SPEC.md Overview §9 and Authentication §8: pending_review accounts get 403 on API calls."""
    account = pending_account
    gated = client.get("/v1/audit-events", headers=account.headers)
    assert gated.status_code == 403
    assert gated.json()["error"]["code"] == "account_pending_review"
    me = client.get("/auth/me", headers=account.headers)
    assert me.status_code == 200 and me.json()["verification_status"] == "pending_review"

    looked_up = client.get(f"/v1/admin/users/{account.user_id}", headers=admin.headers)
    assert looked_up.status_code == 200
    assert looked_up.json()["verification_status"] == "pending_review"
    assert looked_up.json()["email"] == account.email

    approved = client.post(f"/v1/admin/users/{account.user_id}/approve", headers=admin.headers)
    assert approved.status_code == 200
    assert approved.json()["verification_status"] == "approved"
    assert approved.json()["approved_by"] == admin.key_id

    assert client.get("/v1/audit-events", headers=account.headers).status_code == 200
    assert client.get("/auth/me", headers=account.headers).json()["verification_status"] == "approved"
    assert client.get(f"/v1/admin/users/{account.user_id}", headers=admin.headers).json()["verification_status"] == "approved"
    assert [e["actor"] for e in trail(client, account.headers, type="tenant.approved")] == [admin.key_id]

    clock.advance(timedelta(hours=1))
    again = client.post(f"/v1/admin/users/{account.user_id}/approve", headers=admin.headers)
    assert again.status_code == 200
    assert again.json()["approved_at"] == approved.json()["approved_at"] == "2026-11-02T12:00:00Z"
    assert len(trail(client, account.headers, type="tenant.approved")) == 1
    admins_own = trail(client, admin.headers, type="tenant.approved")
    assert [(e["actor"], e["subject"]) for e in admins_own] == [("cli", admin.tenant_id)]

    missing = client.get("/v1/admin/users/usr_" + "0" * 32, headers=admin.headers)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "user_not_found"
    malformed = client.get("/v1/admin/users/bob", headers=admin.headers)
    assert malformed.status_code == 422
    assert malformed.json()["detail"][0]["loc"] == ["path", "user_id"]


def test_admin_routes_refuse_other_keys(client, account, pending_account):
    for method, path in (("GET", f"/v1/admin/users/{account.user_id}"), ("POST", f"/v1/admin/users/{account.user_id}/approve")):
        response = client.request(method, path, headers=account.headers)
        assert response.status_code == 403, path
        assert response.json()["error"]["code"] == "admin_required"

    pending = client.get(f"/v1/admin/users/{pending_account.user_id}", headers=pending_account.headers)
    assert pending.status_code == 403
    assert pending.json()["error"]["code"] == "account_pending_review"  # the gate comes first


# --- wire format -----------------------------------------------------------------------------------


@pytest.fixture
def client_with_new_york_sessions(container, monkeypatch) -> Iterator[TestClient[Any]]:
    """The read pool's sessions run in a non-UTC time zone (libpq reads PGTZ)."""
    monkeypatch.setenv("PGTZ", "America/New_York")
    with TestClient(create_app(container), raise_server_exceptions=False) as test_client:
        yield test_client


def test_timestamps_are_utc_whatever_the_database_session_time_zone(client_with_new_york_sessions, container):
    client = client_with_new_york_sessions
    account = signup(client)
    approve(container, account)
    created = client.post("/auth/api-keys", headers=account.headers).json()
    client.post(f"/auth/api-keys/{created['key_id']}/rotate", headers=account.headers)

    assert {e["occurred_at"] for e in trail(client, account.headers)} == {"2026-11-02T12:00:00Z"}
    listed = {k["key_id"]: k for k in client.get("/auth/api-keys", headers=account.headers).json()["items"]}
    assert listed[created["key_id"]]["created_at"] == "2026-11-02T12:00:00Z"
    assert listed[created["key_id"]]["expires_at"] == "2026-11-03T12:00:00Z"
