"""Reads of ``calls_list_v1``: a tenant's calls filtered, sorted and paged, and the CSV export's rows.

Values only ever travel as parameters; the SQL text is put together from the fixed fragments below.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain.timestamps import iso
from projections.calls_list.view import CONFIDENCE_BUCKETS, PREFIX_COUNTED

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
# Equality filters: the counts tables (view.py) are keyed by exactly these (and the UTC day).
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


@dataclass(frozen=True, kw_only=True)
class CallPage:
    items: list[dict[str, Any]]
    total: int
    limit: int
    offset: int


def _counted_where(tenant_id: str, filters: CallFilters) -> tuple[str, dict[str, Any]]:
    """The clauses on columns that the rows and both counts tables share."""
    clauses = ["tenant_id = %(tenant_id)s"]
    params: dict[str, Any] = {"tenant_id": tenant_id}
    for name in COUNTED_FILTERS:
        if getattr(filters, name) is not None:
            clauses.append(f"{name} = %({name})s")
            params[name] = getattr(filters, name)
    return " AND ".join(clauses), params


def _where(tenant_id: str, filters: CallFilters) -> tuple[str, dict[str, Any]]:
    where, params = _counted_where(tenant_id, filters)
    clauses = [where]
    optional = (
        ("start", "created_at >= %(start)s", _utc(filters.start)),
        ("end", "created_at < %(end)s", _utc(filters.end)),
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
            await cur.execute(*_total_query(tenant_id, filters), prepare=False)
            total = int((await cur.fetchone())["total"])
    return CallPage(items=[_item(row) for row in rows], total=total, limit=limit, offset=offset)


def _total_query(tenant_id: str, filters: CallFilters) -> tuple[str, dict[str, Any]]:
    """``total`` without reading every match where the counts tables (view.py) can say it.

    Equality filters: a sum over the counts table (a few dozen rows per tenant). A to_prefix of up
    to PREFIX_COUNTED characters: the same from the prefix counts; a longer one matches few calls,
    which are counted. start/end and min/max_confidence: the whole buckets inside the range from
    their counts tables, and only the rows at its edges counted (_range_terms). Two of prefix,
    start/end and confidence together: no counts table has both keys, so the rows are counted.
    """
    counted, params = _counted_where(tenant_id, filters)
    by_prefix = filters.to_prefix is not None
    by_date = filters.start is not None or filters.end is not None
    by_confidence = filters.min_confidence is not None or filters.max_confidence is not None
    if sum((by_prefix, by_date, by_confidence)) > 1:
        return _counted_rows(tenant_id, filters)
    if by_prefix:
        if not 0 < len(filters.to_prefix) <= PREFIX_COUNTED:
            return _counted_rows(tenant_id, filters)
        params["prefix"] = filters.to_prefix
        return ("SELECT COALESCE(sum(calls), 0) AS total FROM calls_list_v1_prefix_counts "
                f"WHERE {counted} AND prefix = %(prefix)s"), params
    if by_date:
        terms = _range_terms(counted, params, _CREATED, _utc(filters.start), _utc(filters.end))
    elif by_confidence:
        terms = _range_terms(counted, params, _CONFIDENCE, filters.min_confidence, filters.max_confidence)
    else:
        terms = [f"(SELECT COALESCE(sum(calls), 0) FROM calls_list_v1_counts WHERE {counted})"]
    return f"SELECT {' + '.join(terms) or '0'} AS total", params


def _counted_rows(tenant_id: str, filters: CallFilters) -> tuple[str, dict[str, Any]]:
    where, params = _where(tenant_id, filters)
    return f"SELECT count(*) AS total FROM calls_list_v1 WHERE {where}", params


@dataclass(frozen=True)
class _Buckets:
    """Buckets of a row value, and the counts table that keeps calls per bucket (column ``key``):
    bucket ``b`` holds the values from ``start(b)`` up to ``start(after(b))``."""

    table: str
    key: str
    holding: Callable[[Any], Any]  # the bucket a value falls in
    start: Callable[[Any], Any]
    after: Callable[[Any], Any]  # the next bucket

    def from_(self, value: Any) -> Any:
        """The first bucket that starts at or after ``value``."""
        bucket = self.holding(value)
        return bucket if self.start(bucket) == value else self.after(bucket)


@dataclass(frozen=True)
class _Range:
    """A range filter on a row column, ``low <= column`` and ``column {below} high``; ``levels``
    are bucketings of the column, widest first, each bucket a run of whole buckets of the next."""

    column: str
    below: str  # "<" (end is exclusive) or "<=" (max_confidence is inclusive)
    levels: tuple[_Buckets, ...]


def _range_terms(counted: str, params: dict[str, Any], range_: _Range, low: Any | None, high: Any | None,
                 level: int = 0, below: str | None = None) -> list[str]:
    """SQL terms adding up to the calls in the range: the whole buckets of ``level`` inside it,
    summed from their counts table, and the two partial ones at its edges handed to the next level,
    whose own partial ones go on down; below the narrowest, the few rows left are counted."""
    below = below or range_.below
    if low is not None and high is not None and (low > high or (low == high and below == "<")):
        return []  # an empty range
    if level == len(range_.levels):
        bounds = [counted]
        if low is not None:
            bounds.append(f"{range_.column} >= {_bind(params, low)}")
        if high is not None:
            bounds.append(f"{range_.column} {below} {_bind(params, high)}")
        return [f"(SELECT count(*) FROM calls_list_v1 WHERE {' AND '.join(bounds)})"]
    buckets = range_.levels[level]
    first = buckets.from_(low) if low is not None else None
    stop = buckets.holding(high) if high is not None else None  # the bucket after the last whole one
    if first is not None and stop is not None and first >= stop:  # no whole bucket
        return _range_terms(counted, params, range_, low, high, level + 1, below)
    whole = [counted]
    edges = []
    if first is not None:
        whole.append(f"{buckets.key} >= {_bind(params, first)}")
        edges += _range_terms(counted, params, range_, low, buckets.start(first), level + 1, "<")
    if stop is not None:
        whole.append(f"{buckets.key} < {_bind(params, stop)}")
        edges += _range_terms(counted, params, range_, buckets.start(stop), high, level + 1, below)
    return [f"(SELECT COALESCE(sum(calls), 0) FROM {buckets.table} WHERE {' AND '.join(whole)})", *edges]


def _bind(params: dict[str, Any], value: Any) -> str:
    """A placeholder for ``value`` under a name of its own (a range has a dozen bounds or so)."""
    name = f"bound_{len(params)}"
    params[name] = value
    return f"%({name})s"


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), timezone.utc)


def _month(moment: datetime) -> date:
    return moment.date().replace(day=1)


# A month's calls in one counts row per filter combination, so that a year is a dozen rows (not
# 365): the days only at the range's partial months, the rows only at its partial days.
_CREATED = _Range("created_at", "<", (
    _Buckets("calls_list_v1_monthly_counts", "month", holding=_month, start=_midnight,
             after=lambda month: _month(_midnight(month) + timedelta(days=31))),
    _Buckets("calls_list_v1_daily_counts", "day", holding=lambda moment: moment.date(), start=_midnight,
             after=lambda day: day + timedelta(days=1)),
))
# Bucket k holds k/128 <= confidence < (k+1)/128, exactly (view.CONFIDENCE_BUCKETS); NULL is in none.
_CONFIDENCE = _Range("confidence", "<=", (
    _Buckets("calls_list_v1_confidence_counts", "bucket", holding=lambda value: math.floor(value * CONFIDENCE_BUCKETS),
             start=lambda bucket: bucket / CONFIDENCE_BUCKETS, after=lambda bucket: bucket + 1),
))


def _utc(moment: datetime | None) -> datetime | None:
    """Timestamps without a zone are read as UTC (the wire is UTC), never as the session's zone."""
    if moment is None:
        return None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


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
                yield (row[0], iso(row[1]), *row[2:8], _decimal(row[8]), row[9], row[10])


def _decimal(value: Decimal | None) -> str | None:
    return format(value, "f") if value is not None else None


