"""Call aggregate: a call's life from ``Queued`` to ``Completed`` or ``Failed`` (ARCHITECTURE.md §7).

Statuses shown: ``queued`` → ``in_progress`` → ``completed`` | ``failed``; a terminal call never
moves again. Every event of the call is defined here; its commands are in ``live_commands.py``,
``inbound_commands.py``, ``queueing.py`` (a new call, stored at its own instant),
``simulated_run.py``, ``settle_commands.py`` and ``sms_commands.py``; the rules in ``call_rules.py``."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.calls.outcome_schema import OutcomeSchema
from domain.calls.call_rules import CALLEE, COMPLETED, FAILED, IN_PROGRESS, NO_COST, QUEUED, TERMINAL, CallStateError
from domain.calls.inbound_commands import InboundCommands
from domain.calls.live_commands import LiveCallCommands
from domain.calls.settle_commands import SettleCommands
from domain.calls.sms_commands import FAILED_SMS, SENDING, SENT, SmsCommands
from domain.calls.simulated_run import SimulatedRunCommands
from domain.calls.queueing import QueueCommands


class Call(QueueCommands, LiveCallCommands, InboundCommands, SimulatedRunCommands, SettleCommands, SmsCommands, TenantAggregate):
    @staticmethod
    def create_id(call_id: str) -> uuid.UUID:
        return ids.from_public(ids.CALL, call_id)

    @event("Queued")
    def __init__(
        self,
        tenant_id: str,
        call_id: str,
        direction: str,
        mode: str,
        to: str,
        from_number: str,
        objective: str,
        outcome_schema: OutcomeSchema | dict[str, Any],
        consent_type: str,
        consent_record_id: str | None,
        voice_id: str | None,
        voice_engine: str,
        language: str,
        metadata: dict[str, Any],
        variables: dict[str, str],
        simulation: dict[str, Any] | None,
        created_by: str,
        max_duration_seconds: int,
        at: datetime,
        template_id: str | None = None,  # stored since templates exist; older events read None
        flow: dict[str, Any] | None = None,  # {flow_id, version, graph, system_prompt, tools}: what it runs
    ) -> None:
        self.tenant_id = tenant_id
        self.call_id = call_id
        self.direction = direction
        self.mode = mode
        self.to = to
        self.from_number = from_number
        self.objective = objective
        # Events stored before the value had its transcoding hold the canonical definition.
        self.outcome_schema = OutcomeSchema.of(outcome_schema)
        self.consent_type = consent_type
        self.consent_record_id = consent_record_id
        self.voice_id = voice_id
        self.voice_engine = voice_engine
        self.language = language
        self.metadata = metadata
        self.variables = variables
        self.simulation = simulation
        self.created_by = created_by
        self.template_id, self.flow = template_id, flow
        self.keypad_entries: dict[str, str] = {}  # a flow's keypad fields: the digits, never in the transcript
        self.max_duration_seconds = max_duration_seconds
        self.created_at = at
        self.status = QUEUED
        self.started_at: datetime | None = None
        self.lease_until: datetime | None = None  # a simulated call's runner holds it until then
        self.ended_at: datetime | None = None
        self.answered_by: str | None = None
        self.turns: list[dict[str, str]] = []
        self.outcome: dict[str, Any] | None = None
        self.partial_outcome: dict[str, Any] | None = None  # what a failed extraction did collect
        self.confidence: float | None = None
        self.usage: dict[str, int] = {}
        self.duration_seconds: int | None = None
        self.cost_voice = NO_COST
        self.cost_extraction = NO_COST
        self.cost_total = NO_COST
        self.error_code: str | None = None
        self.error_message: str | None = None
        self.recording_url: str | None = None
        # Live calls (ARCHITECTURE.md §7-§8): what the carrier and the voice session reported.
        self.dial_requested_at: datetime | None = None
        self.amd_requested = False
        self.carrier_sid: str | None = None
        self.carrier_status: str | None = None
        self.carrier_duration_seconds: int | None = None
        self.session_transport: str | None = None
        self.session_nonce: str | None = None
        self.session_opened_at: datetime | None = None
        self.session_closed_at: datetime | None = None
        self.transfer: dict[str, Any] | None = None  # {destinations, brief, legs, status}
        self.recording_sid: str | None = None
        self.sms: list[dict[str, Any]] = []  # post-call messages: {template_id, to, body, status, sent_at, ...}
        # Inbound (inbound_commands.py): the number's routing, persona and voicemail; the agent's tokens.
        self.routing: dict[str, Any] | None = None  # {action, reason, destination}
        self.persona: str | None = None
        self.record_inbound = False
        self.voicemail: dict[str, Any] | None = None  # {recording_url, recording_sid, duration_seconds, text}
        self.agent_usage: dict[str, int] = {}

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def transcript(self) -> str:
        return "\n".join(f"{turn['speaker']}: {turn['text']}" for turn in self.turns)

    def _require(self, *statuses: str) -> None:
        if self.status not in statuses:
            raise CallStateError(f"the call is {self.status}")

    @event("Started")
    def _started(self, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at

    @event("Leased")
    def _leased(self, until: datetime, at: datetime) -> None:
        self.lease_until = until

    @event("Restarted")
    def _restarted(self, lease_until: datetime, at: datetime) -> None:
        self.started_at, self.lease_until, self.answered_by, self.turns = at, lease_until, None, []
        self.duration_seconds = self.ended_at = self.outcome = self.partial_outcome = self.confidence = None
        self.usage, self.agent_usage = {}, {}

    @event("DialRequested")
    def _dial_requested(self, amd: bool, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at
        self.dial_requested_at = at
        self.amd_requested = amd

    @event("Dialed")
    def _dialed(self, carrier_sid: str, at: datetime) -> None:
        self.carrier_sid = carrier_sid

    @event("InboundAnswered")
    def _inbound_answered(self, carrier_sid: str, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at
        self.carrier_sid = carrier_sid

    @event("CarrierProgressed")
    def _carrier_progressed(self, carrier_status: str, at: datetime) -> None:
        self.carrier_status = carrier_status

    @event("CarrierEnded")
    def _carrier_ended(self, carrier_status: str, duration_seconds: int, at: datetime) -> None:
        self.carrier_status = carrier_status
        self.carrier_duration_seconds = duration_seconds

    @event("VoiceSessionOpened")
    def _session_opened(self, transport: str, nonce: str, at: datetime, resumes: bool = False) -> None:
        self.session_transport = transport
        self.session_nonce = nonce
        self.session_closed_at = None
        if resumes:  # the agent is back after a flow's transfer nobody answered: the first opening stays
            assert self.transfer is not None
            self.transfer = {**self.transfer, "resumed": True}
        else:
            self.session_opened_at = at

    @event("VoiceSessionClosed")
    def _session_closed(self, reason: str, at: datetime) -> None:
        self.session_closed_at = at

    @event("TransferRequested")
    def _transfer_requested(self, destinations: list[dict[str, str]], max_attempts: int, brief: str,
                            at: datetime, step: str | None = None, answers: dict[str, Any] | None = None) -> None:
        flow = {} if step is None else {"step": step, "answers": dict(answers or {})}  # a flow's step, its answers
        self.transfer = {"destinations": destinations, "max_attempts": max_attempts, "brief": brief, "legs": [],
                         "status": "requested", **flow}

    @event("TransferLegEnded")
    def _transfer_leg_ended(self, index: int, dial_status: str, at: datetime) -> None:
        assert self.transfer is not None
        legs = [*self.transfer["legs"], {"index": index, "dial_status": dial_status}]
        status = "requested"
        if dial_status == "completed":
            status = "completed"
        elif len(legs) >= min(self.transfer["max_attempts"], len(self.transfer["destinations"])):
            status = "failed"
        self.transfer = {**self.transfer, "legs": legs, "status": status}

    @event("RecordingAttached")
    def _recording_attached(self, url: str, recording_sid: str, at: datetime) -> None:
        self.recording_url = url
        self.recording_sid = recording_sid

    @event("SmsClaimed")
    def _sms_claimed(self, template_id: str, to: str, body: str, at: datetime) -> None:
        self.sms = [*self.sms, {"template_id": template_id, "to": to, "body": body, "status": SENDING, "sent_at": None}]

    @event("SmsSent")
    def _sms_sent(self, template_id: str, carrier_sid: str, at: datetime) -> None:
        self.sms = [{**m, "status": SENT, "sent_at": at, "carrier_sid": carrier_sid} if m["template_id"] == template_id
                    else m for m in self.sms]

    @event("SmsFailed")
    def _sms_failed(self, template_id: str, error: str, at: datetime) -> None:
        self.sms = [{**m, "status": FAILED_SMS, "error": error} if m["template_id"] == template_id else m
                    for m in self.sms]

    @event("InboundRouted")
    def _inbound_routed(self, action: str, reason: str, destination: str | None, persona: str | None, record: bool,
                        objective: str | None, outcome_schema: OutcomeSchema | dict[str, Any] | None,
                        at: datetime) -> None:
        self.routing = {"action": action, "reason": reason, "destination": destination}
        self.persona, self.record_inbound = persona, record
        if objective is not None and outcome_schema is not None:
            self.objective, self.outcome_schema = objective, OutcomeSchema.of(outcome_schema)

    @event("VoicemailRecorded")
    def _voicemail_recorded(self, url: str, recording_sid: str, duration_seconds: int, at: datetime) -> None:
        self.voicemail = {**(self.voicemail or {}), "recording_url": url, "recording_sid": recording_sid,
                          "duration_seconds": duration_seconds}

    @event("VoicemailTranscribed")
    def _voicemail_transcribed(self, text: str, at: datetime) -> None:
        self.voicemail = {**(self.voicemail or {}), "text": text}
        self.turns = [*self.turns, {"speaker": CALLEE, "text": text}] if text else self.turns

    @event("AgentUsageRecorded")
    def _agent_usage_recorded(self, usage: dict[str, int], at: datetime) -> None:
        self.agent_usage = {name: self.agent_usage.get(name, 0) + usage.get(name, 0)
                            for name in {*self.agent_usage, *usage}}

    @event("Answered")
    def _answered(self, answered_by: str, at: datetime) -> None:
        self.answered_by = answered_by

    def record_turn(self, speaker: str, text: str, now: datetime) -> None:
        self._require(IN_PROGRESS)
        self._turn_recorded(speaker=speaker, text=text, at=now)

    @event("TurnRecorded")
    def _turn_recorded(self, speaker: str, text: str, at: datetime) -> None:
        self.turns = [*self.turns, {"speaker": speaker, "text": text}]

    def end(self, duration_seconds: int, now: datetime) -> None:
        self._require(IN_PROGRESS)  # a call never lasts past its maximum: the carrier or the runner cuts it there
        self._ended(duration_seconds=min(max(0, int(duration_seconds)), self.max_duration_seconds), at=now)

    @event("Ended")
    def _ended(self, duration_seconds: int, at: datetime) -> None:
        self.duration_seconds = duration_seconds
        self.ended_at = at

    @event("OutcomeExtracted")
    def _outcome_extracted(self, outcome: dict[str, Any], confidence: float, usage: dict[str, int], at: datetime) -> None:
        self.outcome = outcome
        self.confidence = confidence
        self.usage = usage

    @event("KeypadCollected")
    def _keypad_collected(self, field: str, digits: str, at: datetime) -> None:
        self.keypad_entries = {**self.keypad_entries, field: digits}

    @event("PartialOutcomeRecorded")
    def _partial_outcome_recorded(self, partial_outcome: dict[str, Any], at: datetime) -> None:
        self.partial_outcome = partial_outcome

    @event("Completed")
    def _completed(self, cost_voice: Decimal, cost_extraction: Decimal, cost_total: Decimal, at: datetime) -> None:
        self.status = COMPLETED
        self.cost_voice = Decimal(cost_voice)
        self.cost_extraction = Decimal(cost_extraction)
        self.cost_total = Decimal(cost_total)
        self.ended_at = self.ended_at or at

    @event("Failed")
    def _failed(self, error_code: str, message: str, cost_voice: Decimal, cost_extraction: Decimal,
                cost_total: Decimal, at: datetime) -> None:
        self.status = FAILED
        self.error_code = error_code
        self.error_message = message
        self.outcome = None
        self.cost_voice = Decimal(cost_voice)
        self.cost_extraction = Decimal(cost_extraction)
        self.cost_total = Decimal(cost_total)
        self.ended_at = self.ended_at or at
