"""What an inbound call keeps of its number's decisions (docs/numbers.md "Inbound calls"): where the
number sent it (``Routing``) and the message a caller left (``Voicemail``). Frozen values, built by
the ``Call`` events that say them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from domain.calls.call_rules import CALLEE


@dataclass(frozen=True, kw_only=True)
class Routing:
    action: str  # agent, voicemail, transfer, message, hangup (domain/numbers/inbound_plan.py)
    reason: str  # why: open, closed, a route matched
    destination: str | None  # the transfer destination's label, when one was named

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "reason": self.reason, "destination": self.destination}


@dataclass(frozen=True, kw_only=True)
class Voicemail:
    """The recording arrives first (its audio stays on the carrier), its text later; either may be
    all there is."""

    recording_url: str | None = None
    recording_sid: str | None = None
    duration_seconds: int | None = None
    text: str | None = None

    @classmethod
    def recorded(cls, voicemail: Voicemail | None, url: str, recording_sid: str, duration_seconds: int) -> Voicemail:
        return replace(voicemail or cls(), recording_url=url, recording_sid=recording_sid,
                       duration_seconds=duration_seconds)

    @classmethod
    def transcribed(cls, voicemail: Voicemail | None, text: str) -> Voicemail:
        return replace(voicemail or cls(), text=text)

    @staticmethod
    def heard(turns: list[dict[str, str]], text: str) -> list[dict[str, str]]:
        """The call's turns once the message's text arrived: the caller's turn, when it says anything."""
        return [*turns, {"speaker": CALLEE, "text": text}] if text else turns

    def as_dict(self) -> dict[str, Any]:
        """The shape the call kept before this value existed: only what arrived."""
        recording = ({"recording_url": self.recording_url, "recording_sid": self.recording_sid,
                      "duration_seconds": self.duration_seconds} if self.recording_sid is not None else {})
        return {**recording, **({"text": self.text} if self.text is not None else {})}
