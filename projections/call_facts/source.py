"""Sums of the call facts over a report's window, by the keys a report asks for, read from a daily
rollup for whole UTC days where one holds every key and filter, and from the facts otherwise (the
partial days at the window's edges, hourly buckets, keys no rollup holds together).

Every figure a report shows but its percentiles is a sum, so the two sources answer alike: the
rollup's row is the sum of the same expressions over its facts (view.ROLLUP_SUMS).
"""

from __future__ import annotations

from datetime import datetime, time, timedelta, timezone
from typing import Any

from domain.analytics.reports import ReportQuery
from projections.call_facts.view import ROLLUP_SUMS, ROLLUPS, Rollup

BUCKET = "bucket"


def _midnight_after(moment: datetime) -> datetime:
    day = datetime.combine(moment.date(), time(), timezone.utc)
    return day if day == moment else day + timedelta(days=1)


def _midnight_before(moment: datetime) -> datetime:
    return datetime.combine(moment.date(), time(), timezone.utc)


def filters_where(query: ReportQuery, params: dict[str, Any]) -> str:
    """The tenant and the query's filters as a WHERE clause, their values bound in ``params``."""
    clauses = ["tenant_id = %(tenant_id)s"]
    params["tenant_id"] = query.tenant_id
    for name, value in query.filters:
        params[f"filter_{name}"] = value
        clauses.append(f"{name} = %(filter_{name})s")
    return " AND ".join(clauses)


def rollup_for(query: ReportQuery, keys: tuple[str, ...]) -> Rollup | None:
    """The first rollup holding every key and filter of the query; None for hourly buckets."""
    wanted = {key for key in keys if key != BUCKET} | {name for name, _ in query.filters}
    if query.interval == "hour":
        return None
    return next((rollup for rollup in ROLLUPS if wanted <= set(rollup.keys)), None)


def sums_sql(query: ReportQuery, keys: tuple[str, ...], measures: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """One statement: a row per distinct ``keys`` (``bucket`` is the start of the query's interval,
    as a UTC timestamp) with the sum of each of ``measures`` (names of view.ROLLUP_SUMS)."""
    params: dict[str, Any] = {"start": query.start, "end": query.end}
    where = filters_where(query, params)
    dims = [key for key in keys if key != BUCKET]
    parts = []
    first, last = _midnight_after(query.start), _midnight_before(query.end)
    rollup = rollup_for(query, keys)
    if rollup is not None and first < last:
        params["first_day"], params["last_day"] = first.date(), last.date()
        columns = [f"NULLIF({d}, '') AS {d}" for d in dims]  # '' is NULL in a rollup's key (view.Rollup)
        if BUCKET in keys:
            columns.insert(0, f"date_trunc('{query.interval}', day::timestamp) AS {BUCKET}")
        sums = [f"sum({name}) AS {name}" for name in measures]
        parts.append(_part(columns, sums, f"call_facts_v1_{rollup.name}",
                           f"{where} AND day >= %(first_day)s AND day < %(last_day)s", len(columns)))
        windows = [("%(start)s", "%(first)s"), ("%(last)s", "%(end)s")]
        params["first"], params["last"] = first, last
    else:
        windows = [("%(start)s", "%(end)s")]
    columns = list(dims)
    if BUCKET in keys:
        columns.insert(0, f"date_trunc('{query.interval}', created_at AT TIME ZONE 'UTC') AS {BUCKET}")
    sums = [f"sum({ROLLUP_SUMS[name]}) AS {name}" for name in measures]
    for low, high in windows:
        parts.append(_part(columns, sums, "call_facts_v1", f"{where} AND created_at >= {low} AND created_at < {high}",
                           len(columns)))
    names = [BUCKET] * (BUCKET in keys) + dims
    outer = [*names, *(f"sum({name}) AS {name}" for name in measures)]
    grouping = f" GROUP BY {', '.join(names)}" if names else ""
    union = " UNION ALL ".join(f"({part})" for part in parts)
    return f"SELECT {', '.join(outer)} FROM ({union}) AS parts{grouping}", params


def _part(columns: list[str], sums: list[str], table: str, where: str, keys: int) -> str:
    grouping = f" GROUP BY {', '.join(str(i + 1) for i in range(keys))}" if keys else ""
    return f"SELECT {', '.join([*columns, *sums])} FROM {table} WHERE {where}{grouping}"
