"""SPEC.md Resources › API key, States › API key, Authentication §2, §5–§7: the key lifecycle over HTTP."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from typing import Any

from litestar.testing import TestClient

from entrypoints.bootstrap import bootstrap
from entrypoints.http.app import create_app
from tests.postgres import drop_schema, fresh_schema
from tests.support.setup import FAST_HASHER, PASSWORD, approve, signup

SECRET = re.compile(r"^sk_live_[A-Za-z0-9_-]{32}$")
NUMBER_A = "0f8fad5b-d9cb-469f-a165-70867728950e"
NUMBER_B = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
CLOCK_START = "2026-11-02T12:00:00Z"  # the FakeClock's start
GRACE_END = "2026-11-03T12:00:00Z"  # SPEC.md: expires_at = now + 24 h


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def create_key(client: TestClient[Any], headers: dict[str, str], body: Any = None, path: str = "/auth/api-keys") -> dict[str, Any]:
    response = client.post(path, headers=headers, json=body) if body is not None else client.post(path, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def listed(client: TestClient[Any], headers: dict[str, str], path: str = "/auth/api-keys") -> dict[str, dict[str, Any]]:
    response = client.get(path, headers=headers)
    assert response.status_code == 200, response.text
    return {item["key_id"]: item for item in response.json()["items"]}


def error_code(response: Any) -> str:
    return response.json()["error"]["code"]


# --- create -----------------------------------------------------------------------------------


def test_create_with_empty_body_gives_an_all_permissions_key(client, account):
    """SPEC.md Endpoints › Auth: an empty or omitted body gives an all-permissions key."""
    response = client.post("/auth/api-keys", headers=account.headers)
    assert response.status_code == 201
    body = response.json()
    assert SECRET.match(body["secret"]), body["secret"]
    assert body["prefix"] == body["secret"][:16]
    assert body["scopes"] is None and body["number_ids"] is None
    assert body["key_id"].startswith("key_")

    empty_object = create_key(client, account.headers, {})
    assert empty_object["scopes"] is None and empty_object["number_ids"] is None
    assert empty_object["secret"] != body["secret"]

    assert client.get("/v1/audit-events", headers=bearer(body["secret"])).status_code == 200


def test_number_ids_are_stored_in_canonical_uuid_form(client, account):
    body = create_key(client, account.headers, {"number_ids": [NUMBER_A.upper(), NUMBER_B.replace("-", "")]})
    assert body["number_ids"] == [NUMBER_A, NUMBER_B]
    refused = client.post("/auth/api-keys", headers=account.headers, json={"number_ids": ["not-a-number-id"]})
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["body", "number_ids", 0]


def test_create_echoes_name_scopes_and_number_ids(client, account):
    body = create_key(
        client, account.headers, {"name": "reporting", "scopes": ["calls:read", "webhooks:read"], "number_ids": [NUMBER_A]}
    )
    assert body["name"] == "reporting"
    assert body["scopes"] == ["calls:read", "webhooks:read"]
    assert body["number_ids"] == [NUMBER_A]
    assert SECRET.match(body["secret"])

    me = client.get("/auth/me", headers=bearer(body["secret"])).json()
    assert me["auth"] == {"kind": "api_key", "key_id": body["key_id"], "scopes": ["calls:read", "webhooks:read"],
                          "number_ids": [NUMBER_A]}


def test_unknown_scope_is_a_validation_error(client, account):
    """SPEC.md Errors: 422 with the validation error shape."""
    response = client.post("/auth/api-keys", headers=account.headers, json={"scopes": ["calls:read", "calls:delete"]})
    assert response.status_code == 422
    (item,) = response.json()["detail"]
    assert item["loc"] == ["body", "scopes"]
    assert "calls:delete" in item["msg"]
    assert set(item) == {"loc", "msg", "type", "input", "ctx"}


def test_a_restricted_key_cannot_mint_a_key_that_can_do_more(client, account):
    scoped = create_key(client, account.headers, {"scopes": ["calls:read"], "number_ids": [NUMBER_A]})
    refusals = {
        "scope_escalation": [{"scopes": ["calls:read", "calls:create"], "number_ids": [NUMBER_A]},
                             {"number_ids": [NUMBER_A]}],  # scopes omitted means every scope
        "number_escalation": [{"scopes": ["calls:read"], "number_ids": [NUMBER_A, NUMBER_B]},
                              {"scopes": ["calls:read"]}],  # number_ids omitted means every number
    }
    for code, bodies in refusals.items():
        for body in bodies:
            response = client.post("/auth/api-keys", headers=bearer(scoped["secret"]), json=body)
            assert response.status_code == 403, body
            assert error_code(response) == code, body

    same = create_key(client, bearer(scoped["secret"]), {"scopes": ["calls:read"], "number_ids": [NUMBER_A]})
    assert same["scopes"] == ["calls:read"] and same["number_ids"] == [NUMBER_A]


# --- list -------------------------------------------------------------------------------------


def test_list_shows_prefix_and_metadata_but_never_a_secret(client, account):
    """SPEC.md Resources › API key: the list view returns only the prefix and metadata."""
    created = create_key(client, account.headers, {"name": "ci", "scopes": ["calls:create"], "number_ids": [NUMBER_A]})
    response = client.get("/auth/api-keys", headers=account.headers)
    assert response.status_code == 200
    items = {item["key_id"]: item for item in response.json()["items"]}
    assert set(items) == {account.key_id, created["key_id"]}
    item = items[created["key_id"]]
    assert item["prefix"] == created["prefix"]
    assert item["name"] == "ci"
    assert item["scopes"] == ["calls:create"] and item["number_ids"] == [NUMBER_A]
    assert item["status"] == "active"
    assert item["created_at"] == CLOCK_START
    assert "secret" not in item

    text = response.text
    assert created["secret"] not in text and account.api_key not in text
    for found in re.findall(r"sk_live_[A-Za-z0-9_-]*", text):
        assert len(found) <= 16, found


def test_underscore_alias_serves_create_list_rotate_and_revoke(client, account):
    """SPEC.md Endpoints › Auth: the paths are also written /auth/api_keys."""
    created = create_key(client, account.headers, {"name": "alias"}, path="/auth/api_keys")
    assert created["key_id"] in listed(client, account.headers, path="/auth/api_keys")

    rotated = client.post(f"/auth/api_keys/{created['key_id']}/rotate", headers=account.headers)
    assert rotated.status_code == 201
    assert rotated.json()["old_key_id"] == created["key_id"]

    revoked = client.delete(f"/auth/api_keys/{rotated.json()['key_id']}", headers=account.headers)
    assert revoked.status_code == 200
    assert revoked.json()["status"] == "revoked"

    for path in ("/auth/api-keys", "/auth/api_keys"):
        anonymous = client.get(path)
        assert anonymous.status_code == 401
        assert error_code(anonymous) == "missing_credentials"


# --- revoke -----------------------------------------------------------------------------------


def test_revoked_key_stops_authenticating_at_once_and_stays_listed(client, account):
    """SPEC.md States › API key: soft revoke; the key stops authenticating and the record is kept."""
    victim = create_key(client, account.headers, {"name": "leaked"})
    assert client.get("/auth/me", headers=bearer(victim["secret"])).status_code == 200

    response = client.delete(f"/auth/api-keys/{victim['key_id']}", headers=account.headers)
    assert response.status_code == 200
    assert response.json()["status"] == "revoked"
    assert response.json()["key_id"] == victim["key_id"]

    after = client.get("/v1/audit-events", headers=bearer(victim["secret"]))
    assert after.status_code == 401
    assert error_code(after) == "api_key_revoked"
    assert client.get("/auth/me", headers=bearer(victim["secret"])).status_code == 401

    item = listed(client, account.headers)[victim["key_id"]]
    assert item["status"] == "revoked"
    assert item["revoked_at"] == CLOCK_START
    assert item["name"] == "leaked"


def test_revoking_is_idempotent_and_a_key_can_revoke_itself(client, account):
    first = client.delete(f"/auth/api-keys/{account.key_id}", headers=account.headers)
    assert first.status_code == 200
    assert client.get("/auth/me", headers=account.headers).status_code == 401

    login = client.post("/auth/login", json={"email": account.email, "password": PASSWORD}).json()
    session = bearer(login["access_token"])
    again = client.delete(f"/auth/api-keys/{account.key_id}", headers=session)
    assert again.status_code == 200
    assert again.json()["revoked_at"] == first.json()["revoked_at"]


def test_revocation_is_seen_by_another_api_process(client, account, container, settings, clock, mail):
    other = bootstrap(settings, database=container.database, clock=clock, email=mail, hasher=FAST_HASHER, projections=False)
    try:
        with TestClient(create_app(other, start_projections=False), raise_server_exceptions=False) as second:
            victim = create_key(client, account.headers)
            assert second.get("/auth/me", headers=bearer(victim["secret"])).status_code == 200
            assert second.get("/v1/audit-events", headers=bearer(victim["secret"])).status_code == 200  # remembered
            revoked = time.monotonic()
            assert client.delete(f"/auth/api-keys/{victim['key_id']}", headers=bearer(victim["secret"])).status_code == 200
            # The other process remembers the key until its watcher of the accounts log reads the
            # revocation: within a second (docs/decisions.md, the authenticated read).
            while (response := second.get("/auth/me", headers=bearer(victim["secret"]))).status_code == 200:
                assert time.monotonic() - revoked < 1.0
                time.sleep(0.02)
            assert response.status_code == 401
            assert error_code(response) == "api_key_revoked"
            assert client.get("/auth/me", headers=bearer(victim["secret"])).status_code == 401  # this process: at once
    finally:
        other.close()


def test_without_a_watcher_to_vouch_a_remembered_key_is_checked_against_the_accounts_head(
        client, account, container, settings, clock, mail):
    """A stalled watcher of the accounts log (or a database away) does not make keys outlive a
    revocation: the hot path falls back to reading the head, and a moved head re-reads the key."""
    other = bootstrap(settings, database=container.database, clock=clock, email=mail, hasher=FAST_HASHER, projections=False)
    try:
        with TestClient(create_app(other, start_projections=False), raise_server_exceptions=False) as second:
            other.accounts.changes.stop()  # its watcher no longer vouches
            victim = create_key(client, account.headers)
            assert [second.get("/auth/me", headers=bearer(victim["secret"])).status_code for _ in range(2)] == [200, 200]
            assert client.delete(f"/auth/api-keys/{victim['key_id']}", headers=account.headers).status_code == 200
            response = second.get("/auth/me", headers=bearer(victim["secret"]))
            assert response.status_code == 401 and error_code(response) == "api_key_revoked"
    finally:
        other.close()


# --- rotate -----------------------------------------------------------------------------------


def test_rotation_mints_a_new_secret_with_the_same_scopes_and_numbers(client, account):
    """SPEC.md Authentication §7 and States › API key: rotate returns a new secret, old key expires in 24 h."""
    old = create_key(client, account.headers, {"name": "worker", "scopes": ["calls:create", "calls:read"], "number_ids": [NUMBER_A]})
    response = client.post(f"/auth/api-keys/{old['key_id']}/rotate", headers=account.headers)
    assert response.status_code == 201
    new = response.json()
    assert SECRET.match(new["secret"]) and new["secret"] != old["secret"]
    assert new["prefix"] == new["secret"][:16]
    assert new["key_id"] != old["key_id"]
    assert new["scopes"] == ["calls:create", "calls:read"]
    assert new["number_ids"] == [NUMBER_A]
    assert new["name"] == "worker"
    assert new["rotated_from"] == old["key_id"]
    assert new["old_key_id"] == old["key_id"]
    assert new["old_key_expires_at"] == GRACE_END

    keys = listed(client, account.headers)
    assert keys[old["key_id"]]["status"] == "rotated"
    assert keys[old["key_id"]]["expires_at"] == GRACE_END
    assert keys[old["key_id"]]["rotated_to"] == new["key_id"]
    assert keys[new["key_id"]]["status"] == "active"
    assert keys[new["key_id"]]["expires_at"] is None


def grace_uses(client: TestClient[Any], headers: dict[str, str]) -> list[dict[str, Any]]:
    response = client.get("/v1/audit-events", params={"type": "api_key.rotated_key_used"}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["items"]


def test_old_key_works_during_grace_and_every_use_is_audited_once(client, account, clock):
    """SPEC.md States › API key: use of the old key within the window writes api_key.rotated_key_used."""
    old = create_key(client, account.headers, {"name": "to rotate"})
    new = client.post(f"/auth/api-keys/{old['key_id']}/rotate", headers=account.headers).json()
    assert grace_uses(client, bearer(new["secret"])) == []

    clock.advance(timedelta(hours=1))
    assert client.get("/auth/me", headers=bearer(old["secret"])).status_code == 200
    uses = grace_uses(client, bearer(new["secret"]))
    assert len(uses) == 1
    assert uses[0]["subject"] == old["key_id"]
    assert uses[0]["data"] == {"method": "GET", "path": "/auth/me"}
    assert uses[0]["occurred_at"] == "2026-11-02T13:00:00Z"

    clock.advance(timedelta(hours=22, minutes=59))
    assert client.get("/v1/audit-events", headers=bearer(old["secret"])).status_code == 200
    assert client.get("/auth/me", headers=bearer(old["secret"])).status_code == 200
    assert len(grace_uses(client, bearer(new["secret"]))) == 3
    assert listed(client, account.headers)[old["key_id"]]["last_used_during_grace_at"] == "2026-11-03T11:59:00Z"


def test_old_key_is_refused_after_the_grace_window_while_the_new_key_works(client, account, clock):
    old = create_key(client, account.headers)
    new = client.post(f"/auth/api-keys/{old['key_id']}/rotate", headers=account.headers).json()

    clock.advance(timedelta(hours=24))
    response = client.get("/v1/audit-events", headers=bearer(old["secret"]))
    assert response.status_code == 401
    assert error_code(response) == "api_key_expired"
    assert client.get("/v1/audit-events", headers=bearer(new["secret"])).status_code == 200
    assert listed(client, account.headers)[old["key_id"]]["status"] == "expired"
    assert grace_uses(client, bearer(new["secret"])) == []


def test_rotating_a_rotated_or_revoked_key_conflicts(client, account):
    rotated = create_key(client, account.headers)
    assert client.post(f"/auth/api-keys/{rotated['key_id']}/rotate", headers=account.headers).status_code == 201
    again = client.post(f"/auth/api-keys/{rotated['key_id']}/rotate", headers=account.headers)
    assert again.status_code == 409
    assert error_code(again) == "key_already_rotated"

    revoked = create_key(client, account.headers)
    client.delete(f"/auth/api-keys/{revoked['key_id']}", headers=account.headers)
    response = client.post(f"/auth/api-keys/{revoked['key_id']}/rotate", headers=account.headers)
    assert response.status_code == 409
    assert error_code(response) == "key_revoked"


# --- tenancy and sessions ---------------------------------------------------------------------


def test_keys_of_another_tenant_do_not_exist_for_you(client, account, container):
    stranger = signup(client)
    approve(container, stranger)
    target = stranger.key_id

    assert client.post(f"/auth/api-keys/{target}/rotate", headers=account.headers).status_code == 404
    response = client.delete(f"/auth/api-keys/{target}", headers=account.headers)
    assert response.status_code == 404
    assert error_code(response) == "api_key_not_found"
    assert target not in listed(client, account.headers)
    assert client.get("/auth/me", headers=stranger.headers).status_code == 200

    malformed = client.delete("/auth/api-keys/not-a-key", headers=account.headers)
    assert malformed.status_code == 422
    assert malformed.json()["detail"][0]["loc"] == ["path", "key_id"]


def test_a_dashboard_session_can_manage_keys(client, account):
    login = client.post("/auth/login", json={"email": account.email, "password": PASSWORD})
    assert login.status_code == 200
    session = bearer(login.json()["access_token"])

    created = create_key(client, session, {"name": "from the dashboard", "scopes": ["calls:read"]})
    assert created["scopes"] == ["calls:read"]
    assert {account.key_id, created["key_id"]} <= set(listed(client, session))

    rotated = client.post(f"/auth/api-keys/{created['key_id']}/rotate", headers=session)
    assert rotated.status_code == 201
    revoked = client.delete(f"/auth/api-keys/{rotated.json()['key_id']}", headers=session)
    assert revoked.status_code == 200

    issued = [e for e in client.get("/v1/audit-events", params={"type": "api_key.issued"}, headers=account.headers).json()["items"]
              if e["subject"] == created["key_id"]]
    assert issued[0]["actor"] == account.user_id




def test_concurrent_uses_of_a_rotated_key_are_all_accepted_and_audited(client, account, container, settings, clock, mail):
    """Two API processes take the same old key at once: neither request fails, both uses are logged."""
    from application.accounts.authentication import authenticate_key

    old = create_key(client, account.headers)
    new = client.post(f"/auth/api-keys/{old['key_id']}/rotate", headers=account.headers).json()
    other = bootstrap(settings, database=container.database, clock=clock, email=mail, hasher=FAST_HASHER, projections=False)
    accounts = container.accounts
    real_commit = accounts.commit
    raced = []

    def let_the_other_process_save_first(*aggregates, **kwargs):
        if not raced:  # the other process records its use between our read and our save
            raced.append(True)
            authenticate_key(other.accounts, old["secret"], method="GET", path="/v1/other-process")
        return real_commit(*aggregates, **kwargs)

    accounts.commit = let_the_other_process_save_first
    try:
        response = client.get("/auth/me", headers=bearer(old["secret"]))
    finally:
        del accounts.commit
        other.close()
    assert raced
    assert response.status_code == 200, response.text
    paths = sorted(use["data"]["path"] for use in grace_uses(client, bearer(new["secret"])))
    assert paths == ["/auth/me", "/v1/other-process"]


def test_the_key_list_stays_current_while_a_service_in_another_schema_runs_its_projections(
    pg_server, container, settings, clock, mail
):
    """Projection leadership is per schema: a neighbour sharing the database must not hold ours."""
    neighbour_db = fresh_schema(pg_server)
    neighbour = bootstrap(settings, database=neighbour_db, clock=clock, email=mail, hasher=FAST_HASHER)
    try:
        neighbour.start_projections()
        deadline = time.monotonic() + 5
        while not all(w.is_leader for w in neighbour.projections.values()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert all(w.is_leader for w in neighbour.projections.values())

        with TestClient(create_app(container), raise_server_exceptions=False) as client:
            account = signup(client)
            approve(container, account)
            created = create_key(client, account.headers, {"name": "fresh"})
            assert set(listed(client, account.headers)) == {account.key_id, created["key_id"]}
            events = client.get("/v1/audit-events", headers=account.headers).json()["items"]
            assert created["key_id"] in {e["subject"] for e in events}
    finally:
        neighbour.close()
        drop_schema(neighbour_db)
