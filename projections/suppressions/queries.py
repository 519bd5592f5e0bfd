"""Reads of ``suppressions_v1``: the tenant's active suppressions (and, on request, removed ones)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain.timestamps import iso


@dataclass(frozen=True, kw_only=True)
class SuppressionPage:
    rows: list[dict[str, Any]]
    after: tuple[datetime, str] | None  # the sort key of the last row when more follow; None on the last page


async def list_suppressions(pool: AsyncConnectionPool, *, tenant_id: str, now: datetime,
                            include_removed: bool = False, limit: int = 100, offset: int = 0,
                            after: tuple[datetime, str] | None = None) -> SuppressionPage:
    """Newest first; ``after`` (a previous page's) continues past that row: keyset paging."""
    active = "" if include_removed else " AND removed_at IS NULL AND (expires_at IS NULL OR expires_at > %(now)s)"
    params: dict[str, Any] = {"tenant_id": tenant_id, "now": now, "limit": limit + 1, "offset": offset}
    if after is not None:
        active += " AND (added_at < %(added_at)s OR (added_at = %(added_at)s AND e164 > %(e164)s))"
        params["added_at"], params["e164"] = after
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT e164, reason, expires_at, added_by, added_at, removed_by, removed_at FROM suppressions_v1 "
            "WHERE tenant_id = %(tenant_id)s" + active
            + " ORDER BY added_at DESC, e164 LIMIT %(limit)s OFFSET %(offset)s",
            params,
        )
        rows = await cur.fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    last = (rows[-1]["added_at"], rows[-1]["e164"]) if more and rows else None
    return SuppressionPage(rows=_views(rows, now), after=last)


def _views(rows: list[dict[str, Any]], now: datetime) -> list[dict[str, Any]]:
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
