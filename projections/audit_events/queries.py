"""Reads of ``audit_events_v1``: a tenant's audit trail, newest first, cursor-paged and filtered;
its head (the latest hash of the chain); and its export, oldest first (the chain's order)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain import audit_chain
from domain.timestamps import iso

EXPORT_BATCH = 1000
_COLUMNS = "audit_id, notification_id, tenant_id, type, actor, subject, occurred_at, data, prev_hash, hash"


@dataclass(frozen=True, kw_only=True)
class AuditFilters:
    event_type: str | None = None
    subject: str | None = None
    actor: str | None = None
    start: datetime | None = None  # occurred_at, inclusive
    end: datetime | None = None  # exclusive


@dataclass(frozen=True, kw_only=True)
class AuditPage:
    items: list[dict[str, Any]]
    next_cursor: str | None


def _where(tenant_id: str, filters: AuditFilters) -> tuple[list[str], dict[str, Any]]:
    clauses = ["tenant_id = %(tenant_id)s"]
    params: dict[str, Any] = {"tenant_id": tenant_id}
    for column, value, test in (("type", filters.event_type, "="), ("subject", filters.subject, "="),
                                ("actor", filters.actor, "="), ("occurred_at", filters.start, ">="),
                                ("occurred_at", filters.end, "<")):
        if value is not None:
            name = f"p{len(params)}"
            clauses.append(f"{column} {test} %({name})s")
            params[name] = value
    return clauses, params


def row_view(row: dict[str, Any]) -> dict[str, Any]:
    """A row as the API and the export show it: the hashed fields (audit_chain.HASHED) and the chain."""
    return {"id": row["audit_id"], "tenant_id": row["tenant_id"], "type": row["type"], "actor": row["actor"],
            "subject": row["subject"], "occurred_at": iso(row["occurred_at"]), "data": row["data"],
            "prev_hash": row["prev_hash"], "hash": row["hash"]}


async def list_audit_events(
    pool: AsyncConnectionPool, *, tenant_id: str, limit: int, before: int | None = None,
    filters: AuditFilters = AuditFilters(),
) -> AuditPage:
    clauses, params = _where(tenant_id, filters)
    params["limit"] = limit + 1
    if before is not None:
        clauses.append("notification_id < %(before)s")
        params["before"] = before
    query = (f"SELECT {_COLUMNS} FROM audit_events_v1 WHERE {' AND '.join(clauses)} "
             "ORDER BY notification_id DESC LIMIT %(limit)s")
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(query, params, prepare=False)
        rows = await cur.fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = str(rows[-1]["notification_id"]) if more and rows else None
    return AuditPage(items=[row_view(row) for row in rows], next_cursor=next_cursor)


async def audit_head(pool: AsyncConnectionPool, *, tenant_id: str) -> dict[str, Any]:
    """The tenant's latest row: its hash (the genesis while there is none), id, time, and the count."""
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT audit_id, occurred_at, hash, (SELECT count(*) FROM audit_events_v1 WHERE tenant_id = %(t)s) AS rows "
            "FROM audit_events_v1 WHERE tenant_id = %(t)s ORDER BY notification_id DESC LIMIT 1", {"t": tenant_id})
        row = await cur.fetchone()
    if row is None:
        return {"hash": audit_chain.GENESIS, "id": None, "occurred_at": None, "rows": 0}
    return {"hash": row["hash"], "id": row["audit_id"], "occurred_at": iso(row["occurred_at"]), "rows": row["rows"]}


async def export_audit_events(pool: AsyncConnectionPool, *, tenant_id: str,
                              filters: AuditFilters = AuditFilters()) -> AsyncIterator[dict[str, Any]]:
    """Every matching row, oldest first, through a server-side cursor (memory stays flat)."""
    clauses, params = _where(tenant_id, filters)
    query = f"SELECT {_COLUMNS} FROM audit_events_v1 WHERE {' AND '.join(clauses)} ORDER BY notification_id"
    async with pool.connection() as conn, conn.transaction():
        async with conn.cursor(name="audit_export", row_factory=dict_row) as cur:
            await cur.execute(query, params)
            while rows := await cur.fetchmany(EXPORT_BATCH):
                for row in rows:
                    yield row_view(row)
