"""Reads of ``webhook_deliveries_v1``: an endpoint's history (newest first) and what is due."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from domain.timestamps import iso

MAX_LIMIT = 100


def delivery_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "delivery_id": row["delivery_id"],
        "delivery_uuid": str(row["delivery_uuid"]),
        "endpoint_id": row["endpoint_id"],
        "event_id": row["event_id"],
        "event_type": row["event_type"],
        "call_id": row["call_id"],
        "status": row["status"],
        "attempts": row["attempts"],  # {attempt, manual, response_status, response_body, latency_ms, error, at}
        "next_attempt_at": iso(row["next_attempt_at"]),
        "created_at": iso(row["created_at"]),
    }


@dataclass(frozen=True, kw_only=True)
class DeliveryPage:
    rows: list[dict[str, Any]]
    total: int
    after: tuple[datetime, uuid.UUID] | None  # the sort key of the last row when more follow


async def list_deliveries(pool: AsyncConnectionPool, *, tenant_id: str, endpoint_id: str, status: str | None,
                          limit: int, offset: int, after: tuple[datetime, uuid.UUID] | None = None) -> DeliveryPage:
    """Newest first; ``after`` (a previous page's) continues past that row: keyset paging. ``total``
    counts the whole filtered history."""
    where = "tenant_id = %(tenant_id)s AND endpoint_id = %(endpoint_id)s"
    if status is not None:
        where += " AND status = %(status)s"
    params: dict[str, Any] = {"tenant_id": tenant_id, "endpoint_id": endpoint_id, "status": status,
                              "limit": limit + 1, "offset": offset}
    page_where = where
    if after is not None:
        page_where += (" AND (created_at < %(created_at)s"
                       " OR (created_at = %(created_at)s AND delivery_uuid > %(delivery_uuid)s))")
        params["created_at"], params["delivery_uuid"] = after
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(f"SELECT * FROM webhook_deliveries_v1 WHERE {page_where} "
                          "ORDER BY created_at DESC, delivery_uuid LIMIT %(limit)s OFFSET %(offset)s", params)
        rows = await cur.fetchall()
        await cur.execute(f"SELECT count(*) AS total FROM webhook_deliveries_v1 WHERE {where}", params)
        total = (await cur.fetchone())["total"]
    more = len(rows) > limit
    rows = rows[:limit]
    last = (rows[-1]["created_at"], rows[-1]["delivery_uuid"]) if more and rows else None
    return DeliveryPage(rows=[delivery_row(row) for row in rows], total=int(total), after=last)


def due_deliveries(pool: ConnectionPool, now: datetime, limit: int = 500) -> list[tuple[uuid.UUID, str, str]]:
    """Deliveries whose next attempt (or expired lease, or manual retry) is due, with their endpoint
    and tenant: each endpoint's oldest first, then each one's second oldest, and so on, so that a
    backlog of one endpoint (a dead one, backed off) never hides another endpoint's within ``limit``."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT delivery_uuid, endpoint_id, tenant_id FROM ("
            " SELECT delivery_uuid, endpoint_id, tenant_id, due_at,"
            " row_number() OVER (PARTITION BY endpoint_id ORDER BY due_at) AS turn"
            " FROM webhook_deliveries_v1 WHERE due_at <= %s) AS due "
            "ORDER BY turn, due_at LIMIT %s", (now, limit)).fetchall()
    return [(row[0], row[1], row[2]) for row in rows]
