"""Reads of ``flows_v1``: a tenant's flows in every state, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain.timestamps import iso
from projections.view import keyset_page


@dataclass(frozen=True, kw_only=True)
class FlowPage:
    rows: list[dict[str, Any]]
    after: int | None  # the position of the last row when more follow


async def list_flows(pool: AsyncConnectionPool, *, tenant_id: str, limit: int = 50, state: str | None = None,
                     after: int | None = None) -> FlowPage:
    """Newest first (in the order they were drafted); ``after`` (a previous page's) continues past that row."""
    where, params = "", {"tenant_id": tenant_id, "limit": limit + 1, "after": after, "state": state}
    if after is not None:
        where += " AND position < %(after)s"
    if state is not None:
        where += " AND state = %(state)s"
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT flow_id, position, name, state, draft_version, published_version, created_at, updated_at "
            "FROM flows_v1 WHERE tenant_id = %(tenant_id)s" + where + " ORDER BY position DESC LIMIT %(limit)s",
            params,
        )
        rows = await cur.fetchall()
    page, after = keyset_page(rows, limit, "position")
    return FlowPage(rows=[_summary(row) for row in page], after=after)


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["flow_id"], "name": row["name"], "state": row["state"], "draft_version": row["draft_version"],
            "published_version": row["published_version"], "created_at": iso(row["created_at"]),
            "updated_at": iso(row["updated_at"])}
