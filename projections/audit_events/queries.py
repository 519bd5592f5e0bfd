"""Reads of ``audit_events_v1``: a tenant's audit trail, newest first, cursor-paged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain.timestamps import iso


@dataclass(frozen=True, kw_only=True)
class AuditPage:
    items: list[dict[str, Any]]
    next_cursor: str | None


async def list_audit_events(
    pool: AsyncConnectionPool,
    *,
    tenant_id: str,
    limit: int,
    before: int | None = None,
    event_type: str | None = None,
) -> AuditPage:
    clauses = ["tenant_id = %(tenant_id)s"]
    params: dict[str, Any] = {"tenant_id": tenant_id, "limit": limit + 1}
    if before is not None:
        clauses.append("notification_id < %(before)s")
        params["before"] = before
    if event_type is not None:
        clauses.append("type = %(type)s")
        params["type"] = event_type
    query = (
        "SELECT audit_id, notification_id, type, actor, subject, occurred_at, data "
        f"FROM audit_events_v1 WHERE {' AND '.join(clauses)} "
        "ORDER BY notification_id DESC LIMIT %(limit)s"
    )
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(query, params, prepare=True)
        rows = await cur.fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    items = [
        {
            "id": row["audit_id"],
            "type": row["type"],
            "actor": row["actor"],
            "subject": row["subject"],
            "occurred_at": iso(row["occurred_at"]),
            "data": row["data"],
        }
        for row in rows
    ]
    next_cursor = str(rows[-1]["notification_id"]) if more and rows else None
    return AuditPage(items=items, next_cursor=next_cursor)


