"""``Call`` aggregates in each state of their life, built the one way the tests build calls.

Every test that needs a ``Call`` goes through ``queued_call``: when the constructor changes (a
``Call.queue`` factory, a schema value object), this is the one place to adapt.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from domain import ids
from domain.calls.call import Call
from domain.calls.call_rules import AGENT, CALLEE, new_call_id

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)
CARRIER_SID = "CA" + "0" * 32
SCHEMA: dict[str, Any] = {"confirmed": {"type": "boolean", "optional": False}}
OUTCOME: dict[str, Any] = {"confirmed": True}
DESTINATIONS = [{"label": "Front desk", "e164": "+442079460958"}, {"label": "Manager", "e164": "+442079460001"},
                {"label": "Owner", "e164": "+442079460002"}]


def later(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


def queued_call(**overrides: Any) -> Call:
    """A simulated outbound call just created; ``overrides`` replace any constructor argument."""
    arguments: dict[str, Any] = {
        "tenant_id": ids.to_public(ids.TENANT, uuid.uuid4()),
        "call_id": new_call_id(),
        "direction": "outbound",
        "mode": "simulated",
        "to": "+442071838750",
        "from_number": "+14155550100",
        "objective": "Confirm the appointment",
        "outcome_schema": SCHEMA,
        "consent_type": "prior_express",
        "consent_record_id": None,
        "voice_id": None,
        "voice_engine": "alpha_25",
        "language": "en-US",
        "metadata": {"crm": {"id": 7}},
        "variables": {"name": "Ada"},
        "simulation": {"facts": OUTCOME},
        "created_by": "key_test",
        "max_duration_seconds": 600,
        "at": NOW,
    }
    arguments.update(overrides)
    return Call(**arguments)


def live_call(**overrides: Any) -> Call:
    return queued_call(**{"mode": "live", "simulation": None, **overrides})


def started_call(**overrides: Any) -> Call:
    """A simulated call claimed by the runner."""
    call = queued_call(**overrides)
    call.start(later(1))
    return call


def dialed_call(amd: bool = True, **overrides: Any) -> Call:
    """A live call the carrier accepted, ringing, nobody answered yet."""
    call = live_call(**overrides)
    call.request_dial(amd=amd, now=later(1))
    call.dialed(CARRIER_SID, later(2))
    call.carrier_progressed("ringing", later(3))
    return call


def answered_call(answered_by: str = "human", **overrides: Any) -> Call:
    call = dialed_call(**overrides)
    call.carrier_progressed("in_progress", later(10))
    call.answer(answered_by, later(10))
    return call


def talking_call(**overrides: Any) -> Call:
    """A live call whose voice session is open and has one exchange."""
    call = answered_call(**overrides)
    call.open_session("relay", "nonce-1", later(11))
    call.record_turn(AGENT, "Is the appointment still on?", later(12))
    call.record_turn(CALLEE, "Yes.", later(13))
    return call


def settled_call(**overrides: Any) -> Call:
    """A live call whose conversation is over, ended, with its outcome extracted."""
    call = talking_call(**overrides)
    call.close_session("hangup", later(20))
    call.carrier_ended("completed", 10, later(20))
    call.end(10, later(20))
    call.record_outcome(OUTCOME, 0.9, {"input_tokens": 10, "output_tokens": 5}, later(21))
    return call


def completed_call(**overrides: Any) -> Call:
    call = settled_call(**overrides)
    call.complete(Decimal("0.0100"), Decimal("0.0020"), later(22))
    return call


def failed_call(**overrides: Any) -> Call:
    call = dialed_call(**overrides)
    call.fail("no_answer", "nobody answered", later(30))
    return call


def transferring_call(max_attempts: int = 2, destinations: list[dict[str, str]] | None = None,
                      **overrides: Any) -> Call:
    call = talking_call(**overrides)
    call.request_transfer(DESTINATIONS if destinations is None else destinations, max_attempts, "Wants a human",
                          later(14))
    return call
