"""``call_facts_v1`` from Call and NumberClaim events (issue 16 item 1): one row per terminal call
with every fact, none for a running call, the number a call used at the time, time to first agent
audio where a voice session ran; a replay changes nothing, and dropping the view and replaying
from zero gives the same rows and the same reports.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import Tracking
from eventsourcing.postgres import PostgresFactory
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from adapters.postgres.database import DatabaseConfig
from adapters.scripted.brain import ScriptedBrain, ScriptedExtractor
from adapters.simulated.callee import SimulatedCallee
from application.calling.app import Calling, CallingPorts
from application.follower import ProjectionWorker
from domain.analytics.reports import REPORTS, ReportQuery
from domain.calls.call import Call
from domain.calls.call_rules import AGENT, CALLEE
from domain.calls.outcome_schema import OutcomeSchema
from domain.calls.pricing import DEFAULT_PRICES
from domain.numbers.number import NumberClaim
from projections.call_facts.compare import compared
from projections.call_facts.projection import CallFactsProjection
from projections.call_facts.reports import run
from projections.call_facts.view import ROLLUPS, CallFactsView
from tests.postgres import drop_schema, fresh_schema
from tests.support.calls import NOW, completed_call, failed_call, later, queued_call, talking_call
from tests.support.live_ports import unused_live_ports

TENANT = "ten_" + "f" * 32
OWN = "+14155550100"  # the tenant's number: queued_call's from_number
NUMBER_ID = str(uuid.UUID(int=7))
OPTIONALS = {"confirmed": {"type": "boolean"}, "slot": {"type": "string", "optional": True},
             "note": {"type": "string", "optional": True}}


def _simulated(**overrides: Any) -> Call:
    call = queued_call(tenant_id=TENANT, **overrides)
    call.start(later(1))
    call.record_turn(AGENT, "Hello", later(2))
    call.record_turn(CALLEE, "Hi", later(3))
    call.end(42, later(4))
    call.record_outcome({"confirmed": True, "slot": "am", "note": None}, 0.35, {}, later(5))
    call.complete(Decimal("0"), Decimal("0.0031"), later(6))
    return call


def _inbound_voicemail() -> Call:
    call = queued_call(tenant_id=TENANT, direction="inbound", mode="live", simulation=None, to=OWN,
                       from_number="+33142685300")
    call.inbound_answered("CA" + "1" * 32, later(1))
    call.route_inbound(action="voicemail", reason="voicemail_always", destination=None, persona=None, record=False,
                       now=later(2), objective="Take a message",
                       outcome_schema=OutcomeSchema.of({"message": {"type": "string"},
                                                        "callback": {"type": "boolean", "optional": True}}))
    call.fail("hung_up", "the caller said nothing", later(9))
    return call


@dataclass
class World:
    db: DatabaseConfig
    calling: Calling
    calls: dict[str, Call]
    pool: AsyncConnectionPool
    loop: asyncio.Runner

    def facts(self) -> dict[str, dict[str, Any]]:
        with psycopg.connect(self.db.conninfo(), row_factory=dict_row) as conn:
            return {row["call_id"]: row for row in conn.execute("SELECT * FROM call_facts_v1").fetchall()}

    def table(self, name: str) -> list[dict[str, Any]]:
        with psycopg.connect(self.db.conninfo(), row_factory=dict_row) as conn:
            return conn.execute(f"SELECT * FROM {name} ORDER BY 1, 2, 3").fetchall()  # noqa: S608 - test names

    def project(self) -> None:
        factory = PostgresFactory(self.db.eventsourcing_env())
        try:
            view = CallFactsView(factory.datastore)
            view.create_table()
            projection = CallFactsProjection(view)
            ProjectionWorker(self.calling, projection.process_event, view, name=projection.name,
                             handles=projection.handles).catch_up()
        finally:
            factory.close()

    def reports(self) -> list[Any]:
        answers = []
        for report in REPORTS:
            for group_by in (None, "country", "number_id"):
                if group_by and not REPORTS[report].groupable:
                    continue
                query = ReportQuery(report=report, tenant_id=TENANT, start=NOW - timedelta(days=2),
                                    end=NOW + timedelta(days=1), group_by=group_by, compare=True)
                answers.append(compared(*self.loop.run(run(self.pool, query))))
        return answers


@pytest.fixture(scope="module")
def world(pg_server: DatabaseConfig) -> Iterator[World]:
    db = fresh_schema(pg_server)
    env = db.eventsourcing_env(pool_size=2)
    ports = CallingPorts(clock=lambda: NOW, brain=ScriptedBrain(), extractor=ScriptedExtractor(),
                         callee=SimulatedCallee, prices=DEFAULT_PRICES)
    calling = Calling(env, ports=ports, live=unused_live_ports())
    loop = asyncio.Runner()
    pool = AsyncConnectionPool(db.conninfo(), min_size=1, max_size=2, open=False, kwargs={"autocommit": True})
    loop.run(pool.open(wait=True, timeout=30))
    try:
        claim = NumberClaim(tenant_id=TENANT, e164=OWN, number_id=NUMBER_ID, at=NOW - timedelta(days=1))
        calling.commit(claim)
        calls = {
            "live": completed_call(tenant_id=TENANT),
            "failed": failed_call(tenant_id=TENANT, to="+33142685300"),
            "simulated": _simulated(outcome_schema=OPTIONALS, template_id="tpl_" + "1" * 32,
                                    flow={"flow_id": "flw_" + "2" * 32, "version": 3}),
            "voicemail": _inbound_voicemail(),
            "running": talking_call(tenant_id=TENANT),
        }
        calling.commit(*calls.values())
        claim.release(NUMBER_ID, at=NOW + timedelta(hours=1))
        calling.commit(claim)
        calls["after_release"] = completed_call(tenant_id=TENANT)
        calling.commit(calls["after_release"])
        world = World(db, calling, calls, pool, loop)
        world.project()
        yield world
    finally:
        loop.run(pool.close())
        loop.close()
        calling.close()
        drop_schema(db)


def test_a_completed_live_call_has_every_fact(world):
    call = world.calls["live"]
    fact = world.facts()[call.call_id]
    assert fact == {
        "call_id": call.call_id, "tenant_id": TENANT, "created_at": NOW, "ended_at": later(20),
        "direction": "outbound", "mode": "live", "status": "completed", "error_code": None,
        "voice_engine": "alpha_25", "number_id": NUMBER_ID, "to_country": "GB", "from_country": "US",
        "country": "GB", "duration_seconds": 10, "first_audio_ms": 1000, "confidence": 0.9,
        "cost_voice": Decimal("0.0100"), "cost_extraction": Decimal("0.0020"), "cost_total": Decimal("0.0120"),
        "fields_filled": 1, "fields_required": 1, "fields_optional": 0, "optional_filled": 0,
        "template_id": None, "flow_id": None, "flow_version": None,
    }


def test_a_failed_call_keeps_its_error_and_no_outcome_figures(world):
    fact = world.facts()[world.calls["failed"].call_id]
    assert (fact["status"], fact["error_code"], fact["ended_at"]) == ("failed", "no_answer", later(30))
    assert (fact["confidence"], fact["duration_seconds"], fact["first_audio_ms"]) == (None, None, None)
    assert (fact["fields_filled"], fact["fields_required"], fact["optional_filled"]) == (0, 1, 0)
    assert (fact["country"], fact["cost_total"]) == ("FR", Decimal("0.0000"))


def test_optional_fields_template_and_flow_are_counted_and_named(world):
    fact = world.facts()[world.calls["simulated"].call_id]
    assert (fact["fields_filled"], fact["fields_required"], fact["fields_optional"], fact["optional_filled"]) == (2, 1, 2, 1)
    assert (fact["template_id"], fact["flow_id"], fact["flow_version"]) == ("tpl_" + "1" * 32, "flw_" + "2" * 32, 3)
    assert (fact["first_audio_ms"], fact["duration_seconds"], fact["confidence"]) == (None, 42, 0.35)
    assert fact["ended_at"] == later(4)  # the end, not the settling


def test_an_inbound_call_names_the_dialled_number_the_callers_country_and_the_routed_schema(world):
    fact = world.facts()[world.calls["voicemail"].call_id]
    assert (fact["direction"], fact["number_id"], fact["country"], fact["from_country"]) == ("inbound", NUMBER_ID, "FR", "FR")
    assert (fact["fields_required"], fact["fields_optional"]) == (1, 1)  # the voicemail schema's


def test_a_running_call_has_no_fact_and_a_released_number_is_not_named(world):
    facts = world.facts()
    assert world.calls["running"].call_id not in facts
    assert facts[world.calls["after_release"].call_id]["number_id"] is None
    assert len(facts) == 5


@pytest.mark.parametrize("rollup", ROLLUPS, ids=lambda rollup: rollup.name)
def test_each_daily_rollup_sums_the_facts(world, rollup):
    keys = ", ".join(f"COALESCE({key}, '')" for key in rollup.keys)
    with psycopg.connect(world.db.conninfo()) as conn:
        facts = conn.execute(f"SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, {keys}, count(*), "
                             "sum(cost_total), COALESCE(sum(confidence::numeric), 0) FROM call_facts_v1 "
                             f"GROUP BY 1, 2, {', '.join(str(3 + i) for i in range(len(rollup.keys)))} ORDER BY 1, 2, 3").fetchall()
        rolled = conn.execute(f"SELECT tenant_id, day, {', '.join(rollup.keys)}, calls, cost_total, confidence_sum "
                              f"FROM call_facts_v1_{rollup.name} ORDER BY 1, 2, 3").fetchall()
    assert len(facts) > 1 and sorted(facts) == sorted(rolled)


def test_replaying_every_event_changes_nothing(world):
    before = (world.facts(), world.table("call_facts_v1_open"), *(world.table(f"call_facts_v1_{r.name}") for r in ROLLUPS))
    factory = PostgresFactory(world.db.eventsourcing_env())
    try:
        projection = CallFactsProjection(CallFactsView(factory.datastore))
        for notification in world.calling.recorder.select_notifications(start=1, limit=10_000):
            projection.process_event(world.calling.mapper.to_domain_event(notification),
                                     Tracking("replay", notification.id))
    finally:
        factory.close()
    assert (world.facts(), world.table("call_facts_v1_open"), *(world.table(f"call_facts_v1_{r.name}") for r in ROLLUPS)) == before


def test_the_view_dropped_and_replayed_from_zero_gives_the_same_rows_and_reports(world):
    facts, reports = world.facts(), world.reports()
    assert any(row["calls"] for answer in reports for row in answer["current"]["data"] if "calls" in row)
    with psycopg.connect(world.db.conninfo(), autocommit=True) as conn:
        for table in ("call_facts_v1", "call_facts_v1_open", "call_facts_v1_numbers", "call_facts_v1_tracking",
                      *(f"call_facts_v1_{rollup.name}" for rollup in ROLLUPS)):
            conn.execute(f"DROP TABLE {table}")  # noqa: S608 - fixed names
    world.project()
    assert world.facts() == facts
    assert world.reports() == reports
