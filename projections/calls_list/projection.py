"""Keeps ``calls_list_v1`` in step with Call events; updates are guarded by event version.

``Answered`` and ``TurnRecorded`` change no listed field, so, like unknown events, they only
advance tracking.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking
from psycopg.types.json import Jsonb

from domain import ids
from domain.calls.call import Call
from domain.calls.call_rules import COMPLETED, FAILED, IN_PROGRESS, QUEUED
from projections.calls_list.view import CallsListView
from projections.view import pg_text

LISTED = (Call.Queued, Call.Started, Call.DialRequested, Call.InboundAnswered, Call.RecordingAttached, Call.Ended, Call.OutcomeExtracted, Call.Completed, Call.Failed)


class CallsListProjection:
    name = "calls_list_v1"
    handles = LISTED

    def __init__(self, view: CallsListView) -> None:
        self.view = view
        self._queued = view.sql(
            "INSERT INTO {schema}.{table} (call_id, tenant_id, status, mode, direction, voice_engine, to_number, "
            "from_number, objective, has_outcome, created_at, metadata, version) VALUES (%(call_id)s, "
            "%(tenant_id)s, %(status)s, %(mode)s, %(direction)s, %(voice_engine)s, %(to)s, %(from)s, "
            "%(objective)s, false, %(at)s, %(metadata)s, %(version)s) ON CONFLICT (call_id) DO NOTHING"
        )
        guard = " WHERE call_id = %(call_id)s AND version < %(version)s"
        self._started = view.sql("UPDATE {schema}.{table} SET status = %(status)s, version = %(version)s" + guard)
        self._recording = view.sql("UPDATE {schema}.{table} SET recording_url = %(url)s, version = %(version)s" + guard)
        self._ended = view.sql(
            "UPDATE {schema}.{table} SET duration_seconds = %(duration_seconds)s, ended_at = %(at)s, "
            "version = %(version)s" + guard
        )
        self._outcome = view.sql(
            "UPDATE {schema}.{table} SET confidence = %(confidence)s, has_outcome = true, outcome = %(outcome)s, "
            "version = %(version)s" + guard
        )
        # The aggregate keeps an earlier end time (from Ended) and drops the outcome on failure.
        self._settled = view.sql(
            "UPDATE {schema}.{table} SET status = %(status)s, cost_total = %(cost_total)s, "
            "error_code = %(error_code)s, has_outcome = has_outcome AND %(keeps_outcome)s, "
            "outcome = CASE WHEN %(keeps_outcome)s THEN outcome END, "
            "ended_at = COALESCE(ended_at, %(at)s), version = %(version)s" + guard
        )

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if not isinstance(event, LISTED):  # Answered, TurnRecorded, other aggregates' events
            self.view.insert_tracking(tracking)
            return
        common = {"call_id": ids.to_public(ids.CALL, event.originator_id), "version": event.originator_version,
                  "at": event.at}
        if isinstance(event, Call.Queued):
            statement = self._queued
            params: dict[str, Any] = {
                **common, "tenant_id": event.tenant_id, "status": QUEUED, "mode": event.mode,
                "direction": event.direction, "voice_engine": event.voice_engine, "to": event.to,
                "from": event.from_number, "objective": pg_text(event.objective),
                "metadata": Jsonb(pg_text(dict(event.metadata or {}))),
            }
        elif isinstance(event, (Call.Started, Call.DialRequested, Call.InboundAnswered)):
            statement, params = self._started, {**common, "status": IN_PROGRESS}
        elif isinstance(event, Call.RecordingAttached):
            statement, params = self._recording, {**common, "url": pg_text(event.url)}
        elif isinstance(event, Call.Ended):
            statement, params = self._ended, {**common, "duration_seconds": event.duration_seconds}
        elif isinstance(event, Call.OutcomeExtracted):
            statement, params = self._outcome, {**common, "confidence": event.confidence,
                                                "outcome": Jsonb(pg_text(dict(event.outcome)))}
        elif isinstance(event, Call.Completed):
            statement, params = self._settled, {**common, "status": COMPLETED, "cost_total": event.cost_total,
                                                 "error_code": None, "keeps_outcome": True}
        else:
            statement, params = self._settled, {**common, "status": FAILED, "cost_total": event.cost_total,
                                                 "error_code": pg_text(event.error_code), "keeps_outcome": False}
        self.view.write([(statement, params)], tracking)

