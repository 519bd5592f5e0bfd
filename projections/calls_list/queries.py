"""Reads of ``calls_list_v1``: a tenant's calls filtered, sorted and paged, and the CSV export's rows.

Values only ever travel as parameters; the SQL text is put together from the fixed fragments below.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

MAX_LIMIT = 200  # SPEC.md Limits: a server cap of 200 rows per page
EXPORT_BATCH = 1000

# Every order ends with the same unique tiebreak, so that offset paging never repeats or skips a call.
SORTS = {
    "created_desc": "created_at DESC, call_id DESC",
    "created_asc": "created_at ASC, call_id ASC",
    "duration_desc": "duration_seconds DESC NULLS LAST, created_at DESC, call_id DESC",
    "duration_asc": "duration_seconds ASC NULLS LAST, created_at DESC, call_id DESC",
    "confidence_desc": "confidence DESC NULLS LAST, created_at DESC, call_id DESC",
    "cost_desc": "cost_total DESC NULLS LAST, created_at DESC, call_id DESC",
}
# Equality filters: the counts table (view.py) is keyed by exactly these, so totals need no scan.
COUNTED_FILTERS = ("status", "mode", "direction", "voice_engine", "has_outcome")

_COLUMNS = (
    "call_id, status, mode, direction, voice_engine, to_number, from_number, objective, confidence, "
    "duration_seconds, cost_total, error_code, recording_url, has_outcome, created_at, metadata"
)
_EXPORT_COLUMNS = (
    "call_id, created_at, to_number, from_number, objective, status, confidence, duration_seconds, "
    "cost_total, error_code, recording_url"
)


@dataclass(frozen=True, kw_only=True)
class CallFilters:
    status: str | None = None
    mode: str | None = None
    direction: str | None = None
    voice_engine: str | None = None
    start: datetime | None = None  # created_at >= start
    end: datetime | None = None  # created_at < end
    to_prefix: str | None = None
    has_outcome: bool | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None
    sort: str = "created_desc"

    def __post_init__(self) -> None:
        if self.sort not in SORTS:
            raise ValueError(f"sort must be one of {', '.join(SORTS)}")

    @property
    def only_counted(self) -> bool:
        return all(v is None for v in (self.start, self.end, self.to_prefix, self.min_confidence, self.max_confidence))


@dataclass(frozen=True, kw_only=True)
class CallPage:
    items: list[dict[str, Any]]
    total: int
    limit: int
    offset: int


def _where(tenant_id: str, filters: CallFilters) -> tuple[str, dict[str, Any]]:
    clauses = ["tenant_id = %(tenant_id)s"]
    params: dict[str, Any] = {"tenant_id": tenant_id}
    for name in COUNTED_FILTERS:
        if getattr(filters, name) is not None:
            clauses.append(f"{name} = %({name})s")
            params[name] = getattr(filters, name)
    optional = (
        ("start", "created_at >= %(start)s", filters.start),
        ("end", "created_at < %(end)s", filters.end),
        ("to_pattern", "to_number LIKE %(to_pattern)s", _prefix_pattern(filters.to_prefix)),
        ("min_confidence", "confidence >= %(min_confidence)s", filters.min_confidence),
        ("max_confidence", "confidence <= %(max_confidence)s", filters.max_confidence),
    )
    for name, clause, value in optional:
        if value is not None:
            clauses.append(clause)
            params[name] = value
    return " AND ".join(clauses), params


def _prefix_pattern(prefix: str | None) -> str | None:
    if prefix is None:
        return None
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


async def list_calls(
    pool: AsyncConnectionPool, *, tenant_id: str, filters: CallFilters, limit: int, offset: int
) -> CallPage:
    limit = max(1, min(limit, MAX_LIMIT))
    offset = max(0, offset)
    where, params = _where(tenant_id, filters)
    page = (
        f"SELECT {_COLUMNS} FROM calls_list_v1 WHERE {where} "
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
            await cur.execute(_count_query(where, filters), params, prepare=False)
            total = int((await cur.fetchone())["total"])
    return CallPage(items=[_item(row) for row in rows], total=total, limit=limit, offset=offset)


def _count_query(where: str, filters: CallFilters) -> str:
    if filters.only_counted:  # a sum over at most a few dozen rows per tenant
        return f"SELECT COALESCE(sum(calls), 0) AS total FROM calls_list_v1_counts WHERE {where}"
    # Ranges and prefixes: counted from the rows, in time proportional to the matches.
    return f"SELECT count(*) AS total FROM calls_list_v1 WHERE {where}"


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
        "created_at": _iso(row["created_at"]),
        "mode": row["mode"],
        "direction": row["direction"],
        "voice_engine": row["voice_engine"],
        "has_outcome": row["has_outcome"],
        "metadata": row["metadata"],
    }


async def export_rows(
    pool: AsyncConnectionPool, *, tenant_id: str, status: str | None = None, limit: int = 10000
) -> AsyncIterator[tuple[Any, ...]]:
    """The tenant's newest ``limit`` calls in the CSV column order (csv_export.CSV_COLUMNS), read
    through a server-side cursor in batches, so memory stays flat whatever the limit."""
    clauses = "tenant_id = %(tenant_id)s" + (" AND status = %(status)s" if status is not None else "")
    query = (
        f"SELECT {_EXPORT_COLUMNS} FROM calls_list_v1 WHERE {clauses} "
        f"ORDER BY {SORTS['created_desc']} LIMIT %(limit)s"
    )
    params = {"tenant_id": tenant_id, "status": status, "limit": max(0, limit)}
    # A server-side cursor lives in a transaction, also on the pool's autocommit connections.
    async with pool.connection() as conn, conn.transaction(), conn.cursor(name="calls_export") as cur:
        await cur.execute(query, params)
        while rows := await cur.fetchmany(EXPORT_BATCH):
            for row in rows:
                yield (row[0], _iso(row[1]), *row[2:8], _decimal(row[8]), row[9], row[10])


def _decimal(value: Decimal | None) -> str | None:
    return format(value, "f") if value is not None else None


def _iso(value: datetime) -> str:
    # The session time zone decides how timestamptz comes back; the wire is always UTC.
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
