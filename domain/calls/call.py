"""Call aggregate: a call's life from ``Queued`` to ``Completed`` or ``Failed`` (ARCHITECTURE.md §7).

Statuses shown: ``queued`` → ``in_progress`` → ``completed`` | ``failed``. A terminal call never
moves again; late or duplicate facts about it are refused by the aggregate.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.errors import DomainError

QUEUED = "queued"
IN_PROGRESS = "in_progress"
COMPLETED = "completed"
FAILED = "failed"
TERMINAL = (COMPLETED, FAILED)

AGENT = "agent"
CALLEE = "callee"

# The answering-machine rule of SPEC.md: these abandon the call with no audio and no message.
MACHINE_ANSWERS = ("machine_start", "machine_end_beep", "machine_end_silence", "machine_end_other", "fax")

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
        outcome_schema: dict[str, Any],
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
        self.outcome_schema = outcome_schema
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

    # -- commands -----------------------------------------------------------------------------

    def start(self, now: datetime) -> None:
        """Claim the call for running; a second claim conflicts (optimistic concurrency)."""
        self._require(QUEUED)
        self._started(at=now)

    @event("Started")
    def _started(self, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at

    def answer(self, answered_by: str, now: datetime) -> bool:
        """Record who answered; returns False when the spec's machine rule abandons the call."""
        self._require(IN_PROGRESS)
        self._answered(answered_by=answered_by, at=now)
        return answered_by not in MACHINE_ANSWERS

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
