"""Reads of ``webhook_deliveries_v1``: an endpoint's history (newest first) and what is due."""

from __future__ import annotations

import uuid
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


async def list_deliveries(pool: AsyncConnectionPool, *, tenant_id: str, endpoint_id: str, status: str | None,
                          limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
    where = "tenant_id = %(tenant_id)s AND endpoint_id = %(endpoint_id)s"
    if status is not None:
        where += " AND status = %(status)s"
    params = {"tenant_id": tenant_id, "endpoint_id": endpoint_id, "status": status, "limit": limit, "offset": offset}
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(f"SELECT * FROM webhook_deliveries_v1 WHERE {where} "
                          "ORDER BY created_at DESC, delivery_uuid LIMIT %(limit)s OFFSET %(offset)s", params)
        rows = await cur.fetchall()
        await cur.execute(f"SELECT count(*) AS total FROM webhook_deliveries_v1 WHERE {where}", params)
        total = (await cur.fetchone())["total"]
    return [delivery_row(row) for row in rows], int(total)


def due_deliveries(pool: ConnectionPool, now: datetime, limit: int = 500) -> list[tuple[uuid.UUID, str]]:
    """Deliveries whose next attempt (or expired lease, or manual retry) is due, oldest first, with
    their endpoint."""
    with pool.connection() as conn:
        rows = conn.execute("SELECT delivery_uuid, endpoint_id FROM webhook_deliveries_v1 WHERE due_at <= %s "
                            "ORDER BY due_at LIMIT %s", (now, limit)).fetchall()
    return [(row[0], row[1]) for row in rows]
