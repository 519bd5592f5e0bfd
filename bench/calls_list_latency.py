"""``list_calls`` latency on 1,000,000 calls of one tenant, and CSV export rows/s (ARCHITECTURE.md §11).

The ceiling is a trivial ``SELECT 1`` round trip on the same pool, measured in the same run (for
the export: PostgreSQL's own ``COPY ... TO STDOUT (FORMAT csv)`` of the same rows). Every case's
``total`` is checked against a ``count(*)`` of its matching rows: the counts tables must be exact.
Run: ``.venv/bin/python bench/calls_list_latency.py``; see bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import statistics
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

from adapters.postgres.database import DatabaseConfig, start_embedded  # noqa: E402
from projections.calls_list.csv_export import csv_lines_async  # noqa: E402
from projections.calls_list.filters import SORTS, CallFilters, where as _where  # noqa: E402
from projections.calls_list.queries import _COLUMNS, export_rows, list_calls  # noqa: E402
from projections.calls_list.totals import total_query as _total_query  # noqa: E402
from projections.calls_list.view import CallsListView  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results" / "calls_list_latency.json"
TENANT = "ten_" + "b" * 32
END = datetime(2026, 11, 1, tzinfo=timezone.utc)  # the newest call; one year of calls before it
STATEMENT_TIMEOUT_MS = 60_000  # nothing may hang: every statement of the run is bounded

# One row per call, from independent uniform draws (setseed makes the data set repeatable).
# Mix: 80 % completed, 18 % failed, 1 % queued, 1 % in progress; 10 % simulated; 15 % inbound;
# engines 60/30/10; numbers in four countries, the UK a quarter of them.
FILL = """
INSERT INTO {table} (call_id, tenant_id, status, mode, direction, voice_engine, to_number, from_number,
    objective, confidence, duration_seconds, cost_total, error_code, recording_url, has_outcome, created_at,
    ended_at, metadata, version)
SELECT 'cll_' || md5(%(tenant)s || ':' || i), %(tenant)s, status,
    CASE WHEN r_mode < 0.1 THEN 'simulated' ELSE 'live' END,
    CASE WHEN r_direction < 0.15 THEN 'inbound' ELSE 'outbound' END,
    CASE WHEN r_engine < 0.6 THEN 'alpha_25' WHEN r_engine < 0.9 THEN 'alpha_31' ELSE 'beta_think_fast' END,
    (ARRAY['+4420', '+1415', '+3314', '+4930'])[1 + floor(r_country * 4)::int]
        || lpad(floor(r_number * 1e7)::bigint::text, 7, '0'),
    '+15005550006',
    'Confirm the appointment of customer ' || i || ', and ask whether "Tuesday" still suits',
    CASE WHEN status = 'completed' THEN round(r_confidence::numeric, 3)::float8 END,
    CASE WHEN status IN ('completed', 'failed') THEN floor(r_duration * 900)::int END,
    CASE WHEN status IN ('completed', 'failed') THEN round((r_duration * 900 * 0.0015)::numeric, 4) END,
    CASE WHEN status = 'failed' THEN 'machine_detected' END,
    NULL,
    status = 'completed',
    created_at,
    CASE WHEN status IN ('completed', 'failed') THEN created_at + make_interval(secs => r_duration * 900) END,
    jsonb_build_object('batch', 'b' || (i %% 50)),
    6
FROM (
    SELECT *, CASE WHEN r_status < 0.80 THEN 'completed' WHEN r_status < 0.98 THEN 'failed'
                   WHEN r_status < 0.99 THEN 'queued' ELSE 'in_progress' END AS status
    FROM (  -- volatile draws: PostgreSQL evaluates them once per row and keeps this level apart
        SELECT i, random() AS r_status, random() AS r_mode, random() AS r_direction, random() AS r_engine,
            random() AS r_country, random() AS r_number, random() AS r_confidence, random() AS r_duration,
            %(end)s::timestamptz - make_interval(secs => (%(rows)s - i) * 31536000.0 / %(rows)s) AS created_at
        FROM generate_series(1::bigint, %(rows)s::bigint) AS i
    ) AS draws
) AS drawn
"""

WEEK_AGO = END - timedelta(days=7)
QUARTER = {"start": END - timedelta(days=90, hours=5), "end": END - timedelta(hours=7)}
# A label ending in ROWS_COUNTED marks a filter whose total no counts table holds (two of prefix,
# start/end, confidence): list_calls counts the matching rows (totals.total_query).
ROWS_COUNTED = "(rows counted)"
CASES: list[tuple[str, dict[str, Any], int]] = [  # label, filters, offset
    ("newest first (default)", {}, 0),
    ("oldest first", {"sort": "created_asc"}, 0),
    ("status=failed (18 %)", {"status": "failed"}, 0),
    ("status=queued (1 %)", {"status": "queued"}, 0),
    ("mode=simulated (10 %)", {"mode": "simulated"}, 0),
    ("direction=inbound, voice_engine=beta", {"direction": "inbound", "voice_engine": "beta_think_fast"}, 0),
    ("min_confidence 0.9", {"min_confidence": 0.9}, 0),
    ("has_outcome, min_confidence 0.9", {"has_outcome": True, "min_confidence": 0.9}, 0),
    ("confidence 0.25-0.75, status=completed",
     {"min_confidence": 0.25, "max_confidence": 0.75, "status": "completed"}, 0),
    ("start/end: last 7 days", {"start": WEEK_AGO, "end": END + timedelta(seconds=1)}, 0),
    ("start/end: 90 days, status=failed", {**QUARTER, "status": "failed"}, 0),
    ("start/end: the whole year", {"start": END - timedelta(days=366), "end": END + timedelta(seconds=1)}, 0),
    ("to_prefix +44 (25 %)", {"to_prefix": "+44"}, 0),
    ("to_prefix +44, status=failed", {"to_prefix": "+44", "status": "failed"}, 0),
    ("to_prefix +4420123 (narrow)", {"to_prefix": "+4420123"}, 0),
    (f"+44, last 7 days {ROWS_COUNTED}", {"to_prefix": "+44", "start": WEEK_AGO, "end": END}, 0),
    (f"min_confidence 0.9, 90 days {ROWS_COUNTED}", {"min_confidence": 0.9, **QUARTER}, 0),
    ("sort duration_desc", {"sort": "duration_desc"}, 0),
    ("sort duration_asc", {"sort": "duration_asc"}, 0),
    ("sort confidence_desc", {"sort": "confidence_desc"}, 0),
    ("sort cost_desc", {"sort": "cost_desc"}, 0),
    ("status=completed, duration_desc", {"status": "completed", "sort": "duration_desc"}, 0),
    ("offset 10,000 (page 401 of 25)", {}, 10_000),
]


# --- database -------------------------------------------------------------------------------------


def find_server(workdir: Path) -> tuple[DatabaseConfig, str]:
    """The machine's PostgreSQL on loopback (database callwright_test), else an embedded one."""
    for user in ("postgres", "root"):
        admin = DatabaseConfig(host="127.0.0.1", port=5432, dbname="postgres", user=user)
        try:
            with psycopg.connect(admin.conninfo(), connect_timeout=2, autocommit=True) as conn:
                if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'callwright_test'").fetchone():
                    conn.execute("CREATE DATABASE callwright_test")
            return DatabaseConfig(host="127.0.0.1", port=5432, dbname="callwright_test", user=user), "machine"
        except psycopg.OperationalError:
            continue
    return start_embedded(workdir / "var"), "embedded"


def view_ddl(db: DatabaseConfig, view_class: Any) -> list[Any]:
    """Creates the view's tables and answers its DDL statements (to run again after a bulk load)."""
    from eventsourcing.postgres import PostgresFactory

    factory = PostgresFactory(db.eventsourcing_env(pool_size=1))
    try:
        view = view_class(factory.datastore)
        view.create_table()
        return list(view.sql_create_statements)
    finally:
        factory.close()


def before_bulk_load(conn: psycopg.Connection, db: DatabaseConfig, table: str) -> None:
    """Long statements allowed, and the table's indexes but its key dropped: built after the load
    from the view's DDL (faster than row by row)."""
    conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS * 20}")
    conn.execute("SET maintenance_work_mem = '256MB'")
    for (name,) in conn.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = %s AND indexname NOT LIKE '%%pkey'",
        (db.schema, table),
    ).fetchall():
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(db.schema, name)))


def fill(db: DatabaseConfig, rows: int, others: int, other_rows: int) -> dict[str, Any]:
    """The view's own DDL, with its list indexes built after the bulk insert (faster than row by row)."""
    statements = view_ddl(db, CallsListView)
    table = sql.Identifier(db.schema, CallsListView.table)
    started = time.perf_counter()
    with psycopg.connect(db.conninfo(), autocommit=True) as conn:
        before_bulk_load(conn, db, CallsListView.table)
        conn.execute("SELECT setseed(0.42)")
        tenants = [(TENANT, rows)] + [(f"ten_{n:032x}", other_rows) for n in range(1, others + 1)]
        for tenant, count in tenants:
            conn.execute(sql.SQL(FILL).format(table=table), {"tenant": tenant, "rows": count, "end": END})
        inserted = time.perf_counter()
        for statement in statements:  # IF NOT EXISTS / OR REPLACE: re-creates exactly the dropped indexes
            conn.execute(statement)
        indexed = time.perf_counter()
        conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(table))
        sizes = {name: size for name, size in conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname LIKE 'calls_list_v1%%' ORDER BY 1", (db.schema,)).fetchall()}
        counted = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(table)).fetchone()[0]
        from_counts = conn.execute(sql.SQL("SELECT sum(calls) FROM {}").format(
            sql.Identifier(db.schema, "calls_list_v1_counts"))).fetchone()[0]
    if counted != from_counts:
        raise SystemExit(f"the counts table says {from_counts} calls, the table holds {counted}")
    return {
        "rows": counted,
        "tenant_rows": rows,
        "insert_s": inserted - started,
        "index_s": indexed - inserted,
        "vacuum_analyze_s": time.perf_counter() - indexed,
        "relation_bytes": sizes,
    }


def drop(db: DatabaseConfig) -> None:
    with psycopg.connect(db.with_schema("public").conninfo(), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(db.schema)))


# --- measurements ---------------------------------------------------------------------------------


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "p50": 1000 * statistics.median(ordered),
        "p95": 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "max": 1000 * ordered[-1],
    }


async def timed(call: Any, samples: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        await call()
    seconds = []
    for _ in range(samples):
        started = time.perf_counter()
        await call()
        seconds.append(time.perf_counter() - started)
    return seconds


async def select_one(pool: AsyncConnectionPool) -> None:
    async with pool.connection() as conn, conn.cursor() as cur:
        await cur.execute("SELECT 1")
        await cur.fetchall()


async def plan_of(pool: AsyncConnectionPool, filters: CallFilters, limit: int, offset: int) -> str:
    """The indexes the page query reads (diagnosis only: the same SQL text as list_calls)."""
    where, params = _where(TENANT, filters)
    query = (f"EXPLAIN (FORMAT JSON) SELECT {_COLUMNS} FROM calls_list_v1 WHERE {where} "
             f"ORDER BY {SORTS[filters.sort]} LIMIT %(limit)s OFFSET %(offset)s")
    async with pool.connection() as conn, conn.cursor() as cur:
        await cur.execute(query, {**params, "limit": limit, "offset": offset}, prepare=False)
        plan = (await cur.fetchone())[0][0]["Plan"]
    found: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        if "Index Name" in node:
            found.append(f"{node['Node Type'].replace(' Scan', '').lower()}:{node['Index Name']}")
        elif node["Node Type"] in ("Seq Scan", "Sort"):
            found.append(node["Node Type"].lower())
        for child in node.get("Plans", []):
            walk(child)

    walk(plan)
    return ", ".join(dict.fromkeys(found)) or plan["Node Type"]


async def measure(db: DatabaseConfig, args: argparse.Namespace) -> dict[str, Any]:
    async def bounded(conn: psycopg.AsyncConnection) -> None:
        await conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")

    pool = AsyncConnectionPool(db.conninfo(), min_size=2, max_size=2, open=False, kwargs={"autocommit": True},
                               configure=bounded)
    await pool.open(wait=True, timeout=30)
    try:
        ceiling = summary(await timed(lambda: select_one(pool), args.samples * 5, args.warmup))
        cases = []
        for label, raw, offset in CASES:
            filters = CallFilters(**raw)
            matching = await count_rows(pool, filters)
            for limit in (25, 200):
                page = await list_calls(pool, tenant_id=TENANT, filters=filters, limit=limit, offset=offset)
                if page.total != matching:
                    raise SystemExit(f"{label}: list_calls says total {page.total}, {matching} rows match")
                seconds = await timed(lambda: list_calls(pool, tenant_id=TENANT, filters=filters, limit=limit,
                                                         offset=offset), args.samples, args.warmup)
                cases.append({"label": label, "limit": limit, "offset": offset, "total": page.total,
                              "plan": await plan_of(pool, filters, limit, offset), **summary(seconds)})
                print(f"  {label:<42} {limit:>4} {cases[-1]['p50']:>8.2f} {cases[-1]['p95']:>8.2f}", flush=True)
        totals = await count_strategies(pool, args)
        export = await measure_export(pool, args.export_limit)
    finally:
        await pool.close()
    return {"ceiling_select_1": ceiling, "cases": cases, "totals": totals, "export": export}


async def count_rows(pool: AsyncConnectionPool, filters: CallFilters) -> int:
    """The oracle of ``total``: a count of the matching rows, with the WHERE clause list_calls uses."""
    where, params = _where(TENANT, filters)
    async with pool.connection() as conn, conn.cursor() as cur:
        await cur.execute(f"SELECT count(*) FROM calls_list_v1 WHERE {where}", params, prepare=False)
        return (await cur.fetchone())[0]


async def count_strategies(pool: AsyncConnectionPool, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Why the counts tables: COUNT(*) of the matching rows against the query list_calls uses."""
    rows = []
    for label, raw in (("no filter", {}), ("status=completed", {"status": "completed"}),
                       ("start/end: the whole year", {"start": END - timedelta(days=366, hours=3), "end": END}),
                       ("start/end: 90 days", {"start": END - timedelta(days=90, hours=5), "end": END}),
                       ("to_prefix +44", {"to_prefix": "+44"}), ("min_confidence 0.9", {"min_confidence": 0.9})):
        filters = CallFilters(**raw)
        where, params = _where(TENANT, filters)
        for source, (query, query_params) in (
            ("count(*) of the rows", (f"SELECT count(*) FROM calls_list_v1 WHERE {where}", params)),
            ("list_calls' total query", _total_query(TENANT, filters)),
        ):
            async def run(query: str = query, query_params: dict[str, Any] = query_params) -> None:
                async with pool.connection() as conn, conn.cursor() as cur:
                    await cur.execute(query, query_params, prepare=False)
                    await cur.fetchall()

            rows.append({"filter": label, "source": source,
                         **summary(await timed(run, max(10, args.samples // 5), 2))})
    return rows


async def measure_export(pool: AsyncConnectionPool, limit: int) -> dict[str, Any]:
    started = time.perf_counter()
    streamed = 0
    async for _row in export_rows(pool, tenant_id=TENANT, limit=limit):
        streamed += 1
    rows_seconds = time.perf_counter() - started

    started = time.perf_counter()
    written = -1  # the header
    size = 0
    async for line in csv_lines_async(export_rows(pool, tenant_id=TENANT, limit=limit)):
        written += 1
        size += len(line)
    csv_seconds = time.perf_counter() - started

    copy = (
        "COPY (SELECT call_id, created_at, to_number, from_number, objective, status, confidence, duration_seconds, "
        "cost_total, error_code, recording_url FROM calls_list_v1 WHERE tenant_id = %s "
        f"ORDER BY {SORTS['created_desc']} LIMIT %s) TO STDOUT (FORMAT csv, HEADER)"
    )
    started = time.perf_counter()
    copied = 0
    async with pool.connection() as conn, conn.cursor() as cur:
        async with cur.copy(copy, (TENANT, limit)) as stream:
            async for block in stream:
                copied += bytes(block).count(b"\n")
    copy_seconds = time.perf_counter() - started
    return {
        "limit": limit,
        "export_rows": {"rows": streamed, "seconds": rows_seconds, "rows_per_s": streamed / rows_seconds},
        "export_rows_csv": {"rows": written, "bytes": size, "seconds": csv_seconds, "rows_per_s": written / csv_seconds},
        "ceiling_copy_csv": {"rows": copied - 1, "seconds": copy_seconds, "rows_per_s": (copied - 1) / copy_seconds},
    }


# --- report ---------------------------------------------------------------------------------------


def report(results: dict[str, Any]) -> None:
    ceiling = results["ceiling_select_1"]
    data = results["data"]
    print(f"\nlist_calls on {data['tenant_rows']:,} calls of one tenant ({data['rows']:,} rows in the table), "
          f"{results['samples']} samples per case, {results['cpus']} CPUs, {results['server']} PostgreSQL")
    print(f"ceiling SELECT 1 round trip on the same pool: p50 {ceiling['p50']:.3f} ms, p95 {ceiling['p95']:.3f} ms\n")
    print(f"{'case':<42} {'limit':>5} {'total':>9} {'p50 ms':>8} {'p95 ms':>8} {'p50/ceil':>9}  plan")
    for case in results["cases"]:
        print(f"{case['label']:<42} {case['limit']:>5} {case['total']:>9} {case['p50']:>8.2f} {case['p95']:>8.2f} "
              f"{case['p50'] / ceiling['p50']:>9.1f}  {case['plan']}")
    print(f"\n{'total of a page':<28} {'source':<26} {'p50 ms':>8} {'p95 ms':>8}")
    for row in results["totals"]:
        print(f"{row['filter']:<28} {row['source']:<26} {row['p50']:>8.2f} {row['p95']:>8.2f}")
    export = results["export"]
    print(f"\nexport of {export['limit']:,} rows: export_rows {export['export_rows']['rows_per_s']:,.0f} rows/s, "
          f"as CSV lines {export['export_rows_csv']['rows_per_s']:,.0f} rows/s, "
          f"ceiling COPY (FORMAT csv) {export['ceiling_copy_csv']['rows_per_s']:,.0f} rows/s")
    worst = max(results["cases"], key=lambda c: c["p95"])
    slow = [c for c in results["cases"] if c["p95"] > 20]
    print(f"\nresult: worst p95 {worst['p95']:.2f} ms ({worst['label']}, limit {worst['limit']}) = "
          f"{worst['p95'] / ceiling['p95']:.0f}x the SELECT 1 ceiling; {len(slow)} of {len(results['cases'])} "
          f"cases above 20 ms p95; CSV export at {results['export_ratio']:.2f} of COPY")
    for case in slow:
        print(f"  above 20 ms: {case['label']}, limit {case['limit']}: p95 {case['p95']:.2f} ms")
    print(f"every total equals a count(*) of its rows; the totals {ROWS_COUNTED} are that count(*)")
    print(f"fill: insert {data['insert_s']:.1f} s, indexes {data['index_s']:.1f} s, "
          f"vacuum/analyze {data['vacuum_analyze_s']:.1f} s; table and indexes "
          f"{sum(data['relation_bytes'].values()) / 2**20:,.0f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="calls of the measured tenant")
    parser.add_argument("--other-tenants", type=int, default=4)
    parser.add_argument("--other-rows", type=int, default=50_000, help="calls of each other tenant")
    parser.add_argument("--samples", type=int, default=100, help="timed runs per case and page size")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--export-limit", type=int, default=100_000)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below drops the schema

    workdir = Path(tempfile.mkdtemp(prefix="callwright-bench-"))
    server, source = find_server(workdir)
    db = server.with_schema("bench_calls_" + uuid.uuid4().hex[:12])
    try:
        db.ensure_schema()
        print(f"filling {db.schema} ({source} PostgreSQL at {db.host}:{db.port}) ...", flush=True)
        data = fill(db, args.rows, args.other_tenants, args.other_rows)
        print(f"  {data['rows']:,} rows in {data['insert_s'] + data['index_s'] + data['vacuum_analyze_s']:.0f} s; "
              "measuring (case, limit, p50 ms, p95 ms):", flush=True)
        measured = asyncio.run(measure(db, args))
    finally:
        drop(db)
        shutil.rmtree(workdir, ignore_errors=True)

    results = {
        "benchmark": "calls_list_latency",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "cpus": os.cpu_count(),
        "server": source,
        "samples": args.samples,
        "data": data,
        **measured,
        "export_ratio": measured["export"]["export_rows_csv"]["rows_per_s"]
        / measured["export"]["ceiling_copy_csv"]["rows_per_s"],
    }
    report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
