"""The analytics reports on 1,000,000 call facts of one tenant (issue 16; ARCHITECTURE.md §11).

Each report runs as the API runs it (``reports.run`` and ``compare.compared``), over a 30-day and a
365-day window, with and without ``compare=prior``; the ceiling is a ``SELECT count(*)`` of the
same window's facts on the same pool, measured in the same run. Targets: p95 under 100 ms for 30
days and under 300 ms for 365 days. Every volume answer is checked against that count.
Run: ``.venv/bin/python bench/analytics.py``; see bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.calls_list_latency import before_bulk_load, drop, find_server, summary, timed, view_ddl  # noqa: E402
from domain.analytics.reports import COST, FAILURES, LATENCY, QUALITY, REPORTS, VOLUME, ReportQuery  # noqa: E402
from projections.call_facts.compare import compared  # noqa: E402
from projections.call_facts.reports import run  # noqa: E402
from projections.call_facts.view import ROLLUPS, CallFactsView  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "analytics.json"
TENANT = "ten_" + "b" * 32
END = datetime(2026, 11, 1, tzinfo=timezone.utc)  # the newest fact; a year of them before it
STATEMENT_TIMEOUT_MS = 60_000
TARGETS_MS = {30: 100.0, 365: 300.0}

# One row per terminal call from independent draws (setseed makes the data set repeatable): 80 %
# completed; failures over 10 error codes, skewed; 15 % inbound, 10 % simulated; engines 60/30/10;
# 20 numbers and 12 countries; first agent audio known for live calls only.
FILL = """
INSERT INTO {table} (call_id, tenant_id, created_at, ended_at, direction, mode, status, error_code, voice_engine,
    number_id, to_country, from_country, country, duration_seconds, first_audio_ms, confidence, cost_voice,
    cost_extraction, cost_total, fields_filled, fields_required, fields_optional, optional_filled)
SELECT 'cll_' || md5(%(tenant)s || ':' || i), %(tenant)s, created_at, created_at + make_interval(secs => duration),
    direction, mode, status,
    CASE WHEN status = 'failed' THEN (ARRAY['no_answer', 'busy', 'machine_detected', 'hung_up', 'extraction_failed',
        'carrier_error', 'timeout', 'invalid_number', 'rejected', 'fax_detected'])[1 + floor(r_code ^ 2 * 10)::int] END,
    CASE WHEN r_engine < 0.6 THEN 'alpha_25' WHEN r_engine < 0.9 THEN 'alpha_31' ELSE 'beta_think_fast' END,
    '00000000-0000-4000-8000-' || lpad(floor(r_number * 20)::int::text, 12, '0'),
    country, 'US', country,
    CASE WHEN status = 'completed' OR r_code < 0.5 THEN duration END,
    CASE WHEN mode = 'live' THEN 300 + floor(r_audio * 2000)::int END,
    CASE WHEN status = 'completed' THEN round(r_confidence::numeric, 3)::float8 END,
    round((duration * 0.0015)::numeric, 4), CASE WHEN status = 'completed' THEN 0.0021 ELSE 0 END,
    round((duration * 0.0015)::numeric, 4) + CASE WHEN status = 'completed' THEN 0.0021 ELSE 0 END,
    CASE WHEN status = 'completed' THEN 2 + floor(r_fields * 3)::int ELSE 0 END, 2, 2,
    CASE WHEN status = 'completed' THEN floor(r_fields * 3)::int ELSE 0 END
FROM (
    SELECT *, CASE WHEN r_status < 0.8 THEN 'completed' ELSE 'failed' END AS status,
        CASE WHEN r_direction < 0.15 THEN 'inbound' ELSE 'outbound' END AS direction,
        CASE WHEN r_mode < 0.1 THEN 'simulated' ELSE 'live' END AS mode,
        (ARRAY['GB', 'US', 'FR', 'DE', 'ES', 'IT', 'NL', 'BE', 'IE', 'PT', 'SE', 'NO'])[1 + floor(r_country ^ 2 * 12)::int]
            AS country,
        floor(r_duration * 900)::int AS duration
    FROM (  -- volatile draws: PostgreSQL evaluates them once per row and keeps this level apart
        SELECT i, random() AS r_status, random() AS r_direction, random() AS r_mode, random() AS r_engine,
            random() AS r_number, random() AS r_country, random() AS r_code, random() AS r_duration,
            random() AS r_audio, random() AS r_confidence, random() AS r_fields,
            %(end)s::timestamptz - make_interval(secs => (%(rows)s - i) * %(span)s::float8 / %(rows)s) AS created_at
        FROM generate_series(1::bigint, %(rows)s::bigint) AS i
    ) AS draws
) AS drawn
"""


def fill(db: Any, rows: int, others: int, other_rows: int, days: int) -> dict[str, Any]:
    """The view's own DDL, its indexes built after the bulk insert; the rollups fill from the trigger."""
    statements = view_ddl(db, CallFactsView)
    table = sql.Identifier(db.schema, CallFactsView.table)
    started = time.perf_counter()
    with psycopg.connect(db.conninfo(), autocommit=True) as conn:
        before_bulk_load(conn, db, CallFactsView.table)
        conn.execute("SET work_mem = '64MB'")
        conn.execute("SELECT setseed(0.16)")
        tenants = [(TENANT, rows)] + [(f"ten_{n:032x}", other_rows) for n in range(1, others + 1)]
        for tenant, count in tenants:
            conn.execute(sql.SQL(FILL).format(table=table),
                         {"tenant": tenant, "rows": count, "end": END, "span": days * 86400.0})
        inserted = time.perf_counter()
        for statement in statements:  # IF NOT EXISTS / OR REPLACE: re-creates exactly the dropped indexes
            conn.execute(statement)
        indexed = time.perf_counter()
        for name in ("call_facts_v1", *(f"call_facts_v1_{rollup.name}" for rollup in ROLLUPS)):
            conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(db.schema, name)))
        sizes = {name: size for name, size in conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname LIKE 'call_facts_v1%%' ORDER BY 1", (db.schema,)).fetchall()}
        counted = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(table)).fetchone()[0]
        rolled = {rollup.name: conn.execute(sql.SQL("SELECT sum(calls), count(*) FROM {}").format(
            sql.Identifier(db.schema, f"call_facts_v1_{rollup.name}"))).fetchone() for rollup in ROLLUPS}
    for name, (calls, _) in rolled.items():
        if calls != counted:
            raise SystemExit(f"the rollup {name} holds {calls} calls, the facts {counted}")
    return {"rows": counted, "tenant_rows": rows, "rollup_rows": {name: n for name, (_, n) in rolled.items()},
            "days": days,
            "insert_s": inserted - started, "index_s": indexed - inserted,
            "vacuum_analyze_s": time.perf_counter() - indexed, "relation_bytes": sizes}


def cases() -> list[tuple[str, int, dict[str, Any]]]:
    """label, window in days, the query's fields (each report as the API runs it by default, then a
    few that read the facts: a country breakdown, hourly buckets)."""
    found = []
    for days in (30, 365):
        for report in REPORTS:
            found.append((report, days, {"report": report, "interval": "day" if REPORTS[report].series else None}))
        found.append((f"{COST} group_by=country", days, {"report": COST, "group_by": "country"}))
        found.append((f"{LATENCY} group_by=voice_engine", days, {"report": LATENCY, "group_by": "voice_engine"}))
    found.append((f"{VOLUME} interval=hour", 30, {"report": VOLUME, "interval": "hour"}))
    found.append((f"{QUALITY} interval=week, group_by=number_id", 365,
                  {"report": QUALITY, "interval": "week", "group_by": "number_id"}))
    found.append((f"{FAILURES} direction=inbound", 365, {"report": FAILURES, "filters": (("direction", "inbound"),)}))
    return found


async def count_window(pool: AsyncConnectionPool, start: datetime, end: datetime) -> int:
    async with pool.connection() as conn, conn.cursor() as cur:
        await cur.execute("SELECT count(*) FROM call_facts_v1 WHERE tenant_id = %s AND created_at >= %s "
                          "AND created_at < %s", (TENANT, start, end), prepare=False)
        return (await cur.fetchone())[0]


async def measure(db: Any, args: argparse.Namespace) -> dict[str, Any]:
    async def bounded(conn: psycopg.AsyncConnection) -> None:
        await conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")

    pool = AsyncConnectionPool(db.conninfo(), min_size=2, max_size=2, open=False, kwargs={"autocommit": True},
                               configure=bounded)
    await pool.open(wait=True, timeout=30)
    measured, ceilings = [], {}
    try:
        for days in (30, 365):
            start, end = END - timedelta(days=days), END
            ceilings[days] = {"rows": await count_window(pool, start, end), **summary(
                await timed(lambda s=start, e=end: count_window(pool, s, e), args.samples, args.warmup))}
            print(f"  ceiling count(*) of {days} days ({ceilings[days]['rows']:,} facts): "
                  f"p95 {ceilings[days]['p95']:.1f} ms", flush=True)
        for label, days, fields in cases():
            for compare in (False, True):
                query = ReportQuery(tenant_id=TENANT, start=END - timedelta(days=days), end=END, compare=compare,
                                    **fields)
                if query.report == VOLUME and not query.filters:
                    current, _ = await run(pool, query)
                    shown = sum(row["calls"] for row in current.body["data"])
                    if shown != ceilings[days]["rows"]:
                        raise SystemExit(f"{label}: the report shows {shown} calls, count(*) {ceilings[days]['rows']}")

                async def answer(query: ReportQuery = query) -> None:
                    compared(*await run(pool, query))

                figures = summary(await timed(answer, args.samples, args.warmup))
                ratio = figures["p95"] / ceilings[days]["p95"]
                measured.append({"label": label, "days": days, "compare": compare, **figures, "ratio": ratio,
                                 "target_ms": TARGETS_MS[days]})
                print(f"  {label:<46} {days:>4} {'prior' if compare else '':>6} {figures['p50']:>8.1f} "
                      f"{figures['p95']:>8.1f} {ratio:>7.1f}", flush=True)
    finally:
        await pool.close()
    return {"ceilings": ceilings, "cases": measured}


def report(results: dict[str, Any]) -> None:
    data = results["data"]
    print(f"\nanalytics on {data['tenant_rows']:,} facts of one tenant over {data['days']} days "
          f"({data['rows']:,} in the table; rollup rows "
          f"{', '.join(f'{name} {n:,}' for name, n in data['rollup_rows'].items())}), {results['samples']} samples "
          f"per case, {results['cpus']} CPUs, {results['server']} PostgreSQL")
    for days, ceiling in results["ceilings"].items():
        print(f"ceiling count(*) over {days} days ({ceiling['rows']:,} facts): p50 {ceiling['p50']:.1f} ms, "
              f"p95 {ceiling['p95']:.1f} ms")
    print(f"\n{'report':<46} {'days':>4} {'compare':>7} {'p50 ms':>8} {'p95 ms':>8} {'p95/ceil':>8} {'target':>7}")
    for case in results["cases"]:
        mark = "" if case["p95"] < case["target_ms"] else "  over"
        print(f"{case['label']:<46} {case['days']:>4} {'prior' if case['compare'] else '':>7} {case['p50']:>8.1f} "
              f"{case['p95']:>8.1f} {case['ratio']:>8.1f} {case['target_ms']:>7.0f}{mark}")
    over = [c for c in results["cases"] if c["p95"] >= c["target_ms"]]
    worst = {days: max((c for c in results["cases"] if c["days"] == days), key=lambda c: c["ratio"]) for days in (30, 365)}
    print(f"\nresult: {len(results['cases']) - len(over)} of {len(results['cases'])} cases under target; worst p95/ceiling "
          + "; ".join(f"{days} days {w['ratio']:.1f} ({w['label']}{', prior' if w['compare'] else ''})"
                      for days, w in worst.items()))
    print(f"fill: insert {data['insert_s']:.1f} s, indexes {data['index_s']:.1f} s, vacuum/analyze "
          f"{data['vacuum_analyze_s']:.1f} s; tables and indexes {sum(data['relation_bytes'].values()) / 2**20:,.0f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="facts of the measured tenant")
    parser.add_argument("--days", type=int, default=365, help="the span of those facts, ending at END")
    parser.add_argument("--other-tenants", type=int, default=4)
    parser.add_argument("--other-rows", type=int, default=50_000, help="facts of each other tenant")
    parser.add_argument("--samples", type=int, default=20, help="timed runs per case")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below drops the schema

    workdir = Path(tempfile.mkdtemp(prefix="callwright-bench-"))
    server, source = find_server(workdir)
    db = server.with_schema("bench_facts_" + uuid.uuid4().hex[:12])
    try:
        db.ensure_schema()
        print(f"filling {db.schema} ({source} PostgreSQL at {db.host}:{db.port}) ...", flush=True)
        data = fill(db, args.rows, args.other_tenants, args.other_rows, args.days)
        print(f"  {data['rows']:,} facts in {data['insert_s'] + data['index_s'] + data['vacuum_analyze_s']:.0f} s; "
              "measuring (report, days, compare, p50 ms, p95 ms, p95/ceiling):", flush=True)
        measured = asyncio.run(measure(db, args))
    finally:
        drop(db)
        shutil.rmtree(workdir, ignore_errors=True)

    results = {"benchmark": "analytics", "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "machine": {"python": platform.python_version(), "platform": platform.platform()},
               "cpus": os.cpu_count(), "server": source, "samples": args.samples, "data": data, **measured}
    report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
