"""The five analytics reports (docs/analytics.md) over ``call_facts_v1``: one query per window
(two, run at once, with ``compare=prior``), then the rows put in order here: the top 8 groups and
Other, zeros where a bucket or group had no calls, and the figures derived from the sums.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain.analytics.reports import COST, FAILURES, LATENCY, OTHER, QUALITY, TOP, VOLUME, ReportQuery, buckets
from domain.calls.pricing import CENT_FRACTION, money
from domain.timestamps import iso
from projections.call_facts import latency
from projections.call_facts.latency import PERCENTILES
from projections.call_facts.source import BUCKET, sums_sql
from projections.call_facts.view import CONFIDENCE_BUCKETS

STATUSES = ("completed", "failed")
CONFIDENCE_SUMS = tuple(f"confidence_{k}" for k in range(CONFIDENCE_BUCKETS))
# A year of calls counted per value (or per group and bucket) is hashed in memory, not on disk; the
# plans are short enough that compiling them (JIT) costs more than it saves.
SETTINGS = ("SET LOCAL work_mem = '64MB'", "SET LOCAL jit = off")


@dataclass
class Report:
    """A report's answer (``body``) and what a comparison lines rows up by."""

    body: dict[str, Any]
    buckets: list[str | None]
    groups: list[Any] = field(default_factory=list)  # the group values kept, in order (OTHER last)


async def run(pool: AsyncConnectionPool, query: ReportQuery) -> tuple[Report, Report | None]:
    """The report, and with ``compare`` the prior window's, grouped by the current one's groups."""
    windows = [query, query.prior()] if query.compare else [query]
    if query.report == LATENCY:
        top = await _top(pool, query) if query.group_by else []
        answers = await asyncio.gather(*(_latency(pool, window, top) for window in windows))
        return answers[0], answers[1] if len(answers) > 1 else None
    keys, measures, reduce = _SUMMED[query.report](query)
    raws = await asyncio.gather(*(_fetch(pool, *sums_sql(window, keys, measures)) for window in windows))
    current = reduce(query, raws[0], None)
    prior = reduce(windows[1], raws[1], current.groups) if len(raws) > 1 else None
    return current, prior


async def _fetch(pool: AsyncConnectionPool, statement: str, params: dict[str, Any],
                 settings: tuple[str, ...] = SETTINGS) -> list[dict[str, Any]]:
    async with pool.connection() as conn, conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        for setting in settings:
            await cur.execute(setting)
        await cur.execute(statement, params, prepare=False)
        return await cur.fetchall()


# -- grouping ------------------------------------------------------------------------------------

def _rank(totals: dict[Any, int]) -> list[Any]:
    """The values with the most calls first (ties by value, None last); past TOP, one OTHER."""
    ordered = sorted((value for value, calls in totals.items() if calls), key=lambda v: (-totals[v], v is None, v or ""))
    return ordered if len(ordered) <= TOP else [*ordered[:TOP], OTHER]


def _groups(query: ReportQuery, rows: list[dict[str, Any]], kept: list[Any] | None,
            by: str | None = None, weight: Callable[[dict[str, Any]], int] = lambda row: int(row["calls"] or 0),
            ) -> tuple[list[Any], Callable[[Any], Any]]:
    """The groups to show and a value's group: this window's top values, or ``kept`` (a prior
    window shows the current one's groups, and OTHER for any value beyond them)."""
    by = by or query.group_by
    if by is None:
        return [None], lambda value: None
    if kept is None:
        totals: dict[Any, int] = defaultdict(int)
        for row in rows:
            totals[row[by]] += weight(row)
        kept = _rank(totals)
    named = set(kept) - {OTHER}
    labels = list(kept)
    if any(row[by] not in named and weight(row) for row in rows) and OTHER not in labels:
        labels.append(OTHER)
    return labels, lambda value: value if value in named else OTHER


def _bucket_labels(query: ReportQuery) -> list[str | None]:
    return [iso(b) for b in buckets(query.start, query.end, query.interval)] if query.interval else [None]


def _bucket(row: dict[str, Any]) -> str | None:
    value = row.get(BUCKET)
    return iso(value.replace(tzinfo=timezone.utc)) if isinstance(value, datetime) else None


def _body(query: ReportQuery, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"report": query.report, "start": iso(query.start), "end": iso(query.end), "interval": query.interval,
            "group_by": query.group_by, "filters": dict(query.filters), "data": rows}


def _labels(query: ReportQuery, bucket: str | None, group: Any) -> dict[str, Any]:
    row: dict[str, Any] = {} if bucket is None else {"bucket": bucket}
    if query.group_by is not None:
        row[query.group_by] = group
    return row


def _summed(rows: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], tuple[Any, ...]],
            measures: tuple[str, ...]) -> dict[tuple[Any, ...], dict[str, Any]]:
    totals: dict[tuple[Any, ...], dict[str, Any]] = defaultdict(lambda: dict.fromkeys(measures, 0))
    for row in rows:
        total = totals[key(row)]
        for name in measures:
            total[name] += row[name] or 0
    return totals


def _keys(query: ReportQuery, *own: str) -> tuple[str, ...]:
    names = [BUCKET] * bool(query.interval) + [query.group_by] * bool(query.group_by) + list(own)
    return tuple(dict.fromkeys(names))


def _pct(part: float, whole: float) -> float | None:
    return round(float(part) * 100 / float(whole), 2) if whole else None


# -- the summed reports -------------------------------------------------------------------------

def _volume_spec(query: ReportQuery) -> tuple[tuple[str, ...], tuple[str, ...], Any]:
    return _keys(query, "status"), ("calls",), _volume


def _volume(query: ReportQuery, rows: list[dict[str, Any]], kept: list[Any] | None) -> Report:
    groups, group_of = _groups(query, rows, kept)
    totals = _summed(rows, lambda r: (_bucket(r), group_of(r.get(query.group_by)), r["status"]), ("calls",))
    bucket_labels = _bucket_labels(query)
    out = [{**_labels(query, b, g), "status": s, "calls": int(totals.get((b, g, s), {"calls": 0})["calls"])}
           for b in bucket_labels for g in groups for s in STATUSES]
    return Report(_body(query, out), bucket_labels, groups)


_MONEY = ("cost_voice", "cost_extraction", "cost_total")


def _cost_spec(query: ReportQuery) -> tuple[tuple[str, ...], tuple[str, ...], Any]:
    return _keys(query), ("calls", *_MONEY), _cost


def _mean(total: Decimal, calls: int) -> str | None:
    return money((Decimal(total) / calls).quantize(CENT_FRACTION, ROUND_HALF_UP)) if calls else None


def _rounded(total: Decimal, count: int, places: str) -> float | None:
    return float((Decimal(total) / count).quantize(Decimal(places), ROUND_HALF_UP)) if count else None


def _cost(query: ReportQuery, rows: list[dict[str, Any]], kept: list[Any] | None) -> Report:
    groups, group_of = _groups(query, rows, kept)
    measures = ("calls", *_MONEY)
    totals = _summed(rows, lambda r: (_bucket(r), group_of(r.get(query.group_by))), measures)
    bucket_labels = _bucket_labels(query)
    out = []
    for b in bucket_labels:
        for g in groups:
            total = totals.get((b, g), dict.fromkeys(measures, 0))
            calls = int(total["calls"])
            out.append({**_labels(query, b, g), "calls": calls, **{m: money(Decimal(total[m])) for m in _MONEY},
                        **{f"mean_{m}": _mean(total[m], calls) for m in _MONEY}})
    return Report(_body(query, out), bucket_labels, groups)


def _failures_spec(query: ReportQuery) -> tuple[tuple[str, ...], tuple[str, ...], Any]:
    return _keys(query, "status", "error_code"), ("calls",), _failures


def _failures(query: ReportQuery, rows: list[dict[str, Any]], kept: list[Any] | None) -> Report:
    failed = [row for row in rows if row["status"] == "failed"]
    codes, code_of = _groups(query, failed, kept, by="error_code")
    calls = _summed(rows, lambda r: (_bucket(r),), ("calls",))
    failures = _summed(failed, lambda r: (_bucket(r), code_of(r["error_code"])), ("calls",))
    bucket_labels = _bucket_labels(query)
    out = []
    for b in bucket_labels:
        whole = int(calls.get((b,), {"calls": 0})["calls"])
        for code in codes:
            count = int(failures.get((b, code), {"calls": 0})["calls"])
            out.append({**_labels(query, b, None), "error_code": code, "failures": count, "calls": whole,
                        "share_pct": _pct(count, whole)})
    return Report(_body(query, out), bucket_labels, codes)


_QUALITY_SUMS = ("calls", "confidence_sum", "confidence_calls", *CONFIDENCE_SUMS, "optional_fields", "optional_filled")


def _quality_spec(query: ReportQuery) -> tuple[tuple[str, ...], tuple[str, ...], Any]:
    return _keys(query, "status", "error_code"), _QUALITY_SUMS, _quality


def _quality(query: ReportQuery, rows: list[dict[str, Any]], kept: list[Any] | None) -> Report:
    groups, group_of = _groups(query, rows, kept)
    key = lambda r: (_bucket(r), group_of(r.get(query.group_by)))  # noqa: E731
    totals = _summed(rows, key, _QUALITY_SUMS)
    completed = _summed((r for r in rows if r["status"] == "completed"), key, ("calls",))
    extraction = _summed((r for r in rows if r["error_code"] == "extraction_failed"), key, ("calls",))
    bucket_labels = _bucket_labels(query)
    out = []
    for b in bucket_labels:
        for g in groups:
            total = totals.get((b, g), dict.fromkeys(_QUALITY_SUMS, 0))
            calls, done = int(total["calls"]), int(completed.get((b, g), {"calls": 0})["calls"])
            rated = int(total["confidence_calls"])
            out.append({
                **_labels(query, b, g), "calls": calls, "completed": done, "completion_pct": _pct(done, calls),
                "confidence_calls": rated,
                "confidence_mean": _rounded(total["confidence_sum"], rated, "0.0001"),
                "confidence_histogram": [int(total[name]) for name in CONFIDENCE_SUMS],
                "optional_fields": int(total["optional_fields"]), "optional_filled": int(total["optional_filled"]),
                "optional_filled_pct": _pct(total["optional_filled"], total["optional_fields"]),
                "extraction_failures": int(extraction.get((b, g), {"calls": 0})["calls"]),
            })
    return Report(_body(query, out), bucket_labels, groups)


_SUMMED: dict[str, Callable[[ReportQuery], tuple[tuple[str, ...], tuple[str, ...], Any]]] = {
    VOLUME: _volume_spec, COST: _cost_spec, FAILURES: _failures_spec, QUALITY: _quality_spec,
}


# -- latency percentiles: exact, over the facts (latency.py) --------------------------------------------------

async def _top(pool: AsyncConnectionPool, query: ReportQuery) -> list[Any]:
    rows = await _fetch(pool, *sums_sql(query, (query.group_by,), ("calls",)))  # type: ignore[arg-type]
    return _rank({row[query.group_by]: int(row["calls"] or 0) for row in rows})


async def _latency(pool: AsyncConnectionPool, query: ReportQuery, top: list[Any]) -> Report:
    settings = SETTINGS if query.group_by or query.filters else (*SETTINGS, *latency.INDEX_ONLY)
    duration, audio = await asyncio.gather(*(_fetch(pool, *latency.counts_sql(query, top, column), settings)
                                             for column in latency.MEASURES.values()))
    found = latency.figures(duration, query, "duration")
    for key, more in latency.figures(audio, query, "first_audio").items():
        found.setdefault(key, {}).update(more)
    found = {(_bucket({BUCKET: b}) if b else None, g): figures for (b, g), figures in found.items()}
    groups = list(top) if query.group_by else [None]
    if query.group_by and any(key[1] == OTHER for key in found) and OTHER not in groups:
        groups.append(OTHER)
    bucket_labels = _bucket_labels(query)
    out = []
    for b in bucket_labels:
        for g in groups:
            row = found.get((b, g)) or {}
            out.append({
                **_labels(query, b, g), "calls": int(row.get("calls") or 0),
                "duration_calls": int(row.get("duration_calls") or 0),
                **{f"duration_seconds_p{p}": row.get(f"duration_p{p}") for p in PERCENTILES},
                "first_audio_calls": int(row.get("first_audio_calls") or 0),
                **{f"first_audio_ms_p{p}": row.get(f"first_audio_p{p}") for p in PERCENTILES},
            })
    return Report(_body(query, out), bucket_labels, groups)
