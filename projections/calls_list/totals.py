"""``total`` of a calls-list page from the counts tables (view.py, decision 21): whole buckets
summed from their counts, only the rows at a range's edges counted."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

from projections.calls_list.filters import CallFilters, counted_where, utc, where
from projections.calls_list.view import CONFIDENCE_BUCKETS, PREFIX_COUNTED


def total_query(tenant_id: str, filters: CallFilters) -> tuple[str, dict[str, Any]]:
    """``total`` without reading every match where the counts tables (view.py) can say it.

    Equality filters: a sum over the counts table (a few dozen rows per tenant). A to_prefix of up
    to PREFIX_COUNTED characters: the same from the prefix counts; a longer one matches few calls,
    which are counted. start/end and min/max_confidence: the whole buckets inside the range from
    their counts tables, and only the rows at its edges counted (_range_terms). Two of prefix,
    start/end and confidence together: no counts table has both keys, so the rows are counted.
    """
    counted, params = counted_where(tenant_id, filters)
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
        terms = _range_terms(counted, params, _CREATED, utc(filters.start), utc(filters.end))
    elif by_confidence:
        terms = _range_terms(counted, params, _CONFIDENCE, filters.min_confidence, filters.max_confidence)
    else:
        terms = [f"(SELECT COALESCE(sum(calls), 0) FROM calls_list_v1_counts WHERE {counted})"]
    return f"SELECT {' + '.join(terms) or '0'} AS total", params


def _counted_rows(tenant_id: str, filters: CallFilters) -> tuple[str, dict[str, Any]]:
    clauses, params = where(tenant_id, filters)
    return f"SELECT count(*) AS total FROM calls_list_v1 WHERE {clauses}", params


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
