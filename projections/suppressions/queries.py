"""Reads of ``suppressions_v1``: the tenant's active suppressions (and, on request, removed ones)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain.timestamps import iso


async def list_suppressions(pool: AsyncConnectionPool, *, tenant_id: str, now: datetime,
                            include_removed: bool = False, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
    active = "" if include_removed else " AND removed_at IS NULL AND (expires_at IS NULL OR expires_at > %(now)s)"
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT * FROM suppressions_v1 WHERE tenant_id = %(tenant_id)s" + active
            + " ORDER BY added_at DESC, e164 LIMIT %(limit)s OFFSET %(offset)s",
            {"tenant_id": tenant_id, "now": now, "limit": limit, "offset": offset},
        )
        rows = await cur.fetchall()
    return [
        {
            "e164": row["e164"],
            "reason": row["reason"],
            "expires_at": iso(row["expires_at"]),
            "added_by": row["added_by"],
            "added_at": iso(row["added_at"]),
            "removed_by": row["removed_by"],
            "removed_at": iso(row["removed_at"]),
            "active": row["removed_at"] is None and (row["expires_at"] is None or row["expires_at"] > now),
        }
        for row in rows
    ]
