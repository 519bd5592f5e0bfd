"""The vocabulary and fixed rules of a call (ARCHITECTURE.md §7): statuses, speakers, the
answering-machine rule's answers, the carrier failures and their error codes, the zero cost."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from domain import ids
from domain.errors import DomainError

QUEUED = "queued"
IN_PROGRESS = "in_progress"
COMPLETED = "completed"
FAILED = "failed"
TERMINAL = (COMPLETED, FAILED)

AGENT = "agent"
CALLEE = "callee"

OUTBOUND = "outbound"
SIMULATED = "simulated"

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


# A simulated run (ARCHITECTURE.md §7): a runner that starts a simulated conversation holds the call
# for LEASE and renews the lease as the conversation goes on. When the runner's process dies (a
# crash, a kill, a lost machine) the lease runs out within seconds and another runner takes the call
# over: the conversation starts again from its beginning, since nothing was spoken to anyone. A
# runner that was only slow and writes after the take-over loses the race (optimistic concurrency).
LEASE = timedelta(seconds=15)
# A running conversation renews its lease when this much of it has passed.
RENEW_AFTER = timedelta(seconds=5)

# An inbound call its number sent to voicemail (docs/numbers.md "Inbound calls"); its text's limit.
VOICEMAIL = "voicemail"
MAX_VOICEMAIL_TEXT = 10_000

# A post-call SMS message's states (domain/calls/sms.py).
SENDING, SENT, FAILED_SMS = "sending", "sent", "failed"

# Amounts carry the price table's four decimal places even when nothing was spent.
NO_COST = Decimal("0.0000")


class CallStateError(DomainError):
    code = "call_state"


def new_call_id() -> str:
    return ids.to_public(ids.CALL, uuid.uuid4())


def simulated_at(mode: str, simulation: dict[str, Any] | None) -> datetime | None:
    """A simulated call's ``simulation.at`` (stored as ISO 8601): the instant it takes place."""
    at = (simulation or {}).get("at") if mode == SIMULATED else None
    return datetime.fromisoformat(at) if isinstance(at, str) else None
