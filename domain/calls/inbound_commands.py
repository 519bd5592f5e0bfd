"""The commands of an inbound call (docs/numbers.md "Inbound calls"): where the number sent it, the
voicemail it left, and the agent's token usage (any live call's).

A mixin of the aggregate, as ``live_commands.py``: the ``@event`` methods stay in ``call.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from domain.calls.call_rules import IN_PROGRESS, CallStateError
from domain.calls.outcome_schema import OutcomeSchema

if TYPE_CHECKING:
    from domain.calls.call import Call

    _Base = Call
else:
    _Base = object

VOICEMAIL = "voicemail"
MAX_VOICEMAIL_TEXT = 10_000


class InboundCommands(_Base):
    @property
    def route_action(self) -> str:
        """``agent`` unless the number routed the call elsewhere (``domain/numbers/inbound_plan.py``)."""
        return self.routing["action"] if self.routing is not None else "agent"

    def route_inbound(self, *, action: str, reason: str, destination: str | None, persona: str | None, record: bool,
                      now: datetime, objective: str | None = None, outcome_schema: OutcomeSchema | None = None) -> bool:
        """Where the number sent the call, decided once; a voicemail or a routed call pursues its own
        ``objective`` and ``outcome_schema``. False when it was already routed."""
        self._require(IN_PROGRESS)
        if self.direction != "inbound":
            raise CallStateError("only an inbound call is routed by its number")
        if self.routing is not None:
            return False
        self._inbound_routed(action=action, reason=reason, destination=destination, persona=persona, record=record,
                             objective=objective, outcome_schema=outcome_schema, at=now)
        return True

    def voicemail_recorded(self, url: str, recording_sid: str, duration_seconds: int, now: datetime) -> bool:
        """The caller's message was recorded (its audio on the carrier); the first report is kept."""
        if self.is_terminal or self.route_action != VOICEMAIL or (self.voicemail or {}).get("recording_sid"):
            return False
        self._voicemail_recorded(url=url, recording_sid=recording_sid, duration_seconds=max(0, int(duration_seconds)),
                                 at=now)
        return True

    def voicemail_transcribed(self, text: str, now: datetime) -> bool:
        """The message as text: the caller's turn the voicemail outcome is extracted from. Once."""
        if self.is_terminal or self.route_action != VOICEMAIL or (self.voicemail or {}).get("text") is not None:
            return False
        self._voicemail_transcribed(text=" ".join(text.split())[:MAX_VOICEMAIL_TEXT], at=now)
        return True

    def record_agent_usage(self, usage: Mapping[str, int], now: datetime) -> None:
        """The agent's model tokens over the conversation, priced with the call's voice cost."""
        if self.is_terminal or not any(usage.values()):
            return
        self._agent_usage_recorded(usage={name: int(count) for name, count in usage.items()}, at=now)
