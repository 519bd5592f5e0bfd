"""Reads of ``voice_model_stats_v1``: per-engine statistics of the terminal calls of a window of
UTC days (the day a call was created). Percentiles are exact (``percentile_cont``) over the rows.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain.calls.engines import ENGINES
from domain.calls.pricing import money

_STATS = (
    "SELECT voice_engine, count(*) AS calls, "
    "count(*) FILTER (WHERE status = 'completed') AS completed, "
    "count(*) FILTER (WHERE status = 'failed') AS failed, "
    # the confidence of the outcomes delivered: a failed call has none to show
    "avg(confidence) FILTER (WHERE status = 'completed') AS mean_confidence, "
    "percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_seconds) AS p50, "
    "percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_seconds) AS p95, "
    "coalesce(sum(cost_total), 0) AS cost_total "
    "FROM voice_model_stats_v1 "
    "WHERE status IN ('completed', 'failed') AND day BETWEEN %(since)s AND %(until)s"
    "{mode} GROUP BY voice_engine"
)


def _ratio(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _engine(name: str, row: dict[str, Any] | None) -> dict[str, Any]:
    calls = int(row["calls"]) if row else 0
    completed = int(row["completed"]) if row else 0
    cost = Decimal(row["cost_total"]) if row else Decimal(0)
    return {
        "voice_engine": name,
        "calls": calls,
        "completed": completed,
        "failed": int(row["failed"]) if row else 0,
        "completion_rate": _ratio(completed / calls) if calls else None,
        "mean_confidence": _ratio(row["mean_confidence"]) if row else None,
        "p50_duration_seconds": _ratio(row["p50"]) if row else None,
        "p95_duration_seconds": _ratio(row["p95"]) if row else None,
        "cost_total": money(cost),
        "cost_per_call": money(cost / calls) if calls else None,
    }


async def engine_stats(pool: AsyncConnectionPool, *, since: date, until: date,
                       mode: str | None = None) -> list[dict[str, Any]]:
    """Every known engine (zeros when it ran no call), then any other engine found, by name."""
    params: dict[str, Any] = {"since": since, "until": until, "mode": mode}
    statement = _STATS.format(mode=" AND mode = %(mode)s" if mode is not None else "")
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(statement, params)
        rows = {row["voice_engine"]: row for row in await cur.fetchall()}
    names = [*ENGINES, *sorted(set(rows) - set(ENGINES))]
    return [_engine(name, rows.get(name)) for name in names]
