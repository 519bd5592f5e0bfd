"""Call aggregate: a call's life from ``Queued`` to ``Completed`` or ``Failed`` (ARCHITECTURE.md §7).

Statuses shown: ``queued`` → ``in_progress`` → ``completed`` | ``failed``. A terminal call never
moves again; late or duplicate facts about it are refused by the aggregate.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.calls import dialing_rules
from domain.calls.outcome_schema import OutcomeSchema
from domain.calls.suppression import SuppressionIndex
from domain.errors import DomainError, NumberSuppressedError

QUEUED = "queued"
IN_PROGRESS = "in_progress"
COMPLETED = "completed"
FAILED = "failed"
TERMINAL = (COMPLETED, FAILED)

AGENT = "agent"
CALLEE = "callee"

OUTBOUND = "outbound"

# The answering-machine rule of SPEC.md: these abandon the call with no audio and no message.
MACHINE_ANSWERS = ("machine_start", "machine_end_beep", "machine_end_silence", "machine_end_other", "fax")



def abandon_code(answered_by: str) -> str:
    """The ``error_code`` of a call the answering-machine rule abandons."""
    return "fax_detected" if answered_by == "fax" else "machine_detected"


# Final carrier statuses other than ``completed``: the error code and message each ends the call with.
CARRIER_FAILURES = {
    "busy": ("busy", "the carrier reported busy"),
    "no_answer": ("no_answer", "the carrier reported no-answer"),
    "failed": ("carrier_failed", "the carrier reported failed"),
    "canceled": ("carrier_canceled", "the carrier reported canceled"),
}


# Amounts carry the price table's four decimal places even when nothing was spent.
NO_COST = Decimal("0.0000")


class CallStateError(DomainError):
    code = "call_state"


def new_call_id() -> str:
    return ids.to_public(ids.CALL, uuid.uuid4())


class Call(TenantAggregate):
    @staticmethod
    def create_id(call_id: str) -> uuid.UUID:
        return ids.from_public(ids.CALL, call_id)

    @classmethod
    def queue(
        cls,
        *,
        tenant_id: str,
        mode: str,
        to: str,
        objective: str,
        outcome_schema: OutcomeSchema | Mapping[str, Any],
        consent_type: str | None,
        from_number: str | Callable[[], str],
        voice_engine: str | Callable[[str], str],
        created_by: str,
        max_duration_seconds: int,
        now: datetime,
        suppressions: SuppressionIndex | None = None,
        call_id: str | None = None,
        consent_record_id: str | None = None,
        voice_id: str | None = None,
        language: str = "en-US",
        metadata: dict[str, Any] | None = None,
        variables: dict[str, str] | None = None,
        simulation: dict[str, Any] | None = None,
    ) -> Call:
        """A queued outbound call, or the first rule it breaks, in the order of ARCHITECTURE.md §7:
        outcome schema, E.164, consent, suppression, call hours (a ``RequestRuleError`` whose
        ``loc`` names the field). The caller number's and the carrier's rules need the carrier
        account: a callable ``from_number`` runs them after these, and a callable
        ``voice_engine`` picks the engine for the new call id."""
        schema = OutcomeSchema.of(outcome_schema)
        destination = dialing_rules.parse_destination(to)
        dialing_rules.check_consent(consent_type)
        if suppressions is not None and suppressions.is_suppressed(destination.e164, now):
            raise NumberSuppressedError("this number is on the suppression list", loc=dialing_rules.TO, input=to)
        dialing_rules.check_call_hours(destination, consent_type or "", now)
        caller = from_number() if callable(from_number) else from_number
        call_id = call_id or new_call_id()
        return cls(
            tenant_id=tenant_id, call_id=call_id, direction=OUTBOUND, mode=mode, to=destination.e164,
            from_number=caller, objective=objective, outcome_schema=schema, consent_type=consent_type or "",
            consent_record_id=consent_record_id, voice_id=voice_id,
            voice_engine=voice_engine(call_id) if callable(voice_engine) else voice_engine, language=language,
            metadata=metadata or {}, variables=variables or {}, simulation=simulation, created_by=created_by,
            max_duration_seconds=max_duration_seconds, at=now,
        )

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
        self.max_duration_seconds = max_duration_seconds
        self.created_at = at
        self.status = QUEUED
        self.started_at: datetime | None = None
        self.ended_at: datetime | None = None
        self.answered_by: str | None = None
        self.turns: list[dict[str, str]] = []
        self.outcome: dict[str, Any] | None = None
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

    # -- reading ------------------------------------------------------------------------------

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def transcript(self) -> str:
        return "\n".join(f"{turn['speaker']}: {turn['text']}" for turn in self.turns)

    def _require(self, *statuses: str) -> None:
        if self.status not in statuses:
            raise CallStateError(f"the call is {self.status}")

    @property
    def session_state(self) -> str:
        """``none`` (never opened), ``open`` or ``closed``."""
        if self.session_opened_at is None:
            return "none"
        return "open" if self.session_closed_at is None else "closed"

    @property
    def transfer_pending(self) -> bool:
        return self.transfer is not None and self.transfer["status"] == "requested"

    @property
    def ready_to_settle(self) -> bool:
        """A live conversation is over: its voice session closed and no transfer is under way."""
        return not self.is_terminal and self.session_state == "closed" and not self.transfer_pending

    @property
    def awaiting_verdict(self) -> bool:
        """Answering-machine detection was asked for and has not answered yet."""
        return self.amd_requested and self.answered_by is None

    # -- commands -----------------------------------------------------------------------------

    def start(self, now: datetime) -> None:
        """Claim the call for running; a second claim conflicts (optimistic concurrency)."""
        self._require(QUEUED)
        self._started(at=now)

    @event("Started")
    def _started(self, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at

    def request_dial(self, amd: bool, now: datetime) -> None:
        """Claim a live call for dialing; saved before the carrier is asked (at most one dial)."""
        self._require(QUEUED)
        self._dial_requested(amd=amd, at=now)

    @event("DialRequested")
    def _dial_requested(self, amd: bool, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at
        self.dial_requested_at = at
        self.amd_requested = amd

    def dialed(self, carrier_sid: str, now: datetime) -> None:
        self._require(IN_PROGRESS)
        if self.carrier_sid is not None:
            if self.carrier_sid != carrier_sid:
                raise CallStateError("the call was already dialed under another carrier id")
            return
        self._dialed(carrier_sid=carrier_sid, at=now)

    @event("Dialed")
    def _dialed(self, carrier_sid: str, at: datetime) -> None:
        self.carrier_sid = carrier_sid

    def inbound_answered(self, carrier_sid: str, now: datetime) -> None:
        """An inbound call is taken by the agent: it runs at once (no dial, no machine detection)."""
        self._require(QUEUED)
        self._inbound_answered(carrier_sid=carrier_sid, at=now)

    @event("InboundAnswered")
    def _inbound_answered(self, carrier_sid: str, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at
        self.carrier_sid = carrier_sid

    def carrier_progressed(self, carrier_status: str, now: datetime) -> bool:
        """A non-final lifecycle status (``initiated``, ``ringing``, ``in-progress``); duplicates and
        late ones change nothing."""
        if self.is_terminal or carrier_status == self.carrier_status or self.carrier_duration_seconds is not None:
            return False
        self._carrier_progressed(carrier_status=carrier_status, at=now)
        return True

    @event("CarrierProgressed")
    def _carrier_progressed(self, carrier_status: str, at: datetime) -> None:
        self.carrier_status = carrier_status

    def carrier_ended(self, carrier_status: str, duration_seconds: int, now: datetime) -> bool:
        """The carrier's final status; recorded once, never on a terminal call."""
        if self.is_terminal or self.carrier_duration_seconds is not None:
            return False
        self._carrier_ended(carrier_status=carrier_status, duration_seconds=max(0, int(duration_seconds)), at=now)
        return True

    @event("CarrierEnded")
    def _carrier_ended(self, carrier_status: str, duration_seconds: int, at: datetime) -> None:
        self.carrier_status = carrier_status
        self.carrier_duration_seconds = duration_seconds

    def open_session(self, transport: str, nonce: str, now: datetime) -> None:
        """A voice socket presented this call's token: the first one wins, every later one is refused."""
        self._require(IN_PROGRESS)
        if self.session_opened_at is not None:
            raise CallStateError("a voice session was already opened for this call")
        self._session_opened(transport=transport, nonce=nonce, at=now)

    @event("VoiceSessionOpened")
    def _session_opened(self, transport: str, nonce: str, at: datetime) -> None:
        self.session_transport = transport
        self.session_nonce = nonce
        self.session_opened_at = at

    def close_session(self, reason: str, now: datetime) -> None:
        if self.session_state != "open":
            return
        self._session_closed(reason=reason, at=now)

    @event("VoiceSessionClosed")
    def _session_closed(self, reason: str, at: datetime) -> None:
        self.session_closed_at = at

    def request_transfer(self, destinations: list[dict[str, str]], max_attempts: int, brief: str,
                         now: datetime) -> None:
        self._require(IN_PROGRESS)
        if self.transfer is not None:
            raise CallStateError("the call was already transferred")
        if not destinations:
            raise CallStateError("the number has no transfer destinations")
        self._transfer_requested(destinations=[dict(d) for d in destinations[:5]],
                                 max_attempts=max(1, min(int(max_attempts), 5)), brief=brief[:500], at=now)

    @event("TransferRequested")
    def _transfer_requested(self, destinations: list[dict[str, str]], max_attempts: int, brief: str,
                            at: datetime) -> None:
        self.transfer = {"destinations": destinations, "max_attempts": max_attempts, "brief": brief, "legs": [],
                         "status": "requested"}

    def next_transfer_destination(self) -> int | None:
        """Index of the destination to dial next, or None when the attempts are spent."""
        if not self.transfer_pending:
            return None
        tried = len(self.transfer["legs"])  # type: ignore[index]
        if tried >= min(self.transfer["max_attempts"], len(self.transfer["destinations"])):  # type: ignore[index]
            return None
        return tried

    def transfer_leg_ended(self, index: int, dial_status: str, now: datetime) -> bool:
        """One dialled destination answered or not; duplicates of a leg change nothing."""
        if self.is_terminal or not self.transfer_pending or index != len(self.transfer["legs"]):  # type: ignore[index]
            return False
        self._transfer_leg_ended(index=index, dial_status=dial_status, at=now)
        return True

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

    def attach_recording(self, url: str, recording_sid: str, now: datetime) -> bool:
        """The recording arrives after the call ends: it may attach to a terminal call (its status
        does not move); the first one is kept."""
        if self.recording_url is not None:
            return False
        self._recording_attached(url=url, recording_sid=recording_sid, at=now)
        return True

    @event("RecordingAttached")
    def _recording_attached(self, url: str, recording_sid: str, at: datetime) -> None:
        self.recording_url = url
        self.recording_sid = recording_sid

    def answer(self, answered_by: str, now: datetime) -> bool:
        """Record who answered; returns False when the spec's machine rule abandons the call."""
        self._require(IN_PROGRESS)
        self._answered(answered_by=answered_by, at=now)
        return answered_by not in MACHINE_ANSWERS

    @event("Answered")
    def _answered(self, answered_by: str, at: datetime) -> None:
        self.answered_by = answered_by

    def machine_verdict(self, answered_by: str, now: datetime) -> bool:
        """Who answered, once (a repeated or late verdict changes nothing). SPEC.md answering-machine
        rule: a machine or a fax abandons the call, no audio and no message; ``no_answer`` (silence)
        fails it. True when the agent may speak."""
        if self.is_terminal or self.answered_by is not None:
            return False
        if not self.answer(answered_by, now):
            self.fail(abandon_code(answered_by), f"answered by {answered_by}; the call was abandoned", now)
            return False
        if answered_by == "no_answer":
            # Live: the carrier's detection heard silence; simulated: the callee never picked up.
            self.fail("no_answer", "nobody answered (silence)" if self.mode == "live" else "nobody answered", now)
            return False
        return True

    def carrier_final(self, carrier_status: str, duration_seconds: int, now: datetime) -> bool:
        """The carrier's final status (``completed``, ``busy``, ``no_answer``, ``failed``, ``canceled``),
        recorded once: a failure status fails the call with its code, and a call that ended before
        its conversation started (no voice session, no transfer) has hung up. False when it was
        already recorded or the call is terminal."""
        if not self.carrier_ended(carrier_status, duration_seconds, now):
            return False
        failure = CARRIER_FAILURES.get(carrier_status)
        if failure is not None:
            self.fail(*failure, now)
        elif self.session_state == "none" and self.transfer is None:
            self.fail("hung_up", "the call ended before the conversation started", now)
        return True

    def record_turn(self, speaker: str, text: str, now: datetime) -> None:
        self._require(IN_PROGRESS)
        self._turn_recorded(speaker=speaker, text=text, at=now)

    @event("TurnRecorded")
    def _turn_recorded(self, speaker: str, text: str, at: datetime) -> None:
        self.turns = [*self.turns, {"speaker": speaker, "text": text}]

    def end(self, duration_seconds: int, now: datetime) -> None:
        self._require(IN_PROGRESS)
        self._ended(duration_seconds=max(0, int(duration_seconds)), at=now)

    @event("Ended")
    def _ended(self, duration_seconds: int, at: datetime) -> None:
        self.duration_seconds = duration_seconds
        self.ended_at = at

    def record_outcome(self, outcome: dict[str, Any], confidence: float, usage: dict[str, int], now: datetime) -> None:
        self._require(IN_PROGRESS)
        if not 0.0 <= confidence <= 1.0:
            raise CallStateError("confidence must lie in [0, 1]")
        self._outcome_extracted(outcome=outcome, confidence=confidence, usage=usage, at=now)

    @event("OutcomeExtracted")
    def _outcome_extracted(self, outcome: dict[str, Any], confidence: float, usage: dict[str, int], at: datetime) -> None:
        self.outcome = outcome
        self.confidence = confidence
        self.usage = usage

    def complete(self, cost_voice: Decimal, cost_extraction: Decimal, now: datetime) -> None:
        self._require(IN_PROGRESS)
        if self.outcome is None:
            raise CallStateError("a call completes only with an outcome")
        self._completed(cost_voice=cost_voice, cost_extraction=cost_extraction,
                        cost_total=cost_voice + cost_extraction, at=now)

    @event("Completed")
    def _completed(self, cost_voice: Decimal, cost_extraction: Decimal, cost_total: Decimal, at: datetime) -> None:
        self.status = COMPLETED
        self.cost_voice = Decimal(cost_voice)
        self.cost_extraction = Decimal(cost_extraction)
        self.cost_total = Decimal(cost_total)
        self.ended_at = self.ended_at or at

    def fail(self, error_code: str, message: str, now: datetime,
             cost_voice: Decimal = NO_COST, cost_extraction: Decimal = NO_COST) -> None:
        if self.is_terminal:
            raise CallStateError(f"the call is already {self.status}")
        self._failed(error_code=error_code, message=message[:500], cost_voice=cost_voice,
                     cost_extraction=cost_extraction, cost_total=cost_voice + cost_extraction, at=now)

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
