"""Reads of ``calls_list_v1``: a tenant's calls filtered, sorted and paged, and the CSV export's rows.

Values only ever travel as parameters; the SQL text is put together from the fixed fragments below.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain.timestamps import iso
from projections.calls_list.filters import SORTS, CallFilters, where
from projections.calls_list.totals import total_query

__all__ = ["MAX_LIMIT", "SORTS", "CallFilters", "CallPage", "export_rows", "list_calls"]

MAX_LIMIT = 200  # SPEC.md Limits: a server cap of 200 rows per page
EXPORT_BATCH = 1000

_COLUMNS = (
    "call_id, status, mode, direction, voice_engine, to_number, from_number, objective, confidence, "
    "duration_seconds, cost_total, error_code, recording_url, has_outcome, created_at, metadata"
)
_EXPORT_COLUMNS = (
    "call_id, created_at, to_number, from_number, objective, status, confidence, duration_seconds, "
    "cost_total, error_code, recording_url"
)
# What a caller reads as the call's outcome: only a completed call shows one (serializers.call_record).
_EXPORT_OUTCOME = ", CASE WHEN status = 'completed' THEN outcome END AS outcome"


@dataclass(frozen=True, kw_only=True)
class CallPage:
    items: list[dict[str, Any]]
    total: int
    limit: int
    offset: int


async def list_calls(
    pool: AsyncConnectionPool, *, tenant_id: str, filters: CallFilters, limit: int, offset: int
) -> CallPage:
    limit = max(1, min(limit, MAX_LIMIT))
    offset = max(0, offset)
    where_clause, params = where(tenant_id, filters)
    page = (
        f"SELECT {_COLUMNS} FROM calls_list_v1 WHERE {where_clause} "
        f"ORDER BY {SORTS[filters.sort]} LIMIT %(limit)s OFFSET %(offset)s"
    )
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        # Planned with the actual values, never a cached generic plan: LIKE 'prefix%' uses the
        # to_number index only when the planner sees the prefix, and selectivity picks the index.
        await cur.execute(page, {**params, "limit": limit, "offset": offset}, prepare=False)
        rows = await cur.fetchall()
        if len(rows) < limit and (rows or offset == 0):
            total = offset + len(rows)  # the last page: nothing to count
        else:
            await cur.execute(*total_query(tenant_id, filters), prepare=False)
            total = int((await cur.fetchone())["total"])
    return CallPage(items=[_item(row) for row in rows], total=total, limit=limit, offset=offset)


def _item(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "call_id": row["call_id"],
        "status": row["status"],
        "to": row["to_number"],
        "from": row["from_number"],
        "objective": row["objective"],
        "confidence": row["confidence"],
        "duration_seconds": row["duration_seconds"],
        "cost_total": _decimal(row["cost_total"]),
        "error_code": row["error_code"],
        "recording_url": row["recording_url"],
        "created_at": iso(row["created_at"]),
        "mode": row["mode"],
        "direction": row["direction"],
        "voice_engine": row["voice_engine"],
        "has_outcome": row["has_outcome"],
        "metadata": row["metadata"],
    }


async def export_rows(
    pool: AsyncConnectionPool, *, tenant_id: str, status: str | None = None, limit: int = 10000,
    outcome: bool = False,
) -> AsyncIterator[tuple[Any, ...]]:
    """The tenant's newest ``limit`` calls in the CSV column order (csv_export.CSV_COLUMNS), read
    through a server-side cursor in batches, so memory stays flat whatever the limit.

    With ``outcome``, the first item is the outcome field names of those calls (sorted), and each
    row ends with its outcome (a completed call's; None otherwise). Both are read in one snapshot.
    """
    clauses = "tenant_id = %(tenant_id)s" + (" AND status = %(status)s" if status is not None else "")
    columns = _EXPORT_COLUMNS + (_EXPORT_OUTCOME if outcome else "")
    query = (
        f"SELECT {columns} FROM calls_list_v1 WHERE {clauses} "
        f"ORDER BY {SORTS['created_desc']} LIMIT %(limit)s"
    )
    params = {"tenant_id": tenant_id, "status": status, "limit": max(0, limit)}
    # A server-side cursor lives in a transaction, also on the pool's autocommit connections.
    async with pool.connection() as conn, conn.transaction():
        if outcome:
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            names = await conn.execute(
                f"SELECT DISTINCT name FROM (SELECT {_EXPORT_OUTCOME.lstrip(', ')} FROM calls_list_v1 "
                f"WHERE {clauses} ORDER BY {SORTS['created_desc']} LIMIT %(limit)s) AS exported "
                "CROSS JOIN LATERAL jsonb_object_keys(exported.outcome) AS name "
                "WHERE jsonb_typeof(exported.outcome) = 'object'", params)
            yield tuple(sorted(row[0] for row in await names.fetchall()))
        async with conn.cursor(name="calls_export") as cur:
            await cur.execute(query, params)
            while rows := await cur.fetchmany(EXPORT_BATCH):
                for row in rows:
                    yield (row[0], iso(row[1]), *row[2:8], _decimal(row[8]), *row[9:])


def _decimal(value: Decimal | None) -> str | None:
    return format(value, "f") if value is not None else None


