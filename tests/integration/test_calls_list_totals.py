"""``total`` of ``GET /v1/calls`` (queries.list_calls) against a brute-force count, for the filters
whose totals come from the prefix, confidence, monthly and daily counts tables (view.py): every
prefix length, confidence bounds on and between bucket edges, NULL confidence, ranges across
months and days, combinations; and the counts tables themselves after inserts, updates and
deletes of any shape, and after a backfill.

Rows are written straight into ``calls_list_v1`` (seeded random data), as a bulk load would; the
projection's own writes are covered by test_calls_list_projection.py.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from eventsourcing.postgres import PostgresFactory
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from adapters.postgres.database import DatabaseConfig
from projections.calls_list.queries import CallFilters, list_calls
from projections.calls_list.view import CONFIDENCE_BUCKETS, PREFIX_COUNTED, CallsListView
from tests.postgres import drop_schema, fresh_schema

TENANT = "ten_" + "a" * 32
OTHER = "ten_" + "c" * 32
MIDNIGHT = datetime(2026, 10, 1, tzinfo=timezone.utc)
STATUSES = ("queued", "in_progress", "completed", "failed")
FILTERS = ("status", "mode", "direction", "voice_engine", "has_outcome")
# Few stems and digits, so that prefixes of every length are shared by several numbers; some
# numbers are shorter than PREFIX_COUNTED, and stems are prefixes of one another.
STEMS = ("+4420", "+442", "+1415", "+14", "+33", "+4", "+44")
EDGE = 1 / CONFIDENCE_BUCKETS
# Bucket edges, values just beside them, decimals that are not exact doubles (0.29 * 100 < 29).
CONFIDENCES = (0.0, 1.0, 0.5, 0.505, 0.999, 0.9, 0.29, 0.01, 0.3, 0.301, EDGE, 64 * EDGE, 127 * EDGE,
               math.nextafter(0.5, 0), math.nextafter(0.5, 1), math.nextafter(EDGE, 0), math.nextafter(1.0, 0))
BOUNDS = (*CONFIDENCES, 0.005, 0.25, 0.5 + EDGE / 2, 0.3005)
COLUMNS = ("call_id, tenant_id, status, mode, direction, voice_engine, to_number, from_number, objective, "
           "confidence, has_outcome, created_at, version")


def _random_row(rng: random.Random, tenant_id: str, n: int) -> dict[str, Any]:
    confidence = rng.choice((None, None, None, rng.random(), round(rng.random(), 2), round(rng.random(), 3),
                             *CONFIDENCES))
    # On and beside month and day boundaries, and anywhere in about three months.
    hours = rng.choice((0, 24, 48, 31 * 24, 31 * 24 - 0.5, 61 * 24, rng.uniform(0, 2400), rng.uniform(0, 240)))
    return {
        "call_id": f"cll_{tenant_id[-4:]}_{n:05d}", "tenant_id": tenant_id, "status": rng.choice(STATUSES),
        "mode": rng.choice(("live", "simulated")), "direction": rng.choice(("outbound", "inbound")),
        "voice_engine": rng.choice(("alpha_25", "alpha_31", "beta_think_fast")),
        "to_number": rng.choice(STEMS) + "".join(rng.choice("0127") for _ in range(rng.randint(0, 8))),
        "from_number": "+15005550006", "objective": "o", "confidence": confidence,
        "has_outcome": confidence is not None and rng.random() < 0.8,
        "created_at": MIDNIGHT + timedelta(hours=hours), "version": 1,
    }


@dataclass
class Calls:
    db: DatabaseConfig
    view: CallsListView
    pool: AsyncConnectionPool
    loop: asyncio.Runner

    def rows(self) -> list[dict[str, Any]]:
        with psycopg.connect(self.db.conninfo(), row_factory=dict_row) as conn:
            return conn.execute(f"SELECT {COLUMNS} FROM calls_list_v1").fetchall()

    def execute(self, statement: str, params: Any = None) -> None:
        with psycopg.connect(self.db.conninfo()) as conn:
            conn.execute(statement, params)

    def insert(self, rows: list[dict[str, Any]]) -> None:
        """All ``rows`` in one statement: the trigger sees them together, as in a bulk load."""
        names = COLUMNS.split(", ")
        values = ", ".join(["(" + ", ".join(["%s"] * len(names)) + ")"] * len(rows))
        self.execute(f"INSERT INTO calls_list_v1 ({COLUMNS}) VALUES {values}",
                     [row[name] for row in rows for name in names])

    def total(self, tenant_id: str = TENANT, **filters: Any) -> int:
        """Paged by one, so that ``total`` is always counted (a last page is not)."""
        page = self.loop.run(list_calls(self.pool, tenant_id=tenant_id, filters=CallFilters(**filters),
                                        limit=1, offset=0))
        return page.total

    def counts_tables(self) -> dict[str, Counter]:
        with psycopg.connect(self.db.conninfo()) as conn:
            return {
                name: Counter({row[:-1]: row[-1] for row in conn.execute(
                    f"SELECT tenant_id, {key}{', '.join(FILTERS)}, calls FROM calls_list_v1_{name} WHERE calls <> 0")})
                for name, key in (("counts", ""), ("daily_counts", "day, "), ("monthly_counts", "month, "),
                                  ("prefix_counts", "prefix, "), ("confidence_counts", "bucket, "))
            }


def _matches(row: dict[str, Any], filters: dict[str, Any]) -> bool:
    """The oracle: SPEC.md's list filters, read literally (a NULL confidence is in no range)."""
    confidence = row["confidence"]
    return (
        all(row[name] == filters[name] for name in FILTERS if name in filters)
        and ("to_prefix" not in filters or row["to_number"].startswith(filters["to_prefix"]))
        and ("start" not in filters or row["created_at"] >= filters["start"])
        and ("end" not in filters or row["created_at"] < filters["end"])
        and ("min_confidence" not in filters or (confidence is not None and confidence >= filters["min_confidence"]))
        and ("max_confidence" not in filters or (confidence is not None and confidence <= filters["max_confidence"]))
    )


def _expected(rows: list[dict[str, Any]], tenant_id: str = TENANT, **filters: Any) -> int:
    return sum(1 for row in rows if row["tenant_id"] == tenant_id and _matches(row, filters))


def _expected_counts_tables(rows: list[dict[str, Any]]) -> dict[str, Counter]:
    """What each counts table must hold, computed here rather than by the trigger's SQL."""
    tables: dict[str, Counter] = {name: Counter() for name in ("counts", "daily_counts", "monthly_counts",
                                                                "prefix_counts", "confidence_counts")}
    for row in rows:
        tenant, filters = row["tenant_id"], tuple(row[name] for name in FILTERS)
        tables["counts"][(tenant, *filters)] += 1
        day = row["created_at"].astimezone(timezone.utc).date()
        tables["daily_counts"][(tenant, day, *filters)] += 1
        tables["monthly_counts"][(tenant, day.replace(day=1), *filters)] += 1
        for length in range(1, min(len(row["to_number"]), PREFIX_COUNTED) + 1):
            tables["prefix_counts"][(tenant, row["to_number"][:length], *filters)] += 1
        if row["confidence"] is not None:
            tables["confidence_counts"][(tenant, math.floor(row["confidence"] * CONFIDENCE_BUCKETS), *filters)] += 1
    return tables


def _open(db: DatabaseConfig) -> tuple[PostgresFactory, Calls]:
    factory = PostgresFactory(db.eventsourcing_env(pool_size=1))
    view = CallsListView(factory.datastore)
    view.create_table()
    loop = asyncio.Runner()
    pool = AsyncConnectionPool(db.conninfo(), min_size=1, max_size=2, open=False, kwargs={"autocommit": True})
    loop.run(pool.open(wait=True, timeout=30))
    return factory, Calls(db, view, pool, loop)


def _close(factory: PostgresFactory, calls: Calls) -> None:
    calls.loop.run(calls.pool.close())
    calls.loop.close()
    factory.close()


@pytest.fixture(scope="module")
def loaded(pg_server: DatabaseConfig) -> Iterator[tuple[Calls, list[dict[str, Any]]]]:
    """400 random calls of TENANT and 100 of OTHER, loaded once; the tests only read them."""
    db = fresh_schema(pg_server)
    factory, calls = _open(db)
    try:
        rng = random.Random(20261001)
        calls.insert([_random_row(rng, TENANT, n) for n in range(400)]
                     + [_random_row(rng, OTHER, n) for n in range(100)])
        yield calls, calls.rows()
    finally:
        _close(factory, calls)
        drop_schema(db)


@pytest.fixture
def writable(pg_server: DatabaseConfig) -> Iterator[Calls]:
    db = fresh_schema(pg_server)
    factory, calls = _open(db)
    try:
        yield calls
    finally:
        _close(factory, calls)
        drop_schema(db)


def test_the_counts_tables_agree_with_the_rows(loaded):
    calls, rows = loaded
    assert calls.counts_tables() == _expected_counts_tables(rows)


def _prefixes(rows: list[dict[str, Any]]) -> list[str]:
    """Every prefix of length 1..10 of a few numbers (so most match), and some that match none."""
    numbers = sorted({row["to_number"] for row in rows if row["tenant_id"] == TENANT})[::25]
    return sorted({number[:length] for number in numbers for length in range(1, 11)}
                  | {"+9", "+4420999", "+44207777777", "4", "+"})


# -- to_prefix -------------------------------------------------------------------------------------


def test_total_of_a_prefix_of_every_length_is_exact(loaded):
    calls, rows = loaded
    checked = _prefixes(rows)
    assert {len(prefix) for prefix in checked} >= set(range(1, 11))
    for prefix in checked:
        assert calls.total(to_prefix=prefix) == _expected(rows, to_prefix=prefix), prefix


@pytest.mark.parametrize("equal", [{"status": "completed"}, {"has_outcome": False, "mode": "live"},
                                   {"direction": "inbound", "voice_engine": "alpha_31", "status": "failed"}])
def test_total_of_a_prefix_with_equality_filters_is_exact(loaded, equal):
    calls, rows = loaded
    for prefix in _prefixes(rows):
        assert calls.total(to_prefix=prefix, **equal) == _expected(rows, to_prefix=prefix, **equal), prefix


def test_a_prefix_counts_only_the_tenants_own_calls(loaded):
    calls, rows = loaded
    for prefix in ("+4", "+44", "+4420", "+442012"):
        assert calls.total(OTHER, to_prefix=prefix) == _expected(rows, OTHER, to_prefix=prefix)
    assert calls.total("ten_" + "f" * 32, to_prefix="+44") == 0


def test_a_like_wildcard_in_a_prefix_is_matched_literally(loaded):
    calls, _rows = loaded
    assert calls.total(to_prefix="+4_") == calls.total(to_prefix="%") == calls.total(to_prefix="+44207%") == 0


# -- min_confidence / max_confidence ---------------------------------------------------------------


def test_the_data_has_calls_on_bucket_edges_and_without_a_confidence(loaded):
    _calls, rows = loaded
    values = {row["confidence"] for row in rows}
    assert None in values and {0.0, 1.0, 0.5, EDGE, math.nextafter(0.5, 0)} <= values
    assert {MIDNIGHT, NOV, DEC} <= {row["created_at"] for row in rows}


@pytest.mark.parametrize("bound", BOUNDS)
def test_total_of_a_one_sided_confidence_range_is_exact(loaded, bound):
    calls, rows = loaded
    assert calls.total(min_confidence=bound) == _expected(rows, min_confidence=bound)
    assert calls.total(max_confidence=bound) == _expected(rows, max_confidence=bound)


@pytest.mark.parametrize("low", BOUNDS)
def test_total_of_a_confidence_range_is_exact_for_every_pair_of_bounds(loaded, low):
    calls, rows = loaded
    for high in BOUNDS:  # also high < low (none) and high == low (the calls at exactly that value)
        assert calls.total(min_confidence=low, max_confidence=high) == _expected(
            rows, min_confidence=low, max_confidence=high), (low, high)


def test_a_call_without_a_confidence_is_in_no_confidence_range(loaded):
    calls, rows = loaded
    scored = sum(1 for row in rows if row["tenant_id"] == TENANT and row["confidence"] is not None)
    assert calls.total(min_confidence=0.0) == calls.total(max_confidence=1.0) == scored
    assert calls.total(min_confidence=0.0, max_confidence=1.0) == scored < calls.total()


@pytest.mark.parametrize("equal", [{"status": "completed"}, {"has_outcome": True}, {"has_outcome": False},
                                   {"mode": "simulated", "voice_engine": "beta_think_fast"}])
def test_total_of_a_confidence_range_with_equality_filters_is_exact(loaded, equal):
    calls, rows = loaded
    for low, high in ((0.5, None), (None, 0.505), (0.29, 0.9), (0.0, 1.0), (0.3, 0.301), (EDGE, 127 * EDGE)):
        bounds = {k: v for k, v in (("min_confidence", low), ("max_confidence", high)) if v is not None}
        assert calls.total(**bounds, **equal) == _expected(rows, **bounds, **equal), bounds


# -- start/end -------------------------------------------------------------------------------------

NOV = datetime(2026, 11, 1, tzinfo=timezone.utc)
DEC = datetime(2026, 12, 1, tzinfo=timezone.utc)
TICK = timedelta(microseconds=1)
RANGES = (  # whole months, whole days, partial days at either end, empty ones, bounds on calls
    (MIDNIGHT, NOV), (MIDNIGHT, DEC), (MIDNIGHT, None), (None, NOV), (NOV, None), (None, DEC + timedelta(hours=7)),
    (MIDNIGHT + timedelta(hours=5.5), NOV + timedelta(days=40, hours=3)),
    (MIDNIGHT - timedelta(days=40), DEC + timedelta(days=60)),
    (MIDNIGHT + timedelta(days=14, hours=12), DEC), (NOV - timedelta(hours=1), DEC + timedelta(hours=1)),
    (NOV - TICK, NOV + TICK), (NOV, NOV + TICK), (NOV, NOV), (NOV + timedelta(days=1), NOV),
    (MIDNIGHT + timedelta(days=2), MIDNIGHT + timedelta(days=3)),
    (MIDNIGHT + timedelta(hours=30), MIDNIGHT + timedelta(days=7)),
    (NOV.astimezone(timezone(timedelta(hours=-5))), (DEC - timedelta(hours=3)).replace(tzinfo=None)),
)


@pytest.mark.parametrize(("start", "end"), RANGES)
def test_total_of_a_start_end_range_across_months_days_and_partial_days_is_exact(loaded, start, end):
    calls, rows = loaded
    dates = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
    utc = {k: v.replace(tzinfo=timezone.utc) if v.tzinfo is None else v for k, v in dates.items()}
    assert calls.total(**dates) == _expected(rows, **utc)
    assert calls.total(**dates, status="completed") == _expected(rows, **utc, status="completed")


# -- combinations ----------------------------------------------------------------------------------

DATES = ({"start": MIDNIGHT + timedelta(days=1)}, {"end": MIDNIGHT + timedelta(days=2, hours=5)},
         {"start": MIDNIGHT + timedelta(hours=30), "end": MIDNIGHT + timedelta(days=7)},
         {"start": MIDNIGHT, "end": MIDNIGHT + timedelta(days=1)})


@pytest.mark.parametrize("dates", DATES)
@pytest.mark.parametrize("other", [{"to_prefix": "+44"}, {"to_prefix": "+44207"}, {"to_prefix": "+1415012"},
                                   {"min_confidence": 0.5}, {"max_confidence": 0.29},
                                   {"min_confidence": 0.25, "max_confidence": 0.999}, {"has_outcome": True}])
def test_total_of_a_prefix_or_confidence_range_within_start_end_is_exact(loaded, dates, other):
    calls, rows = loaded
    assert calls.total(**dates, **other) == _expected(rows, **dates, **other)
    assert calls.total(**dates, **other, status="failed") == _expected(rows, **dates, **other, status="failed")


def test_total_of_a_prefix_and_a_confidence_range_together_is_exact(loaded):
    calls, rows = loaded
    for prefix in ("+4", "+44", "+4420", "+1415012"):
        for bounds in ({"min_confidence": 0.5}, {"max_confidence": 0.505},
                       {"min_confidence": 0.0, "max_confidence": 1.0}):
            assert calls.total(to_prefix=prefix, **bounds) == _expected(rows, to_prefix=prefix, **bounds)


@settings(max_examples=200, deadline=None, database=None)
@given(data=st.data())
def test_total_of_any_mix_of_filters_is_exact(loaded, data):
    calls, rows = loaded
    numbers = sorted({row["to_number"] for row in rows})
    filters: dict[str, Any] = {}
    if data.draw(st.booleans(), "prefix"):
        filters["to_prefix"] = data.draw(st.sampled_from(numbers), "number")[:data.draw(st.integers(1, 10), "length")]
    bound = st.one_of(st.sampled_from(BOUNDS), st.floats(0, 1), st.integers(0, 1000).map(lambda n: n / 1000))
    for name in ("min_confidence", "max_confidence"):
        if data.draw(st.booleans(), name):
            filters[name] = data.draw(bound, name)
    moment = st.one_of(st.sampled_from((MIDNIGHT, NOV, DEC)),
                       st.integers(-2400, 2600).map(lambda n: MIDNIGHT + timedelta(hours=n)),
                       st.integers(0, 100 * 86400).map(lambda n: MIDNIGHT + timedelta(seconds=n)))
    for name in ("start", "end"):
        if data.draw(st.integers(0, 2), name) == 0:
            filters[name] = data.draw(moment, name)
    for name, values in (("status", STATUSES), ("has_outcome", (True, False)), ("mode", ("live", "simulated"))):
        if data.draw(st.integers(0, 2), name) == 0:
            filters[name] = data.draw(st.sampled_from(values), name)
    assert calls.total(**filters) == _expected(rows, **filters)


# -- the counts tables under writes ----------------------------------------------------------------


def _assert_in_step(calls: Calls) -> None:
    rows = calls.rows()
    assert calls.counts_tables() == _expected_counts_tables(rows)
    for tenant_id in (TENANT, OTHER):
        for filters in ({}, {"to_prefix": "+44"}, {"to_prefix": "+4420"}, {"to_prefix": "+4"},
                        {"min_confidence": 0.5}, {"max_confidence": 0.505, "status": "completed"},
                        {"min_confidence": 0.29, "max_confidence": 0.9, "has_outcome": True}):
            assert calls.total(tenant_id, **filters) == _expected(rows, tenant_id, **filters), filters


def test_counts_follow_inserts_updates_and_deletes_of_one_row_and_of_many(writable):
    rng = random.Random(7)
    writable.insert([_random_row(rng, TENANT, n) for n in range(150)] + [_random_row(rng, OTHER, n) for n in range(30)])
    _assert_in_step(writable)
    for n in range(150, 160):  # one row per statement, as the projection writes
        writable.insert([_random_row(rng, TENANT, n)])
    _assert_in_step(writable)
    one = "cll_aaaa_00003"
    for statement, params in (  # one row: each counted column, a confidence into and out of NULL
        ("UPDATE calls_list_v1 SET status = 'failed' WHERE call_id = %s", (one,)),
        ("UPDATE calls_list_v1 SET confidence = 0.5, has_outcome = true WHERE call_id = %s", (one,)),
        ("UPDATE calls_list_v1 SET confidence = %s WHERE call_id = %s", (math.nextafter(0.5, 0), one)),
        ("UPDATE calls_list_v1 SET confidence = NULL, has_outcome = false WHERE call_id = %s", (one,)),
        ("UPDATE calls_list_v1 SET to_number = '+4420777' WHERE call_id = %s", (one,)),
        ("UPDATE calls_list_v1 SET version = version + 1 WHERE call_id = %s", (one,)),  # nothing counted moves
    ):
        writable.execute(statement, params)
        _assert_in_step(writable)
    for statement in (  # many rows per statement, moving between groups in both directions
        "UPDATE calls_list_v1 SET status = CASE status WHEN 'completed' THEN 'failed' ELSE 'completed' END "
        "WHERE call_id LIKE '%%1_'",
        "UPDATE calls_list_v1 SET confidence = CASE WHEN confidence IS NULL THEN 0.9 WHEN confidence > 0.5 "
        "THEN NULL ELSE confidence + 0.0078125 END, has_outcome = NOT has_outcome WHERE call_id LIKE '%%2_'",
        "UPDATE calls_list_v1 SET to_number = to_number || '0', tenant_id = %(other)s WHERE call_id LIKE '%%3_'",
        "DELETE FROM calls_list_v1 WHERE call_id LIKE '%%4_'",
        "DELETE FROM calls_list_v1 WHERE call_id = 'cll_aaaa_00003'",
    ):
        writable.execute(statement, {"other": OTHER})
        _assert_in_step(writable)


def test_counts_tables_new_to_a_filled_calls_list_are_backfilled_once(writable):
    rng = random.Random(11)
    writable.insert([_random_row(rng, TENANT, n) for n in range(120)] + [_random_row(rng, OTHER, n) for n in range(20)])
    # As before this version: no monthly, prefix or confidence counts yet.
    writable.execute("DROP TABLE calls_list_v1_monthly_counts, calls_list_v1_prefix_counts, "
                     "calls_list_v1_confidence_counts")
    writable.view.create_table()  # a start of this version
    _assert_in_step(writable)
    writable.view.create_table()  # and every later start: nothing is counted twice
    _assert_in_step(writable)
    writable.insert([_random_row(rng, TENANT, n) for n in range(120, 130)])
    _assert_in_step(writable)
