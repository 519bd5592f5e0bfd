"""The audit trail's filters, its hash chain's head, the JSONL export and ``callwright audit verify``
(issue 17 items 2 and 3; docs/audit.md): an untouched export verifies; a row edited, deleted or
inserted in the database is named by the verifier, and a trail rewritten from some row on no
longer reaches the head an auditor kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from domain import audit_chain
from domain.accounts import scopes
from entrypoints.cli.main import app as cli
from tests.support.setup import Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container  # noqa: F401 - fixtures


@pytest.fixture
def tenant(client, container) -> Account:
    """A tenant with a trail: registered, key issued, approved, two keys issued, one rotated, one revoked."""
    tenant = new_tenant(client, container)
    first = client.post("/auth/api-keys", json={"scopes": [scopes.CALLS_READ]}, headers=tenant.headers).json()
    second = client.post("/auth/api-keys", json={"scopes": [scopes.CALLS_READ]}, headers=tenant.headers).json()
    assert client.post(f"/auth/api-keys/{first['key_id']}/rotate", headers=tenant.headers).status_code == 201
    assert client.delete(f"/auth/api-keys/{second['key_id']}", headers=tenant.headers).status_code == 200
    tenant.extra = {"first": first["key_id"], "second": second["key_id"]}  # type: ignore[attr-defined]
    return tenant


def export(client, tenant: Account, **params: Any) -> list[dict[str, Any]]:
    response = client.get("/v1/audit-events/export.jsonl", params=params, headers=tenant.headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines() if line]


def verify_file(tmp_path: Path, rows: list[dict[str, Any]], *args: str) -> Any:
    path = tmp_path / "audit.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return CliRunner().invoke(cli, ["audit", "verify", str(path), *args])


def execute(container, statement: str, params: Any = None) -> None:
    with psycopg.connect(container.database.conninfo(), autocommit=True) as conn:
        conn.execute(statement, params)


def test_the_export_is_the_whole_trail_oldest_first_and_verifies(client, tenant, tmp_path):
    rows = export(client, tenant)
    types = [row["type"] for row in rows]
    assert types[:2] == ["user.registered", "api_key.issued"] and "api_key.rotated" in types
    assert types[-1] == "api_key.revoked"
    assert rows[0]["prev_hash"] == audit_chain.GENESIS
    assert all(later["prev_hash"] == earlier["hash"] for earlier, later in zip(rows, rows[1:]))
    head = client.get("/v1/audit-events/head", headers=tenant.headers).json()
    assert head == {"hash": rows[-1]["hash"], "id": rows[-1]["id"], "occurred_at": rows[-1]["occurred_at"],
                    "rows": len(rows)}
    result = verify_file(tmp_path, rows, "--head", head["hash"])
    assert result.exit_code == 0, result.output
    assert f"OK: {len(rows)} rows" in result.output


def test_the_list_pages_carry_the_chain_and_take_every_filter(client, tenant):
    first = tenant.extra["first"]
    by_subject = client.get("/v1/audit-events", params={"subject": first}, headers=tenant.headers).json()["data"]
    assert {row["type"] for row in by_subject} == {"api_key.issued", "api_key.rotated"}
    assert all(row["hash"] and row["prev_hash"] for row in by_subject)
    by_actor = client.get("/v1/audit-events", params={"actor": tenant.user_id}, headers=tenant.headers).json()["data"]
    assert by_actor and all(row["actor"] == tenant.user_id for row in by_actor)
    everything = export(client, tenant)
    middle = everything[len(everything) // 2]["occurred_at"]
    later = client.get("/v1/audit-events", params={"start": middle, "limit": 200}, headers=tenant.headers).json()["data"]
    earlier = client.get("/v1/audit-events", params={"end": middle, "limit": 200}, headers=tenant.headers).json()["data"]
    assert len(later) + len(earlier) == len(everything)
    assert all(row["occurred_at"] >= middle for row in later) and all(row["occurred_at"] < middle for row in earlier)
    naive = client.get("/v1/audit-events", params={"start": "2026-11-01T00:00:00"}, headers=tenant.headers)
    assert naive.status_code == 422 and naive.json()["detail"][0]["type"] == "timezone_missing"


def test_another_tenants_trail_is_neither_listed_nor_exported(client, container, tenant):
    stranger = new_tenant(client, container)
    ids = {row["id"] for row in export(client, tenant)}
    assert not ids & {row["id"] for row in export(client, stranger)}
    assert client.get("/v1/audit-events/head", headers=stranger.headers).json()["hash"] != \
        client.get("/v1/audit-events/head", headers=tenant.headers).json()["hash"]


def test_the_head_and_export_need_audit_read(client, tenant):
    reader = scoped_key(client, tenant, [scopes.CALLS_READ])
    for path in ("/v1/audit-events/head", "/v1/audit-events/export.jsonl"):
        assert client.get(path, headers=reader).status_code == 403


def test_a_row_edited_in_the_database_is_named(client, container, tenant, tmp_path):
    rows = export(client, tenant)
    target = rows[3]
    execute(container, "UPDATE audit_events_v1 SET data = data || '{\"scopes\": [\"admin\"]}' WHERE audit_id = %s",
            (target["id"],))
    result = verify_file(tmp_path, export(client, tenant))
    assert result.exit_code == 1
    assert f"row 4 ({target['id']})" in result.output and "edited" in result.output


def test_a_row_deleted_or_inserted_in_the_middle_is_found(client, container, tenant, tmp_path):
    rows = export(client, tenant)
    execute(container, "DELETE FROM audit_events_v1 WHERE audit_id = %s", (rows[2]["id"],))
    result = verify_file(tmp_path, export(client, tenant))
    assert result.exit_code == 1 and f"row 3 ({rows[3]['id']})" in result.output and "inserted or deleted" in result.output

    forged = {**rows[2], "id": "aud_" + "f" * 32, "data": {"forged": True}, "prev_hash": rows[2]["hash"]}
    forged["hash"] = audit_chain.link(forged["prev_hash"], forged)  # linked to the row before it, consistent in itself
    with_forged = [*rows[:3], forged, *rows[3:]]
    result = verify_file(tmp_path, with_forged)
    assert result.exit_code == 1 and f"row 5 ({rows[3]['id']})" in result.output


def test_a_trail_rewritten_from_a_row_on_misses_the_kept_head(client, tenant, tmp_path):
    rows = export(client, tenant)
    head = client.get("/v1/audit-events/head", headers=tenant.headers).json()["hash"]
    rewritten, previous = [], audit_chain.GENESIS
    for index, row in enumerate(rows):
        row = {**row, "data": {"rewritten": True}} if index == 2 else dict(row)
        row["prev_hash"], row["hash"] = previous, audit_chain.link(previous, row)
        previous = row["hash"]
        rewritten.append(row)
    assert verify_file(tmp_path, rewritten).exit_code == 0
    result = verify_file(tmp_path, rewritten, "--head", head)
    assert result.exit_code == 1 and "not the head" in result.output


def test_a_partial_export_verifies_from_its_first_row_and_garbage_is_refused(client, tenant, tmp_path):
    rows = export(client, tenant)
    assert verify_file(tmp_path, rows[2:]).exit_code == 1
    assert verify_file(tmp_path, rows[2:], "--partial").exit_code == 0
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    result = CliRunner().invoke(cli, ["audit", "verify", str(tmp_path / "bad.jsonl")])
    assert result.exit_code == 2 and "line 1" in result.output


def _replay_into_fresh_view(container) -> None:
    """As at a start: the view's DDL, then its follower from the tracking the table keeps."""
    from eventsourcing.postgres import PostgresFactory

    from application.follower import ProjectionWorker
    from projections.audit_events.projection import AuditEventsProjection
    from projections.audit_events.view import AuditEventsView

    factory = PostgresFactory(container.database.eventsourcing_env())
    try:
        view = AuditEventsView(factory.datastore)
        view.create_table()
        projection = AuditEventsProjection(view)
        ProjectionWorker(container.accounts, projection.process_event, view, name="audit-replay",
                         handles=projection.handles).catch_up()
    finally:
        factory.close()


def test_rows_from_before_the_chain_are_projected_again_with_the_same_hashes(client, container, tenant):
    before = export(client, tenant)
    # As rows of an older release (the service's own follower is idle: nothing new happens meanwhile).
    execute(container, "UPDATE audit_events_v1 SET hash = NULL, prev_hash = NULL")
    _replay_into_fresh_view(container)
    with psycopg.connect(container.database.conninfo()) as conn:
        rows = {audit_id: (prev, hash_) for audit_id, prev, hash_ in
                conn.execute("SELECT audit_id, prev_hash, hash FROM audit_events_v1").fetchall()}
    assert all(hash_ for _, hash_ in rows.values())
    assert {row["id"]: (row["prev_hash"], row["hash"]) for row in before}.items() <= rows.items()
