"""Exact percentiles of duration and of time to first agent audio (latency-percentiles).

The facts are counted per value (a hash aggregate, which PostgreSQL runs in parallel) and the
percentiles worked out from the counts the way ``percentile_cont`` works them out from the sorted
values: the value at fractional rank ``p × (n - 1)``, interpolated between its two neighbours.
The same figures as ``percentile_cont`` (tests/integration/test_analytics_reports.py compares
them), without sorting a year of calls twice.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from domain.analytics.reports import OTHER, ReportQuery
from projections.call_facts.source import BUCKET, filters_where

PERCENTILES = (50, 90, 95, 99)
# Ungrouped, the counts read only columns of call_facts_v1_created_idx: an index-only scan of it
# beats a scan of the wide rows even for a tenant's whole table (210 against 300 ms for a year of
# a million calls, both measures at once), but the planner prices the heap scan lower once most of
# the table matches. Only for counts without a group or filter: those read columns of the rows.
INDEX_ONLY = ("SET LOCAL enable_seqscan = off",)
MEASURES = {"duration": "duration_seconds", "first_audio": "first_audio_ms"}


def counts_sql(query: ReportQuery, top: list[Any], column: str) -> tuple[str, dict[str, Any]]:
    """Calls per bucket, group (the top values, the rest as OTHER) and value of ``column`` (NULL too)."""
    params: dict[str, Any] = {"start": query.start, "end": query.end, "other": OTHER}
    where = [filters_where(query, params), "created_at >= %(start)s", "created_at < %(end)s"]
    columns = []
    if query.interval:
        columns.append(f"date_trunc('{query.interval}', created_at AT TIME ZONE 'UTC') AS {BUCKET}")
    if query.group_by:
        g = query.group_by
        params["top"] = [value for value in top if value not in (None, OTHER)]
        params["top_null"] = None in top
        columns.append(f"CASE WHEN {g} IS NULL THEN CASE WHEN %(top_null)s THEN NULL ELSE %(other)s END "
                       f"WHEN {g} = ANY(%(top)s) THEN {g} ELSE %(other)s END AS {g}")
    columns.append(f"{column} AS value")
    grouping = ", ".join(str(i + 1) for i in range(len(columns)))
    return (f"SELECT {', '.join(columns)}, count(*) AS calls FROM call_facts_v1 WHERE {' AND '.join(where)} "
            f"GROUP BY {grouping}"), params


def percentile(counts: list[tuple[int, int]], fraction: float) -> float | None:
    """``percentile_cont(fraction)`` of the values whose (value, count) pairs are ``counts``, in
    value order."""
    total = sum(count for _, count in counts)
    if not total:
        return None
    position = fraction * (total - 1)
    low, high = math.floor(position), math.ceil(position)
    first = second = None
    seen = 0
    for value, count in counts:
        seen += count
        if first is None and seen > low:
            first = value
        if seen > high:
            second = value
            break
    assert first is not None and second is not None
    return round(first + (position - low) * (second - first), 3)


def figures(rows: list[dict[str, Any]], query: ReportQuery, name: str) -> dict[tuple[Any, Any], dict[str, Any]]:
    """Per (bucket, group): ``calls`` (all of them), ``<name>_calls`` (with a value) and the percentiles."""
    values: dict[tuple[Any, Any], list[tuple[int, int]]] = defaultdict(list)
    calls: dict[tuple[Any, Any], int] = defaultdict(int)
    for row in rows:
        key = (row.get(BUCKET), row.get(query.group_by) if query.group_by else None)
        calls[key] += row["calls"]
        if row["value"] is not None:
            values[key].append((row["value"], row["calls"]))
    found = {}
    for key, total in calls.items():
        counts = sorted(values[key])
        found[key] = {"calls": total, f"{name}_calls": sum(count for _, count in counts),
                      **{f"{name}_p{p}": percentile(counts, p / 100) for p in PERCENTILES}}
    return found
