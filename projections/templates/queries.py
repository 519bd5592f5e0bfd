"""Reads of ``templates_v1``: a tenant's templates, newest first, deleted ones left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from projections.view import keyset_page


@dataclass(frozen=True, kw_only=True)
class TemplatePage:
    rows: list[dict[str, Any]]
    after: int | None  # the position of the last row when more follow


async def list_templates(pool: AsyncConnectionPool, *, tenant_id: str, limit: int = 50,
                         after: int | None = None) -> TemplatePage:
    """Newest first (in the order they were defined); ``after`` (a previous page's) continues past that row."""
    where, params = "", {"tenant_id": tenant_id, "limit": limit + 1, "after": after}
    if after is not None:
        where = " AND position < %(after)s"
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT position, record FROM templates_v1 WHERE tenant_id = %(tenant_id)s "
            "AND deleted_at IS NULL" + where + " ORDER BY position DESC LIMIT %(limit)s",
            params,
        )
        rows = await cur.fetchall()
    page, after = keyset_page(rows, limit, "position")
    return TemplatePage(rows=[row["record"] for row in page], after=after)
