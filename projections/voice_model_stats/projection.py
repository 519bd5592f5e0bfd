"""Keeps ``voice_model_stats_v1`` in step with Call events; updates are guarded by event version.

Rows are written from ``Queued`` (engine, day, mode) and completed by ``Ended`` (duration),
``OutcomeExtracted`` (confidence) and the terminal ``Completed`` / ``Failed`` (status, cost).
"""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking

from domain import ids
from domain.calls.call import Call
from domain.calls.call_rules import COMPLETED, FAILED, QUEUED
from projections.voice_model_stats.view import VoiceModelStatsView

FOLLOWED = (Call.Queued, Call.Ended, Call.OutcomeExtracted, Call.Completed, Call.Failed)


class VoiceModelStatsProjection:
    name = "voice_model_stats_v1"
    handles = FOLLOWED

    def __init__(self, view: VoiceModelStatsView) -> None:
        self.view = view
        self._queued = view.sql(
            "INSERT INTO {schema}.{table} (call_id, tenant_id, voice_engine, mode, direction, day, status, version) "
            "VALUES (%(call_id)s, %(tenant_id)s, %(voice_engine)s, %(mode)s, %(direction)s, "
            "(%(at)s::timestamptz AT TIME ZONE 'UTC')::date, %(status)s, %(version)s) ON CONFLICT (call_id) DO NOTHING"
        )
        guard = " WHERE call_id = %(call_id)s AND version < %(version)s"
        self._ended = view.sql(
            "UPDATE {schema}.{table} SET duration_seconds = %(duration_seconds)s, version = %(version)s" + guard
        )
        self._outcome = view.sql(
            "UPDATE {schema}.{table} SET confidence = %(confidence)s, version = %(version)s" + guard
        )
        self._settled = view.sql(
            "UPDATE {schema}.{table} SET status = %(status)s, cost_total = %(cost_total)s, version = %(version)s"
            + guard
        )

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if not isinstance(event, FOLLOWED):
            self.view.insert_tracking(tracking)
            return
        common = {"call_id": ids.to_public(ids.CALL, event.originator_id), "version": event.originator_version}
        if isinstance(event, Call.Queued):
            statement = self._queued
            params: dict[str, Any] = {
                **common, "tenant_id": event.tenant_id, "voice_engine": event.voice_engine, "mode": event.mode,
                "direction": event.direction, "at": event.at, "status": QUEUED,
            }
        elif isinstance(event, Call.Ended):
            statement, params = self._ended, {**common, "duration_seconds": event.duration_seconds}
        elif isinstance(event, Call.OutcomeExtracted):
            statement, params = self._outcome, {**common, "confidence": event.confidence}
        elif isinstance(event, Call.Completed):
            statement, params = self._settled, {**common, "status": COMPLETED, "cost_total": event.cost_total}
        else:
            statement, params = self._settled, {**common, "status": FAILED, "cost_total": event.cost_total}
        self.view.write([(statement, params)], tracking)
