"""Keeps ``call_facts_v1`` (view.py) from Call and NumberClaim events.

A call's facts gather in ``call_facts_v1_open`` while it runs (each update guarded by event
version) and move into ``call_facts_v1`` with its terminal event, in one transaction: a replay
from position 0 writes the same rows, and a fact, once written, never changes.

Time to first agent audio is known for calls with a voice session: from the session's opening to
the agent's first turn after it (the agent's first words, sent as audio as they are recorded).
"""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking

from domain import ids
from domain.calls.call import Call
from domain.calls.call_rules import AGENT, COMPLETED
from domain.calls.dialing_rules import country_of
from domain.calls.outcome_schema import OutcomeSchema
from domain.numbers.number import NumberClaim
from projections.call_facts.view import CallFactsView
from projections.view import pg_text

HANDLES = (
    Call.Queued, Call.InboundRouted, Call.VoiceSessionOpened, Call.TurnRecorded, Call.Ended, Call.Restarted,
    Call.OutcomeExtracted, Call.Completed, Call.Failed, NumberClaim.Claimed, NumberClaim.Reclaimed,
    NumberClaim.Released,
)
_GUARD = " WHERE call_id = %(call_id)s AND version < %(version)s"


def schema_fields(schema: Any) -> tuple[list[str], list[str]]:
    """The required and the optional field names of an outcome schema (stored in either form)."""
    fields = OutcomeSchema.of(schema).fields
    return [f.name for f in fields if not f.optional], [f.name for f in fields if f.optional]


class CallFactsProjection:
    name = "call_facts_v1"
    handles = HANDLES

    def __init__(self, view: CallFactsView) -> None:
        self.view = view
        sql = view.sql
        # Not again for a call already in the facts (a replayed Queued after its end).
        self._queued = sql(
            "INSERT INTO {schema}.{open} (call_id, tenant_id, created_at, direction, mode, voice_engine, number_id, "
            "to_country, from_country, required_fields, optional_fields, template_id, flow_id, flow_version, version) "
            "SELECT %(call_id)s, %(tenant_id)s, %(at)s, %(direction)s, %(mode)s, %(voice_engine)s, "
            "(SELECT number_id FROM {schema}.{numbers} WHERE e164 = %(own)s AND tenant_id = %(tenant_id)s "
            "AND number_id IS NOT NULL LIMIT 1), "
            "%(to_country)s, %(from_country)s, %(required)s, %(optional)s, %(template_id)s, %(flow_id)s, "
            "%(flow_version)s, %(version)s "
            "WHERE NOT EXISTS (SELECT FROM {schema}.{table} WHERE call_id = %(call_id)s) "
            "ON CONFLICT (call_id) DO NOTHING"
        )
        self._schema = sql("UPDATE {schema}.{open} SET required_fields = %(required)s, "
                           "optional_fields = %(optional)s, version = %(version)s" + _GUARD)
        self._session = sql("UPDATE {schema}.{open} SET session_opened_at = COALESCE(session_opened_at, %(at)s), "
                            "version = %(version)s" + _GUARD)
        self._agent_turn = sql("UPDATE {schema}.{open} SET first_agent_at = %(at)s, version = %(version)s"
                               + _GUARD + " AND first_agent_at IS NULL AND session_opened_at IS NOT NULL")
        self._ended = sql("UPDATE {schema}.{open} SET duration_seconds = %(duration)s, ended_at = %(at)s, "
                          "version = %(version)s" + _GUARD)
        self._restarted = sql("UPDATE {schema}.{open} SET duration_seconds = NULL, ended_at = NULL, "
                              "confidence = NULL, filled_fields = '{{}}', first_agent_at = NULL, "
                              "version = %(version)s" + _GUARD)
        self._outcome = sql("UPDATE {schema}.{open} SET confidence = %(confidence)s, filled_fields = %(filled)s, "
                            "version = %(version)s" + _GUARD)
        self._settled = sql(
            "INSERT INTO {schema}.{table} (call_id, tenant_id, created_at, ended_at, direction, mode, status, "
            "error_code, voice_engine, number_id, to_country, from_country, country, duration_seconds, "
            "first_audio_ms, confidence, cost_voice, cost_extraction, cost_total, fields_filled, fields_required, "
            "fields_optional, optional_filled, template_id, flow_id, flow_version) "
            "SELECT call_id, tenant_id, created_at, COALESCE(ended_at, %(at)s), direction, mode, %(status)s, "
            "%(error_code)s, voice_engine, number_id, to_country, from_country, "
            "CASE WHEN direction = 'inbound' THEN from_country ELSE to_country END, duration_seconds, "
            "CASE WHEN first_agent_at >= session_opened_at "
            "THEN round(extract(epoch FROM first_agent_at - session_opened_at) * 1000)::integer END, "
            "CASE WHEN %(completed)s THEN confidence END, %(cost_voice)s, %(cost_extraction)s, %(cost_total)s, "
            "CASE WHEN %(completed)s THEN cardinality(filled_fields) ELSE 0 END, cardinality(required_fields), "
            "cardinality(optional_fields), CASE WHEN %(completed)s THEN cardinality(ARRAY("
            "SELECT unnest(filled_fields) INTERSECT SELECT unnest(optional_fields))) ELSE 0 END, "
            "template_id, flow_id, flow_version FROM {schema}.{open} WHERE call_id = %(call_id)s "
            "ON CONFLICT (call_id) DO NOTHING"
        )
        self._closed = sql("DELETE FROM {schema}.{open} WHERE call_id = %(call_id)s")
        # A claim is named by its E.164 (NumberClaim.create_id), which only its first event carries.
        self._claimed = sql("INSERT INTO {schema}.{numbers} (claim_id, e164, tenant_id, number_id) "
                            "VALUES (%(claim_id)s, %(e164)s, %(tenant_id)s, %(number_id)s) "
                            "ON CONFLICT (claim_id) DO NOTHING")
        self._reclaimed = sql("UPDATE {schema}.{numbers} SET tenant_id = %(tenant_id)s, number_id = %(number_id)s "
                              "WHERE claim_id = %(claim_id)s")
        self._released = sql("UPDATE {schema}.{numbers} SET number_id = NULL WHERE claim_id = %(claim_id)s "
                             "AND number_id = %(number_id)s")

    def process_event(self, event: Any, tracking: Tracking) -> None:
        statements = self._statements(event)
        if statements:
            self.view.write(statements, tracking)
        else:
            self.view.insert_tracking(tracking)

    def _statements(self, event: Any) -> list[tuple[Any, dict[str, Any]]]:
        if isinstance(event, NumberClaim.Claimed):
            return [(self._claimed, {"claim_id": event.originator_id, "e164": event.e164,
                                     "tenant_id": event.tenant_id, "number_id": event.number_id})]
        if isinstance(event, NumberClaim.Reclaimed):
            return [(self._reclaimed, {"claim_id": event.originator_id, "tenant_id": event.tenant_id,
                                       "number_id": event.number_id})]
        if isinstance(event, NumberClaim.Released):
            return [(self._released, {"claim_id": event.originator_id, "number_id": event.number_id})]
        common = {"call_id": ids.to_public(ids.CALL, event.originator_id), "version": event.originator_version,
                  "at": event.at}
        if isinstance(event, Call.Queued):
            required, optional = schema_fields(event.outcome_schema)
            flow = event.flow or {}
            own = event.from_number if event.direction == "outbound" else event.to
            return [(self._queued, {
                **common, "tenant_id": event.tenant_id, "direction": event.direction, "mode": event.mode,
                "voice_engine": event.voice_engine, "own": own, "to_country": country_of(event.to),
                "from_country": country_of(event.from_number), "required": required, "optional": optional,
                "template_id": pg_text(event.template_id), "flow_id": pg_text(flow.get("flow_id")),
                "flow_version": flow.get("version"),
            })]
        if isinstance(event, Call.InboundRouted):
            if event.outcome_schema is None:
                return []
            required, optional = schema_fields(event.outcome_schema)
            return [(self._schema, {**common, "required": required, "optional": optional})]
        if isinstance(event, Call.VoiceSessionOpened):
            return [(self._session, common)]
        if isinstance(event, Call.TurnRecorded):
            return [(self._agent_turn, common)] if event.speaker == AGENT else []
        if isinstance(event, Call.Ended):
            return [(self._ended, {**common, "duration": event.duration_seconds})]
        if isinstance(event, Call.Restarted):
            return [(self._restarted, common)]
        if isinstance(event, Call.OutcomeExtracted):
            filled = sorted(pg_text(name) for name, value in dict(event.outcome).items() if value is not None)
            return [(self._outcome, {**common, "confidence": event.confidence, "filled": filled})]
        if not isinstance(event, (Call.Completed, Call.Failed)):
            return []  # what the facts do not keep (the worker reads only HANDLES; a replay gives all)
        completed = isinstance(event, Call.Completed)
        settled = {**common, "status": COMPLETED if completed else "failed", "completed": completed,
                   "error_code": None if completed else pg_text(event.error_code), "cost_voice": event.cost_voice,
                   "cost_extraction": event.cost_extraction, "cost_total": event.cost_total}
        return [(self._settled, settled), (self._closed, common)]

