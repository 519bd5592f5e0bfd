"""The per-engine statistics read model on PostgreSQL (ARCHITECTURE.md §8: per-engine statistics feed
``/v1/admin/voice-model-stats``): projection from Call events, the window of UTC days, only terminal
calls counted, exact percentiles, replay. Call aggregates built with chosen measures are the oracle.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
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
from application.calling.app import Calling, CallingPorts
from domain.calls.call import Call
from domain.calls.call_rules import COMPLETED, FAILED, TERMINAL, new_call_id
from domain.calls.pricing import DEFAULT_PRICES
from application.follower import ProjectionWorker
from projections.voice_model_stats.projection import VoiceModelStatsProjection
from projections.voice_model_stats.queries import engine_stats
from projections.voice_model_stats.view import VoiceModelStatsView
from tests.postgres import drop_schema, fresh_schema
from tests.support.calls import queued_call
from tests.support.live_ports import unused_live_ports

TODAY = date(2026, 11, 2)
ENGINES = ("alpha_25", "alpha_31", "beta_think_fast")


def _call(n: int) -> Call:
    """Call number ``n``: engine, mode, day (0 to 9 days ago, one just before midnight UTC), fate and
    measures all vary with ``n``."""
    day = TODAY - timedelta(days=n % 10)
    created = datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(hours=23, minutes=59 - n % 7)
    call = queued_call(
        tenant_id="ten_" + ("a" if n % 2 else "c") * 32, call_id=new_call_id(), direction="outbound",
        mode="live" if n % 3 else "simulated", to="+442071838750", from_number="+15005550006",
        objective="Confirm", outcome_schema={"ok": {"type": "boolean"}}, consent_type="prior_express",
        consent_record_id=None, voice_id=None, voice_engine=ENGINES[n % 3] if n % 11 else ENGINES[(n + 1) % 3],
        language="en-US", metadata={}, variables={}, simulation=None, created_by="key_x", max_duration_seconds=600,
        at=created,
    )
    fate = n % 6
    if fate == 0:
        return call  # queued: not counted
    call.start(created + timedelta(seconds=1))
    if fate == 1:
        return call  # in progress: not counted
    if fate == 2:
        call.fail("cancelled", "cancelled", created + timedelta(seconds=2))  # failed before any audio
        return call
    duration = (n * 7) % 90 + 1
    call.answer("human", created + timedelta(seconds=2))
    call.end(duration, created + timedelta(seconds=2 + duration))
    voice = (Decimal(duration) * Decimal("0.0015")).quantize(Decimal("0.0001"))
    if fate == 3:
        call.fail("no_answer", "nobody", created + timedelta(seconds=100), cost_voice=voice)
        return call
    call.record_outcome({"ok": True}, ((n * 13) % 11) / 10, {"input_tokens": 10}, created + timedelta(seconds=101))
    if fate == 4:
        call.fail("timeout", "too long", created + timedelta(seconds=102), cost_voice=voice)  # an outcome, then failed
        return call
    call.complete(voice, Decimal("0.0007") * (n % 4), created + timedelta(seconds=102))
    return call


def _percentile(values: list[float], fraction: float) -> float | None:
    """percentile_cont: linear interpolation between the closest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _oracle(calls: list[Call], since: date, until: date, mode: str | None = None) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for engine in {c.voice_engine for c in calls} | set(ENGINES):
        rows = [c for c in calls if c.voice_engine == engine and c.status in TERMINAL
                and since <= c.created_at.date() <= until and (mode is None or c.mode == mode)]
        completed = [c for c in rows if c.status == COMPLETED]
        durations = [float(c.duration_seconds) for c in rows if c.duration_seconds is not None]
        cost = sum((Decimal(c.cost_total) for c in rows), Decimal(0))
        confidences = [c.confidence for c in completed if c.confidence is not None]
        found[engine] = {
            "calls": len(rows), "completed": len(completed), "failed": sum(c.status == FAILED for c in rows),
            "completion_rate": round(len(completed) / len(rows), 4) if rows else None,
            "mean_confidence": round(sum(confidences) / len(confidences), 4) if confidences else None,
            "p50": _percentile(durations, 0.5), "p95": _percentile(durations, 0.95),
            "cost_total": format(cost.quantize(Decimal("0.0001")), "f"),
            "cost_per_call": format((cost / len(rows)).quantize(Decimal("0.0001")), "f") if rows else None,
        }
    return found


@dataclass
class Scenario:
    db: DatabaseConfig
    calling: Calling
    projection: VoiceModelStatsProjection
    worker: ProjectionWorker
    calls: list[Call]
    loop: asyncio.Runner
    pool: AsyncConnectionPool

    def stats(self, since: date, until: date = TODAY, mode: str | None = None) -> dict[str, dict[str, Any]]:
        rows = self.loop.run(engine_stats(self.pool, since=since, until=until, mode=mode))
        return {row["voice_engine"]: row for row in rows}

    def table(self) -> list[tuple]:
        with psycopg.connect(self.db.conninfo()) as conn:
            return conn.execute("SELECT * FROM voice_model_stats_v1 ORDER BY call_id").fetchall()


@pytest.fixture(scope="module")
def scenario(pg_server: DatabaseConfig) -> Iterator[Scenario]:
    db = fresh_schema(pg_server)
    env = db.eventsourcing_env(pool_size=2)
    ports = CallingPorts(clock=lambda: datetime(2026, 11, 2, 12, tzinfo=timezone.utc), brain=ScriptedBrain(),
                         extractor=ScriptedExtractor(), callee=SimulatedCallee,
                         prices=DEFAULT_PRICES)
    calling = Calling(env, ports=ports, live=unused_live_ports())
    factory = PostgresFactory(env)
    view = VoiceModelStatsView(factory.datastore)
    view.create_table()
    projection = VoiceModelStatsProjection(view)
    worker = ProjectionWorker(calling, projection.process_event, view, name=projection.name,
                              handles=projection.handles)
    loop = asyncio.Runner()
    pool = AsyncConnectionPool(db.conninfo(), min_size=1, max_size=2, open=False, kwargs={"autocommit": True})
    loop.run(pool.open(wait=True, timeout=30))
    try:
        calls = [_call(n) for n in range(240)]
        calling.commit(*calls)
        worker.catch_up()
        yield Scenario(db, calling, projection, worker, calls, loop, pool)
    finally:
        loop.run(pool.close())
        loop.close()
        factory.close()
        calling.close()
        drop_schema(db)


def _assert_matches(found: dict[str, dict[str, Any]], expected: dict[str, dict[str, Any]]) -> None:
    assert set(found) == set(expected)
    for engine, want in expected.items():
        row = found[engine]
        for name in ("calls", "completed", "failed", "completion_rate", "mean_confidence", "cost_total",
                     "cost_per_call"):
            assert row[name] == want[name], (engine, name, row, want)
        for name, key in (("p50_duration_seconds", "p50"), ("p95_duration_seconds", "p95")):
            if want[key] is None:
                assert row[name] is None
            else:
                assert row[name] == pytest.approx(want[key], abs=1e-4), (engine, name)


@pytest.mark.parametrize("days", [1, 3, 7, 30])
def test_stats_of_a_window_of_days_match_the_calls(scenario, days):
    since = TODAY - timedelta(days=days - 1)
    _assert_matches(scenario.stats(since), _oracle(scenario.calls, since, TODAY))


@pytest.mark.parametrize("mode", ["live", "simulated"])
def test_stats_of_one_mode_match_the_calls(scenario, mode):
    since = TODAY - timedelta(days=29)
    _assert_matches(scenario.stats(since, mode=mode), _oracle(scenario.calls, since, TODAY, mode))


def test_only_terminal_calls_count(scenario):
    stats = scenario.stats(TODAY - timedelta(days=29))
    assert sum(row["calls"] for row in stats.values()) == sum(c.status in TERMINAL for c in scenario.calls)
    assert len(scenario.table()) == len(scenario.calls)  # queued and running calls have rows all the same


def test_a_call_belongs_to_the_utc_day_it_was_created(scenario):
    yesterday = TODAY - timedelta(days=1)
    only_yesterday = scenario.stats(yesterday, until=yesterday)
    expected = _oracle(scenario.calls, yesterday, yesterday)
    assert {e: r["calls"] for e, r in only_yesterday.items()} == {e: r["calls"] for e, r in expected.items()}
    assert sum(r["calls"] for r in only_yesterday.values()) > 0


def test_an_engine_without_calls_in_the_window_shows_zeros(scenario):
    stats = scenario.stats(TODAY + timedelta(days=1), until=TODAY + timedelta(days=2))
    assert list(stats) == list(ENGINES)
    assert all(r["calls"] == 0 and r["completion_rate"] is None and r["p50_duration_seconds"] is None
               and r["cost_per_call"] is None and r["cost_total"] == "0.0000" for r in stats.values())


def test_replaying_every_event_changes_nothing(scenario):
    before = scenario.table()
    for notification in scenario.calling.recorder.select_notifications(start=1, limit=100_000):
        event = scenario.calling.mapper.to_domain_event(notification)
        scenario.projection.process_event(event, Tracking("replay", notification.id))
    assert scenario.table() == before


def test_tracking_reaches_the_head_through_events_that_change_no_row(scenario):
    call = next(c for c in scenario.calls if c.status == "queued")
    call.start(call.created_at + timedelta(seconds=1))  # Started: not followed
    scenario.calling.commit(call)
    scenario.worker.catch_up()
    assert scenario.worker.position == scenario.calling.recorder.max_notification_id()
