"""The five analytics reports (issue 16) against figures worked out here, row by row, from the
facts themselves: a few hundred terminal calls across the European and American DST changes of
2026, with more than ten numbers, countries and error codes (the Other row), read from the daily
rollup (whole days), the facts (edges, hours, number and country) or both; every group_by, the
filters, empty windows, compare=prior (a zero prior too), and the CSV, row for row. One small
tenant's answers are written out by hand in full.
"""

from __future__ import annotations

import asyncio
import csv
import io
import math
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import psycopg
import pytest
from eventsourcing.postgres import PostgresFactory
from psycopg_pool import AsyncConnectionPool

from adapters.postgres.database import DatabaseConfig
from domain.analytics.reports import COST, FAILURES, GROUP_BY, LATENCY, QUALITY, REPORTS, VOLUME, ReportQuery
from projections.call_facts.compare import columns, compared, csv_lines
from projections.call_facts.reports import run
from projections.call_facts.view import CallFactsView
from tests.postgres import drop_schema, fresh_schema

UTC = timezone.utc
TENANT = "ten_" + "a" * 32
SMALL = "ten_" + "b" * 32
START = datetime(2026, 10, 20, tzinfo=UTC)
CODES = ("no_answer", "busy", "hung_up", "machine_detected", "extraction_failed", "carrier_error", "timeout",
         "invalid_number", "rejected", "cancelled", "voicemail_full")
COUNTRIES = ("GB", "US", "FR", "DE", "ES", "IT", "NL", "BE", "IE", "PT", "SE")
NUMBERS = tuple(f"00000000-0000-0000-0000-{n:012d}" for n in range(12))
CONFIDENCES = (0.0, 0.1, 0.7, 0.95, 1.0, 0.05, 0.3, 0.55, 0.999)
COLUMNS = ("call_id", "tenant_id", "created_at", "ended_at", "direction", "mode", "status", "error_code",
           "voice_engine", "number_id", "country", "duration_seconds", "first_audio_ms", "confidence", "cost_voice",
           "cost_extraction", "cost_total", "fields_filled", "fields_required", "fields_optional", "optional_filled")


def _fact(rng: random.Random, n: int) -> dict[str, Any]:
    # Some on exact hour and midnight boundaries, the rest anywhere in 17 days.
    offset = rng.choice((timedelta(days=rng.randint(0, 16)), timedelta(hours=rng.randint(0, 400)),
                         timedelta(seconds=rng.uniform(0, 17 * 86400))))
    failed = rng.random() < 0.3
    voice, extraction = Decimal(rng.randint(0, 5000)) / 10000, Decimal(rng.randint(0, 80)) / 10000
    optional = rng.randint(0, 3)
    return {
        "call_id": f"cll_{n:032d}", "tenant_id": TENANT, "created_at": START + offset,
        "ended_at": START + offset + timedelta(minutes=3), "direction": rng.choice(("outbound", "inbound")),
        "mode": rng.choice(("live", "simulated")), "status": "failed" if failed else "completed",
        # Skewed, so that the top 8 are not a tie: code k about twice as often as code k + 3.
        "error_code": CODES[min(int(rng.expovariate(0.25)), len(CODES) - 1)] if failed else None,
        "voice_engine": rng.choice(("alpha_25", "alpha_31", "beta_think_fast")),
        "number_id": rng.choice((None, *NUMBERS[:int(rng.expovariate(0.2)) % 12 + 1])),
        "country": COUNTRIES[min(int(rng.expovariate(0.3)), len(COUNTRIES) - 1)],
        "duration_seconds": None if failed and rng.random() < 0.5 else rng.randint(0, 900),
        "first_audio_ms": rng.choice((None, rng.randint(200, 3000))),
        "confidence": None if failed else rng.choice((*CONFIDENCES, round(rng.random(), 3))),
        "cost_voice": voice, "cost_extraction": extraction, "cost_total": voice + extraction,
        "fields_filled": 0 if failed else rng.randint(1, 2 + optional), "fields_required": 2,
        "fields_optional": optional, "optional_filled": 0 if failed else rng.randint(0, optional),
    }


# -- the figures worked out from the facts --------------------------------------------------------

def _bucket(moment: datetime, interval: str) -> datetime:
    moment = moment.astimezone(UTC)
    if interval == "hour":
        return datetime(moment.year, moment.month, moment.day, moment.hour, tzinfo=UTC)
    day = datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    return day - timedelta(days=day.weekday()) if interval == "week" else day


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _series(query: ReportQuery) -> list[str | None]:
    if not query.interval:
        return [None]
    step = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(days=7)}[query.interval]
    out, moment = [], _bucket(query.start, query.interval)
    while moment < query.end:
        out.append(_iso(moment))
        moment += step
    return out


def _groups(rows: list[dict[str, Any]], by: str | None, kept: list[Any] | None = None) -> tuple[list[Any], Any]:
    if by is None:
        return [None], lambda row: None
    if kept is None:
        counts: dict[Any, int] = defaultdict(int)
        for row in rows:
            counts[row[by]] += 1
        ranked = sorted(counts, key=lambda v: (-counts[v], v is None, v or ""))
        kept = ranked if len(ranked) <= 8 else [*ranked[:8], "Other"]
    labels = list(kept)
    if any(row[by] not in kept for row in rows) and "Other" not in labels:
        labels.append("Other")
    return labels, lambda row: row[by] if row[by] in kept and row[by] != "Other" else "Other"


def _percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    position = p * (len(values) - 1)
    low, high = math.floor(position), math.ceil(position)
    return round(values[low] + (values[high] - values[low]) * (position - low), 3)


def _money(value: Decimal) -> str:
    return str(value.quantize(Decimal("0.0001"), ROUND_HALF_UP))


def _pct(part: float, whole: float) -> float | None:
    return round(part * 100 / whole, 2) if whole else None


def expected(facts: list[dict[str, Any]], query: ReportQuery, kept: list[Any] | None = None) -> tuple[list[dict[str, Any]], list[Any]]:
    """The report's rows, and its groups (what a prior window is grouped by)."""
    rows = [f for f in facts if f["tenant_id"] == query.tenant_id and query.start <= f["created_at"] < query.end
            and all(f[name] == value for name, value in query.filters)]
    by = "error_code" if query.report == FAILURES else query.group_by
    ranked_rows = [f for f in rows if f["status"] == "failed"] if query.report == FAILURES else rows
    groups, group_of = _groups(ranked_rows, by, kept)
    if query.report != FAILURES and query.group_by is None:
        groups = [None]
    cells: dict[tuple[Any, Any], list[dict[str, Any]]] = defaultdict(list)
    for f in rows:
        cells[(_iso(_bucket(f["created_at"], query.interval)) if query.interval else None, group_of(f) if by else None)].append(f)
    out = []
    for bucket in _series(query):
        label = {"bucket": bucket} if bucket else {}
        if query.report == FAILURES:
            everything = [f for (b, _), fs in cells.items() if b == bucket for f in fs]
            for code in groups:
                count = sum(1 for f in cells[(bucket, code)] if f["status"] == "failed")
                out.append({**label, "error_code": code, "failures": count, "calls": len(everything),
                            "share_pct": _pct(count, len(everything))})
            continue
        for group in groups:
            mine = cells[(bucket, group)]
            row = {**label, **({query.group_by: group} if query.group_by else {})}
            if query.report == VOLUME:
                out += [{**row, "status": s, "calls": sum(1 for f in mine if f["status"] == s)}
                        for s in ("completed", "failed")]
            elif query.report == COST:
                sums = {k: sum((f[k] for f in mine), Decimal(0)) for k in ("cost_voice", "cost_extraction", "cost_total")}
                out.append({**row, "calls": len(mine), **{k: _money(v) for k, v in sums.items()},
                            **{f"mean_{k}": _money(v / len(mine)) if mine else None for k, v in sums.items()}})
            elif query.report == LATENCY:
                durations = [f["duration_seconds"] for f in mine if f["duration_seconds"] is not None]
                audio = [f["first_audio_ms"] for f in mine if f["first_audio_ms"] is not None]
                out.append({**row, "calls": len(mine), "duration_calls": len(durations),
                            **{f"duration_seconds_p{p}": _percentile(durations, p / 100) for p in (50, 90, 95, 99)},
                            "first_audio_calls": len(audio),
                            **{f"first_audio_ms_p{p}": _percentile(audio, p / 100) for p in (50, 90, 95, 99)}})
            else:
                done = [f for f in mine if f["status"] == "completed"]
                rated = [f["confidence"] for f in mine if f["confidence"] is not None]
                fields = sum(f["fields_optional"] for f in done)
                filled = sum(f["optional_filled"] for f in done)
                out.append({**row, "calls": len(mine), "completed": len(done), "completion_pct": _pct(len(done), len(mine)),
                            "confidence_calls": len(rated),
                            "confidence_mean": float((sum(Decimal(repr(c)) for c in rated) / len(rated)).quantize(
                                Decimal("0.0001"), ROUND_HALF_UP)) if rated else None,
                            "confidence_histogram": [sum(1 for c in rated if min(math.floor(c * 10), 9) == k) for k in range(10)],
                            "optional_fields": fields, "optional_filled": filled, "optional_filled_pct": _pct(filled, fields),
                            "extraction_failures": sum(1 for f in mine if f["error_code"] == "extraction_failed")})
    return out, groups


def _delta(current: Any, prior: Any) -> Any:
    if current is None or prior is None:
        return None
    now, before = float(current), float(prior)
    return round((now - before) * 100 / before, 1) if before else None


def _expected_delta(current: list[dict[str, Any]], prior: list[dict[str, Any]], series: list[Any],
                    prior_series: list[Any]) -> list[dict[str, Any]]:
    labels = {"bucket", *GROUP_BY}

    def key(row: dict[str, Any], buckets: list[Any]) -> Any:
        return (buckets.index(row["bucket"]) if "bucket" in row else None,
                tuple((k, v) for k, v in row.items() if k in labels and k != "bucket"))

    before = {key(row, prior_series): row for row in prior}
    out = []
    for row in current:
        then = before.get(key(row, series), {})
        out.append({k: v if k in labels else ([_delta(x, y) for x, y in zip(v, then.get(k) or [None] * len(v))]
                                              if isinstance(v, list) else _delta(v, then.get(k)))
                    for k, v in row.items()})
    return out


# -- the scenario ---------------------------------------------------------------------------------

@dataclass
class Facts:
    db: DatabaseConfig
    rows: list[dict[str, Any]]
    pool: AsyncConnectionPool
    loop: asyncio.Runner

    def answer(self, query: ReportQuery) -> Any:
        return self.loop.run(run(self.pool, query))


def _insert(db: DatabaseConfig, rows: list[dict[str, Any]]) -> None:
    placeholders = ", ".join(f"%({name})s" for name in COLUMNS)
    with psycopg.connect(db.conninfo()) as conn:
        conn.cursor().executemany(f"INSERT INTO call_facts_v1 ({', '.join(COLUMNS)}) VALUES ({placeholders})", rows)


def _small() -> list[dict[str, Any]]:
    """Four calls of a tenant, for the answers written out by hand below."""
    at = datetime(2026, 10, 25, 9, tzinfo=UTC)  # a Sunday; Europe leaves summer time at 01:00 UTC
    base = {"tenant_id": SMALL, "direction": "outbound", "mode": "live", "voice_engine": "alpha_25",
            "number_id": None, "country": "GB", "first_audio_ms": None, "fields_required": 1}

    def call(n: int, hours: int, **facts: Any) -> dict[str, Any]:
        return {**base, "call_id": f"cll_{'b' * 31}{n}", "created_at": at + timedelta(hours=hours),
                "ended_at": at + timedelta(hours=hours, minutes=1), **facts}

    return [
        call(1, 0, status="completed", error_code=None, duration_seconds=60, confidence=0.95,
             cost_voice=Decimal("0.0100"), cost_extraction=Decimal("0.0010"), cost_total=Decimal("0.0110"),
             fields_filled=2, fields_optional=2, optional_filled=1, first_audio_ms=800),
        call(2, 1, status="completed", error_code=None, duration_seconds=120, confidence=0.5,
             cost_voice=Decimal("0.0200"), cost_extraction=Decimal("0.0010"), cost_total=Decimal("0.0210"),
             fields_filled=1, fields_optional=2, optional_filled=0, first_audio_ms=1200, voice_engine="alpha_31"),
        call(3, 20, status="failed", error_code="no_answer", duration_seconds=None, confidence=None,
             cost_voice=Decimal("0.0000"), cost_extraction=Decimal("0.0000"), cost_total=Decimal("0.0000"),
             fields_filled=0, fields_optional=2, optional_filled=0),
        call(4, 25, status="failed", error_code="extraction_failed", duration_seconds=30, confidence=None,
             cost_voice=Decimal("0.0050"), cost_extraction=Decimal("0.0003"), cost_total=Decimal("0.0053"),
             fields_filled=0, fields_optional=2, optional_filled=0, direction="inbound", country="FR"),
    ]


@pytest.fixture(scope="module")
def facts(pg_server: DatabaseConfig) -> Iterator[Facts]:
    db = fresh_schema(pg_server)
    factory = PostgresFactory(db.eventsourcing_env())
    loop = asyncio.Runner()
    pool = AsyncConnectionPool(db.conninfo(), min_size=1, max_size=2, open=False, kwargs={"autocommit": True})
    try:
        CallFactsView(factory.datastore).create_table()
        rng = random.Random(16)
        rows = [_fact(rng, n) for n in range(400)]
        _insert(db, rows[:250])  # the rest in a second write, so that the rollup adds to its rows
        _insert(db, rows[250:])
        small = _small()
        _insert(db, small)
        loop.run(pool.open(wait=True, timeout=30))
        yield Facts(db, rows + small, pool, loop)
    finally:
        loop.run(pool.close())
        loop.close()
        factory.close()
        drop_schema(db)


WINDOWS = {
    "whole days (rollup)": (datetime(2026, 10, 21, tzinfo=UTC), datetime(2026, 11, 4, tzinfo=UTC)),
    "partial days at both edges": (datetime(2026, 10, 22, 7, 30, tzinfo=UTC), datetime(2026, 11, 2, 17, 5, tzinfo=UTC)),
    "inside one day": (datetime(2026, 10, 25, 0, 30, tzinfo=UTC), datetime(2026, 10, 25, 22, tzinfo=UTC)),
    "empty, long before": (datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 1, 9, tzinfo=UTC)),
}
CASES = [(report, group_by, window, interval)
         for report in REPORTS
         for group_by in (None, *GROUP_BY)
         if group_by is None or (REPORTS[report].groupable and group_by != REPORTS[report].broken_down_by)
         for window in WINDOWS
         for interval in ((None, "day", "week") if window != "inside one day" else (None, "hour"))
         if interval is not None or not REPORTS[report].series]


@pytest.mark.parametrize(("report", "group_by", "window", "interval"), CASES)
def test_every_report_matches_the_figures_worked_out_from_the_facts(facts, report, group_by, window, interval):
    start, end = WINDOWS[window]
    query = ReportQuery(report=report, tenant_id=TENANT, start=start, end=end, interval=interval, group_by=group_by,
                        compare=True)
    current, prior = facts.answer(query)
    rows, groups = expected(facts.rows, query)
    assert current.body["data"] == rows
    prior_rows, _ = expected(facts.rows, query.prior(), kept=groups)
    assert prior is not None and prior.body["data"] == prior_rows
    answer = compared(current, prior)
    assert answer["delta_pct"]["data"] == _expected_delta(rows, prior_rows, _series(query), _series(query.prior()))
    assert set(answer) == {"current", "prior", "delta_pct"}


@pytest.mark.parametrize("filters", [(("direction", "inbound"),), (("number_id", NUMBERS[0]),),
                                     (("voice_engine", "alpha_31"), ("mode", "live"))])
@pytest.mark.parametrize("report", list(REPORTS))
def test_filters_narrow_every_report(facts, report, filters):
    start, end = WINDOWS["partial days at both edges"]
    query = ReportQuery(report=report, tenant_id=TENANT, start=start, end=end, filters=filters,
                        interval="day" if REPORTS[report].series else None,
                        group_by="country" if REPORTS[report].groupable else None)
    assert facts.answer(query)[0].body["data"] == expected(facts.rows, query)[0]


def test_the_fixture_has_an_other_row_in_each_wide_breakdown(facts):
    start, end = WINDOWS["whole days (rollup)"]
    for report, group_by in ((COST, "number_id"), (VOLUME, "country"), (FAILURES, None), (LATENCY, "error_code")):
        query = ReportQuery(report=report, tenant_id=TENANT, start=start, end=end, group_by=group_by,
                            interval="day" if report == VOLUME else None)
        by = group_by or "error_code"
        shown = [row[by] for row in facts.answer(query)[0].body["data"]]
        assert "Other" in shown and len(set(shown)) == 9, (report, set(shown))


def test_day_buckets_are_utc_days_across_both_dst_changes(facts):
    start, end = datetime(2026, 10, 24, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC)
    query = ReportQuery(report=VOLUME, tenant_id=TENANT, start=start, end=end, interval="day")
    buckets = [row["bucket"] for row in facts.answer(query)[0].body["data"]][::2]
    assert buckets == [f"2026-{m:02d}-{d:02d}T00:00:00Z" for m, d in
                       [(10, 24), (10, 25), (10, 26), (10, 27), (10, 28), (10, 29), (10, 30), (10, 31), (11, 1), (11, 2)]]


@pytest.mark.parametrize("report", list(REPORTS))
@pytest.mark.parametrize("compare", [False, True])
def test_the_csv_is_the_json_row_for_row(facts, report, compare):
    start, end = WINDOWS["partial days at both edges"]
    query = ReportQuery(report=report, tenant_id=TENANT, start=start, end=end, compare=compare,
                        interval="day", group_by="voice_engine" if REPORTS[report].groupable else None)
    current, prior = facts.answer(query)
    answer = compared(current, prior)
    table = list(csv.DictReader(io.StringIO("".join(csv_lines(columns(query), current, prior)))))
    data = answer["current"]["data"] if compare else answer["data"]
    assert len(table) == len(data) > 0

    def cell(value: Any) -> str:
        return "" if value is None else str(value)

    def flat(row: dict[str, Any]) -> dict[str, str]:
        out = {}
        for name, value in row.items():
            if isinstance(value, list):
                out.update({f"{name}_{i}": cell(v) for i, v in enumerate(value)})
            else:
                out[name] = cell(value)
        return out

    for i, line in enumerate(table):
        assert {k: v for k, v in line.items() if not k.startswith(("prior_", "delta_pct_"))} == flat(data[i])
        if compare:
            figures = [c for c in columns(query) if c not in {"bucket", *GROUP_BY}]
            before, change = flat(answer["prior"]["data"][i]), flat(answer["delta_pct"]["data"][i])
            assert {c: line[f"prior_{c}"] for c in figures} == {c: before[c] for c in figures}
            assert {c: line[f"delta_pct_{c}"] for c in figures} == {c: change[c] for c in figures}


# -- one tenant's answers, by hand ----------------------------------------------------------------

def _small_query(report: str, **fields: Any) -> ReportQuery:
    return ReportQuery(**{"report": report, "tenant_id": SMALL, "start": datetime(2026, 10, 25, tzinfo=UTC),
                          "end": datetime(2026, 10, 27, tzinfo=UTC), **fields})


def test_small_volume_by_day_and_status(facts):
    data = facts.answer(_small_query(VOLUME, interval="day"))[0].body["data"]
    assert data == [
        {"bucket": "2026-10-25T00:00:00Z", "status": "completed", "calls": 2},
        {"bucket": "2026-10-25T00:00:00Z", "status": "failed", "calls": 0},
        {"bucket": "2026-10-26T00:00:00Z", "status": "completed", "calls": 0},
        {"bucket": "2026-10-26T00:00:00Z", "status": "failed", "calls": 2},
    ]


def test_small_latency_percentiles(facts):
    (row,) = facts.answer(_small_query(LATENCY))[0].body["data"]
    # durations 30, 60, 120: p50 = 60; p90 at rank 1.8 = 60 + 0.8 * 60 = 108; p95 = 114; p99 = 118.8
    # first audio 800, 1200: p50 = 1000; p90 = 800 + 0.9 * 400 = 1160; p95 = 1180; p99 = 1196
    assert row == {"calls": 4, "duration_calls": 3, "duration_seconds_p50": 60.0, "duration_seconds_p90": 108.0,
                   "duration_seconds_p95": 114.0, "duration_seconds_p99": 118.8, "first_audio_calls": 2,
                   "first_audio_ms_p50": 1000.0, "first_audio_ms_p90": 1160.0, "first_audio_ms_p95": 1180.0,
                   "first_audio_ms_p99": 1196.0}


def test_small_cost_breakdown_by_engine(facts):
    data = facts.answer(_small_query(COST, group_by="voice_engine"))[0].body["data"]
    assert data == [
        {"voice_engine": "alpha_25", "calls": 3, "cost_voice": "0.0150", "cost_extraction": "0.0013",
         "cost_total": "0.0163", "mean_cost_voice": "0.0050", "mean_cost_extraction": "0.0004",
         "mean_cost_total": "0.0054"},
        {"voice_engine": "alpha_31", "calls": 1, "cost_voice": "0.0200", "cost_extraction": "0.0010",
         "cost_total": "0.0210", "mean_cost_voice": "0.0200", "mean_cost_extraction": "0.0010",
         "mean_cost_total": "0.0210"},
    ]


def test_small_top_failures(facts):
    data = facts.answer(_small_query(FAILURES))[0].body["data"]
    assert data == [{"error_code": "extraction_failed", "failures": 1, "calls": 4, "share_pct": 25.0},
                    {"error_code": "no_answer", "failures": 1, "calls": 4, "share_pct": 25.0}]


def test_small_outcome_quality(facts):
    (row,) = facts.answer(_small_query(QUALITY))[0].body["data"]
    assert row == {"calls": 4, "completed": 2, "completion_pct": 50.0, "confidence_calls": 2, "confidence_mean": 0.725,
                   "confidence_histogram": [0, 0, 0, 0, 0, 1, 0, 0, 0, 1], "optional_fields": 4,
                   "optional_filled": 1, "optional_filled_pct": 25.0, "extraction_failures": 1}


def test_small_compare_with_an_empty_prior_window(facts):
    current, prior = facts.answer(_small_query(COST, compare=True))
    answer = compared(current, prior)
    assert answer["prior"]["start"] == "2026-10-23T00:00:00Z" and answer["prior"]["end"] == "2026-10-25T00:00:00Z"
    assert answer["prior"]["data"] == [{"calls": 0, "cost_voice": "0.0000", "cost_extraction": "0.0000",
                                        "cost_total": "0.0000", "mean_cost_voice": None,
                                        "mean_cost_extraction": None, "mean_cost_total": None}]
    assert answer["delta_pct"]["data"] == [dict.fromkeys(answer["current"]["data"][0], None)]
    assert answer["current"]["data"][0]["calls"] == 4


def test_small_compare_against_a_prior_with_calls(facts):
    later = _small_query(VOLUME, interval="day", start=datetime(2026, 10, 26, tzinfo=UTC),
                         end=datetime(2026, 10, 27, tzinfo=UTC), compare=True)
    answer = compared(*facts.answer(later))
    # prior day: 2 completed, 0 failed; this day: 0 completed, 2 failed
    assert answer["delta_pct"]["data"] == [
        {"bucket": "2026-10-26T00:00:00Z", "status": "completed", "calls": -100.0},
        {"bucket": "2026-10-26T00:00:00Z", "status": "failed", "calls": None},
    ]


@pytest.mark.parametrize("window", ["whole days (rollup)", "partial days at both edges", "inside one day"])
def test_the_percentiles_are_postgresqls_percentile_cont(facts, window):
    start, end = WINDOWS[window]
    query = ReportQuery(report=LATENCY, tenant_id=TENANT, start=start, end=end, group_by="voice_engine")
    shown = {row["voice_engine"]: row for row in facts.answer(query)[0].body["data"]}
    with psycopg.connect(facts.db.conninfo()) as conn:
        exact = conn.execute(
            "SELECT voice_engine, percentile_cont(ARRAY[0.5, 0.9, 0.95, 0.99]) WITHIN GROUP (ORDER BY duration_seconds), "
            "percentile_cont(ARRAY[0.5, 0.9, 0.95, 0.99]) WITHIN GROUP (ORDER BY first_audio_ms) FROM call_facts_v1 "
            "WHERE tenant_id = %s AND created_at >= %s AND created_at < %s GROUP BY 1", (TENANT, start, end)).fetchall()
    assert exact and {engine for engine, _, _ in exact} == set(shown)
    for engine, durations, audio in exact:
        row = shown[engine]
        assert [row[f"duration_seconds_p{p}"] for p in (50, 90, 95, 99)] == [None if v is None else round(v, 3) for v in durations or [None] * 4]
        assert [row[f"first_audio_ms_p{p}"] for p in (50, 90, 95, 99)] == [None if v is None else round(v, 3) for v in audio or [None] * 4]


@pytest.mark.parametrize("fields", [{"interval": "month"}, {"group_by": "objective; DROP TABLE x"},
                                    {"filters": (("to_number", "+44"),)}, {"report": "revenue"}])
def test_a_query_names_only_known_reports_intervals_dimensions_and_filters(fields):
    with pytest.raises(ValueError):
        ReportQuery(**{"report": VOLUME, "tenant_id": TENANT, "start": START, "end": START + timedelta(days=1), **fields})
