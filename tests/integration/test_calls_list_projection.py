"""The calls list read model on PostgreSQL: projection from Call events, every list filter and sort of
SPEC.md (Calls: list query parameters), paging and totals, tenant isolation, replay, and the CSV export.

Calls are made two ways: run end to end through the Calling application (simulated mode), and
built directly as Call aggregates with chosen statuses, times and measures; the aggregates are
the oracle every query result is compared with.
"""

from __future__ import annotations

import asyncio
import csv
import io
import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import Tracking
from eventsourcing.postgres import PostgresFactory
from psycopg_pool import AsyncConnectionPool

from adapters.postgres.database import DatabaseConfig
from adapters.scripted.brain import ScriptedBrain, ScriptedExtractor
from adapters.simulated.callee import SimulatedCallee
from application.calling import runner
from application.calling.app import Calling, CallingPorts
from application.calling.create import CallRequest, prepare_call
from application.principal import Principal
from domain.calls.call import Call
from domain.calls.call_rules import TERMINAL, new_call_id
from domain.calls.pricing import DEFAULT_PRICES
from projections.calls_list.csv_export import CSV_COLUMNS, csv_lines
from projections.calls_list.projection import CallsListProjection
from projections.calls_list.queries import CallFilters, CallPage, export_rows, list_calls
from projections.calls_list.view import CONFIDENCE_BUCKETS, PREFIX_COUNTED, CallsListView
from application.follower import ProjectionWorker
from tests.postgres import drop_schema, fresh_schema
from tests.support.calls import queued_call
from tests.support.live_ports import unused_live_ports

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)
MIDNIGHT = datetime(2026, 10, 1, tzinfo=timezone.utc)
BASE = MIDNIGHT + timedelta(hours=9)
TENANT = "ten_" + "a" * 32
OTHER = "ten_" + "c" * 32
ENGINES = ("alpha_25", "alpha_31", "beta_think_fast")
PREFIXES = ("+4420718", "+4416149", "+1415555", "+3314278")
OBJECTIVES = {  # call number -> objective; the rest get a plain one
    3: '=HYPERLINK("http://evil.example","click")',
    4: 'Say "hello", then, politely,\nask about the bill',
    5: "+1 call back tomorrow",
    6: "-2 days late",
    7: "@SUM(A1:A2)",
    8: "\tindented",
    9: "\rcarriage",
    10: "nul\x00inside",
}


def _at(hours: float) -> datetime:
    return BASE + timedelta(hours=hours)


def _principal(tenant_id: str) -> Principal:
    return Principal(kind="api_key", tenant_id=tenant_id, user_id="usr_" + "b" * 32,
                     verification_status="approved", tier="standard", key_id="key_x")


def _direct_call(tenant_id: str, n: int) -> Call:
    """Call number ``n``: status, mode, direction, engine, number and measures all vary with ``n``;
    created_at repeats in threes (so the call_id tiebreak decides some orders) and spans 12 days."""
    created = BASE + timedelta(hours=5 * (n - n % 3))
    call = queued_call(
        tenant_id=tenant_id, call_id=new_call_id(), direction="inbound" if n % 5 == 0 else "outbound",
        mode="simulated" if n % 4 == 0 else "live", to=f"{PREFIXES[n % 4]}{n:04d}", from_number="+15005550006",
        objective=OBJECTIVES.get(n, f"Confirm appointment number {n}"), outcome_schema={"ok": {"type": "boolean"}},
        consent_type="prior_express", consent_record_id=None, voice_id=None, voice_engine=ENGINES[n % 3],
        language="en-US", metadata={"batch": f"b{n % 2}", "n": n}, variables={}, simulation=None,
        created_by="key_x", max_duration_seconds=600, at=created,
    )
    kind = n % 10
    if kind == 0:
        return call  # queued
    if kind == 9:
        call.fail("cancelled", "cancelled by key_x", created + timedelta(seconds=5))  # failed while queued
        return call
    call.start(created + timedelta(seconds=1))
    if kind == 1:
        return call  # in progress
    call.answer("human", created + timedelta(seconds=2))
    duration = (n * 7) % 50
    call.end(duration, created + timedelta(seconds=2 + duration))
    confidence = ((n * 13) % 11) / 10
    voice = (Decimal(duration) * Decimal("0.0015")).quantize(Decimal("0.0001"))
    if kind == 2:
        call.fail("no_answer", "nobody answered", created + timedelta(seconds=60), cost_voice=voice)
        return call
    call.record_outcome({"ok": True}, confidence, {"input_tokens": 100}, created + timedelta(seconds=61))
    if kind == 3:  # an outcome, then a failure: the failure drops it
        call.fail("timeout", "too long", created + timedelta(seconds=62), cost_voice=voice)
        return call
    call.complete(voice, Decimal("0.0010") * (n % 3), created + timedelta(seconds=62))
    return call


def _run_simulated(calling: Calling, answered_by: str) -> Call:
    request = CallRequest(
        to="+442071838750", objective="Confirm the dentist appointment", consent_type="prior_express",
        mode="simulated", outcome_schema={"confirmed": {"type": "boolean"}},
        simulation={"facts": {"confirmed": True}, "answered_by": answered_by},
    )
    call = prepare_call(calling, _principal(TENANT), request, NOW)
    calling.commit(call)
    claimed = runner.claim(calling, call.call_id)
    assert claimed is not None
    runner.run(calling, claimed)
    ran = calling.find(Call, call.id)
    assert ran is not None
    return ran


@dataclass
class Scenario:
    db: DatabaseConfig
    calling: Calling
    view: CallsListView
    projection: CallsListProjection
    worker: ProjectionWorker
    calls: dict[str, Call]  # call_id -> the aggregate, as last saved
    loop: asyncio.Runner
    pool: AsyncConnectionPool

    def page(self, tenant_id: str = TENANT, limit: int = 200, offset: int = 0, **filters: Any) -> CallPage:
        return self.loop.run(list_calls(self.pool, tenant_id=tenant_id, filters=CallFilters(**filters),
                                        limit=limit, offset=offset))

    def export(self, tenant_id: str = TENANT, status: str | None = None, limit: int = 10000) -> list[tuple]:
        async def collect() -> list[tuple]:
            return [row async for row in export_rows(self.pool, tenant_id=tenant_id, status=status, limit=limit)]

        return self.loop.run(collect())

    def expected(self, tenant_id: str = TENANT, keep: Callable[[Call], bool] = lambda c: True,
                 sort: str = "created_desc") -> list[str]:
        return [c.call_id for c in _ordered([c for c in self.calls.values() if c.tenant_id == tenant_id and keep(c)],
                                            sort)]

    def snapshot(self) -> tuple[list[tuple], list[tuple], list[tuple], dict[str, list[tuple]]]:
        with psycopg.connect(self.db.conninfo()) as conn:
            rows = conn.execute("SELECT * FROM calls_list_v1 ORDER BY call_id").fetchall()
            counts = conn.execute(
                "SELECT tenant_id, status, mode, direction, voice_engine, has_outcome, calls FROM calls_list_v1_counts "
                "WHERE calls <> 0 ORDER BY 1, 2, 3, 4, 5, 6").fetchall()
            daily = conn.execute(
                "SELECT tenant_id, day, status, mode, direction, voice_engine, has_outcome, calls "
                "FROM calls_list_v1_daily_counts WHERE calls <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7").fetchall()
            keyed = {name: conn.execute(
                f"SELECT tenant_id, {key}, status, mode, direction, voice_engine, has_outcome, calls "
                f"FROM calls_list_v1_{name} WHERE calls <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7").fetchall()
                for name, key in KEYED_COUNTS.items()}
        return rows, counts, daily, keyed


KEYED_COUNTS = {"monthly_counts": "month", "prefix_counts": "prefix", "confidence_counts": "bucket"}


def _ordered(calls: list[Call], sort: str) -> list[Call]:
    """The oracle of queries.SORTS: measure (NULLS LAST), then created_at DESC, call_id DESC."""
    if sort == "created_asc":
        return sorted(calls, key=lambda c: (c.created_at, c.call_id))
    ordered = sorted(calls, key=lambda c: (c.created_at, c.call_id), reverse=True)
    measure = {"duration_desc": ("duration_seconds", True), "duration_asc": ("duration_seconds", False),
               "confidence_desc": ("confidence", True), "cost_desc": ("cost_total", True)}.get(sort)
    if measure is None:
        return ordered
    name, descending = measure
    present = [c for c in ordered if _listed(c)[name] is not None]
    missing = [c for c in ordered if _listed(c)[name] is None]
    return sorted(present, key=lambda c: _listed(c)[name], reverse=descending) + missing


def _listed(call: Call) -> dict[str, Any]:
    """What the list shows of an aggregate: costs only once settled, the outcome flag as it stands."""
    terminal = call.status in TERMINAL
    return {
        "call_id": call.call_id, "status": call.status, "to": call.to, "from": call.from_number,
        "objective": call.objective.replace("\x00", "\ufffd"), "confidence": call.confidence,
        "duration_seconds": call.duration_seconds,
        "cost_total": Decimal(call.cost_total) if terminal else None,
        "error_code": call.error_code, "recording_url": None,
        "created_at": call.created_at.isoformat().replace("+00:00", "Z"), "mode": call.mode,
        "direction": call.direction, "voice_engine": call.voice_engine, "has_outcome": call.outcome is not None,
        "metadata": call.metadata,
    }


@pytest.fixture(scope="module")
def scenario(pg_server: DatabaseConfig) -> Iterator[Scenario]:
    db = fresh_schema(pg_server)
    env = db.eventsourcing_env(pool_size=2)
    ports = CallingPorts(clock=lambda: NOW, brain=ScriptedBrain(), extractor=ScriptedExtractor(),
                         callee=SimulatedCallee, prices=DEFAULT_PRICES)
    calling = Calling(env, ports=ports, live=unused_live_ports())
    factory = PostgresFactory(env)
    view = CallsListView(factory.datastore)
    view.create_table()
    projection = CallsListProjection(view)
    worker = ProjectionWorker(calling, projection.process_event, view, name=projection.name)
    loop = asyncio.Runner()
    pool = AsyncConnectionPool(db.conninfo(), min_size=1, max_size=2, open=False, kwargs={"autocommit": True})
    loop.run(pool.open(wait=True, timeout=30))
    try:
        direct = [_direct_call(TENANT, n) for n in range(60)] + [_direct_call(OTHER, n) for n in range(12)]
        calling.commit(*direct)
        ran = [_run_simulated(calling, "human"), _run_simulated(calling, "machine_start")]
        calls = {c.call_id: c for c in [*direct, *ran]}
        worker.catch_up()
        yield Scenario(db, calling, view, projection, worker, calls, loop, pool)
    finally:
        loop.run(pool.close())
        loop.close()
        factory.close()
        calling.close()
        drop_schema(db)


# -- projection ------------------------------------------------------------------------------------


def test_every_call_is_listed_as_its_aggregate_stands(scenario):
    page = scenario.page()
    assert page.total == len(page.items) == 62
    for item in page.items:
        expected = _listed(scenario.calls[item["call_id"]])
        cost = expected.pop("cost_total")
        assert item["cost_total"] == (format(cost, "f") if cost is not None else None)
        assert {k: v for k, v in item.items() if k != "cost_total"} == expected


def test_a_simulated_call_run_end_to_end_is_listed_completed_with_its_measures(scenario):
    completed = next(c for c in scenario.calls.values() if c.objective.startswith("Confirm the dentist")
                     and c.status == "completed")
    item = next(i for i in scenario.page(status="completed").items if i["call_id"] == completed.call_id)
    assert (item["confidence"], item["duration_seconds"], item["has_outcome"]) == (
        completed.confidence, completed.duration_seconds, True)
    assert item["cost_total"] == format(completed.cost_total, "f")
    assert item["created_at"] == "2026-11-02T12:00:00Z"


def test_a_call_abandoned_for_a_machine_is_listed_failed_with_its_error_code(scenario):
    failed = [i for i in scenario.page(status="failed").items if i["error_code"] == "machine_detected"]
    assert len(failed) == 1
    assert failed[0]["has_outcome"] is False and failed[0]["duration_seconds"] is None


def test_a_nul_in_an_objective_is_shown_as_a_replacement_character(scenario):
    assert any(i["objective"] == "nul\ufffdinside" for i in scenario.page().items)


def test_replaying_every_event_changes_nothing(scenario):
    before = scenario.snapshot()
    for notification in scenario.calling.recorder.select_notifications(start=1, limit=10_000):
        event = scenario.calling.mapper.to_domain_event(notification)
        scenario.projection.process_event(event, Tracking("replay", notification.id))
    assert scenario.snapshot() == before


def test_the_counts_tables_agree_with_the_rows(scenario):
    with psycopg.connect(scenario.db.conninfo()) as conn:
        grouped = conn.execute(
            "SELECT tenant_id, status, mode, direction, voice_engine, has_outcome, count(*) FROM calls_list_v1 "
            "GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6"
        ).fetchall()
        by_day = conn.execute(
            "SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, status, mode, direction, voice_engine, "
            "has_outcome, count(*) FROM calls_list_v1 GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7"
        ).fetchall()
    _rows, counts, daily, _keyed = scenario.snapshot()
    assert (counts, daily) == (grouped, by_day)


def test_the_monthly_prefix_and_confidence_counts_agree_with_the_calls(scenario):
    expected: dict[str, Counter] = {name: Counter() for name in KEYED_COUNTS}
    for call in scenario.calls.values():
        listed = _listed(call)
        filters = tuple(listed[name] for name in ("status", "mode", "direction", "voice_engine", "has_outcome"))
        expected["monthly_counts"][(call.tenant_id, call.created_at.date().replace(day=1), *filters)] += 1
        for length in range(1, min(len(call.to), PREFIX_COUNTED) + 1):
            expected["prefix_counts"][(call.tenant_id, call.to[:length], *filters)] += 1
        if call.confidence is not None:
            bucket = math.floor(call.confidence * CONFIDENCE_BUCKETS)
            expected["confidence_counts"][(call.tenant_id, bucket, *filters)] += 1
    _rows, _counts, _daily, keyed = scenario.snapshot()
    assert {name: Counter({row[:-1]: row[-1] for row in rows}) for name, rows in keyed.items()} == expected


def test_deleted_rows_leave_the_counts_tables(scenario):
    with psycopg.connect(scenario.db.conninfo()) as conn:  # rolled back at the end
        conn.execute("DELETE FROM calls_list_v1 WHERE tenant_id = %s", (OTHER,))
        left = conn.execute("SELECT sum(calls) FROM calls_list_v1_counts WHERE tenant_id = %s", (OTHER,)).fetchone()
        left_daily = conn.execute("SELECT sum(calls) FROM calls_list_v1_daily_counts WHERE tenant_id = %s",
                                  (OTHER,)).fetchone()
        conn.rollback()
    assert left == left_daily == (0,)


def test_tracking_reaches_the_head_also_through_events_that_change_no_row(scenario):
    head = scenario.calling.recorder.max_notification_id()
    assert scenario.view.max_tracking_id(scenario.calling.name) == head


# -- filters, sorts, paging ------------------------------------------------------------------------

FILTERS: list[tuple[dict[str, Any], Callable[[Call], bool]]] = [
    ({"status": "queued"}, lambda c: c.status == "queued"),
    ({"status": "in_progress"}, lambda c: c.status == "in_progress"),
    ({"status": "completed"}, lambda c: c.status == "completed"),
    ({"status": "failed"}, lambda c: c.status == "failed"),
    ({"mode": "simulated"}, lambda c: c.mode == "simulated"),
    ({"direction": "inbound"}, lambda c: c.direction == "inbound"),
    ({"voice_engine": "alpha_31"}, lambda c: c.voice_engine == "alpha_31"),
    ({"has_outcome": True}, lambda c: c.outcome is not None),
    ({"has_outcome": False}, lambda c: c.outcome is None),
    ({"start": _at(60)}, lambda c: c.created_at >= _at(60)),
    ({"end": _at(60)}, lambda c: c.created_at < _at(60)),
    ({"start": _at(47), "end": _at(221)}, lambda c: _at(47) <= c.created_at < _at(221)),
    ({"start": MIDNIGHT + timedelta(days=2), "end": MIDNIGHT + timedelta(days=8)},  # whole days only
     lambda c: MIDNIGHT + timedelta(days=2) <= c.created_at < MIDNIGHT + timedelta(days=8)),
    ({"start": _at(44), "end": _at(61)}, lambda c: _at(44) <= c.created_at < _at(61)),  # within one day
    ({"start": _at(60), "end": _at(45)}, lambda c: False),
    ({"start": _at(47).replace(tzinfo=None), "end": _at(130).astimezone(timezone(timedelta(hours=-5)))},
     lambda c: _at(47) <= c.created_at < _at(130)),  # no zone means UTC; any zone is converted
    ({"status": "completed", "start": _at(20), "end": _at(200)},
     lambda c: c.status == "completed" and _at(20) <= c.created_at < _at(200)),
    ({"to_prefix": "+44"}, lambda c: c.to.startswith("+44")),
    ({"to_prefix": "+1415555"}, lambda c: c.to.startswith("+1415555")),
    ({"to_prefix": "+4420718001"}, lambda c: c.to.startswith("+4420718001")),
    ({"to_prefix": "%"}, lambda c: False),  # a LIKE wildcard is matched literally
    ({"to_prefix": "_"}, lambda c: False),
    ({"min_confidence": 0.5}, lambda c: c.confidence is not None and c.confidence >= 0.5),
    ({"max_confidence": 0.3}, lambda c: c.confidence is not None and c.confidence <= 0.3),
    ({"min_confidence": 0.2, "max_confidence": 0.6}, lambda c: c.confidence is not None and 0.2 <= c.confidence <= 0.6),
    ({"status": "completed", "mode": "live", "voice_engine": "alpha_25", "to_prefix": "+44"},
     lambda c: c.status == "completed" and c.mode == "live" and c.voice_engine == "alpha_25" and c.to.startswith("+44")),
    ({"has_outcome": False, "direction": "inbound", "mode": "simulated"},
     lambda c: c.outcome is None and c.direction == "inbound" and c.mode == "simulated"),
]


@pytest.mark.parametrize(("filters", "keep"), FILTERS, ids=[repr(f) for f, _ in FILTERS])
def test_each_list_filter_returns_exactly_the_matching_calls(scenario, filters, keep):
    expected = scenario.expected(keep=keep)
    page = scenario.page(**filters)
    assert [i["call_id"] for i in page.items] == expected
    assert page.total == len(expected)
    assert scenario.page(limit=1, **filters).total == len(expected)  # counted, not seen


SORTS = ("created_desc", "created_asc", "duration_desc", "duration_asc", "confidence_desc", "cost_desc")


@pytest.mark.parametrize("sort", SORTS)
def test_each_sort_orders_by_its_measure_then_newest_then_call_id(scenario, sort):
    assert [i["call_id"] for i in scenario.page(sort=sort).items] == scenario.expected(sort=sort)


@pytest.mark.parametrize("sort", SORTS)
def test_pages_of_any_sort_tile_the_list_without_gaps_or_repeats(scenario, sort):
    expected = scenario.expected(sort=sort)
    seen: list[str] = []
    for offset in range(0, len(expected) + 7, 7):
        page = scenario.page(sort=sort, limit=7, offset=offset)
        assert (page.total, page.limit, page.offset) == (len(expected), 7, offset)
        seen += [i["call_id"] for i in page.items]
    assert seen == expected


@pytest.mark.parametrize("filters", [{"status": "completed"}, {"to_prefix": "+44"}, {"start": _at(47), "end": _at(221)},
                                     {}])
def test_total_counts_every_match_whatever_the_page(scenario, filters):
    keep = next(k for f, k in FILTERS if f == filters) if filters else (lambda c: True)
    expected = scenario.expected(keep=keep)
    for offset in (0, 3, len(expected) - 1, len(expected), len(expected) + 50):
        page = scenario.page(limit=2, offset=offset, **filters)
        assert page.total == len(expected)
        assert [i["call_id"] for i in page.items] == expected[offset:offset + 2]


def test_a_page_is_capped_at_200_rows_and_defaults_are_sane(scenario):
    page = scenario.page(limit=1000)
    assert page.limit == 200  # SPEC.md Limits: a server cap of 200 rows
    assert scenario.page(limit=0).limit == 1
    assert scenario.page(offset=-5).offset == 0


def test_an_unknown_sort_is_refused():
    with pytest.raises(ValueError, match="sort must be one of"):
        CallFilters(sort="objective_asc")


def test_a_tenant_sees_only_its_own_calls(scenario):
    other = scenario.page(tenant_id=OTHER)
    assert [i["call_id"] for i in other.items] == scenario.expected(tenant_id=OTHER)
    assert other.total == 12
    assert not {i["call_id"] for i in other.items} & {i["call_id"] for i in scenario.page().items}
    assert scenario.page(tenant_id=OTHER, limit=2, status="completed").total == len(
        scenario.expected(tenant_id=OTHER, keep=lambda c: c.status == "completed"))
    assert scenario.page(tenant_id="ten_" + "f" * 32).total == 0
    assert {row[0] for row in scenario.export(tenant_id=OTHER)} == set(scenario.expected(tenant_id=OTHER))


# -- CSV export ------------------------------------------------------------------------------------


def _parsed(rows: list[tuple]) -> list[list[str]]:
    return list(csv.reader(io.StringIO("".join(csv_lines(rows)), newline="")))


def test_export_rows_come_newest_first_in_the_spec_column_order(scenario):
    rows = scenario.export()
    assert [r[0] for r in rows] == scenario.expected()
    listed = {i["call_id"]: i for i in scenario.page().items}
    for row in rows:
        item = listed[row[0]]
        assert row == tuple(item[name] for name in CSV_COLUMNS)


def test_export_filters_by_status_and_stops_at_its_limit(scenario):
    assert [r[0] for r in scenario.export(status="failed")] == scenario.expected(keep=lambda c: c.status == "failed")
    assert [r[0] for r in scenario.export(limit=5)] == scenario.expected()[:5]
    assert scenario.export(limit=0) == []


def test_the_csv_starts_with_the_header_of_the_spec(scenario):
    lines = list(csv_lines(scenario.export(limit=1)))
    assert lines[0] == ("call_id,created_at,to,from,objective,status,confidence,duration_seconds,cost_total,"
                        "error_code,recording_url\r\n")
    assert all(line.endswith("\r\n") for line in lines)


def test_csv_cells_with_commas_quotes_and_newlines_round_trip(scenario):
    parsed = {row[0]: row for row in _parsed(scenario.export())[1:]}
    tricky = next(c for c in scenario.calls.values() if c.tenant_id == TENANT and c.objective.startswith("Say"))
    assert parsed[tricky.call_id][4] == 'Say "hello", then, politely,\nask about the bill'
    assert '"Say ""hello"", then, politely,\nask about the bill"' in "".join(csv_lines(scenario.export()))


@pytest.mark.parametrize("objective", [o for o in OBJECTIVES.values() if o[0] in "=+-@\t\r"])
def test_a_free_text_cell_that_could_run_as_a_formula_is_defused(scenario, objective):
    call = next(c for c in scenario.calls.values() if c.tenant_id == TENANT and c.objective == objective)
    parsed = {row[0]: row for row in _parsed(scenario.export())[1:]}
    assert parsed[call.call_id][4] == "'" + objective


def test_phone_numbers_ids_numbers_and_timestamps_are_written_unaltered(scenario):
    rows = scenario.export()
    for raw, cells in zip(rows, _parsed(rows)[1:]):
        assert cells[2].startswith("+") and cells[2] == raw[2]  # +44..., +1...: E.164, no apostrophe
        assert cells[3] == raw[3] == "+15005550006"
        assert [cells[0], cells[1], cells[5]] == [raw[0], raw[1], raw[5]]
        assert cells[6:9] == ["" if v is None else str(v) for v in raw[6:9]]


def test_a_row_with_the_wrong_number_of_cells_is_refused():
    with pytest.raises(ValueError, match="11 cells"):
        list(csv_lines([("cll_x", "2026-11-02T12:00:00Z")]))
