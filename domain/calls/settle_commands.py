"""The commands that settle a call, live or simulated: its outcome, what a failed extraction did
collect, and its end as ``completed`` or ``failed`` with the costs.

A mixin of the aggregate, as ``live_commands.py``: the ``@event`` methods stay in ``call.py``.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from domain.calls.call_rules import IN_PROGRESS, NO_COST, CallStateError

if TYPE_CHECKING:
    from domain.calls.call import Call

    _Base = Call
else:
    _Base = object


class SettleCommands(_Base):
    def record_outcome(self, outcome: dict[str, Any], confidence: float, usage: dict[str, int], now: datetime) -> None:
        self._require(IN_PROGRESS)
        if not 0.0 <= confidence <= 1.0:
            raise CallStateError("confidence must lie in [0, 1]")
        self._outcome_extracted(outcome=outcome, confidence=confidence, usage=usage, at=now)

    def record_keypad_entry(self, field: str, digits: str, now: datetime) -> None:
        """Digits a flow's keypad step collected for ``field`` (the transcript shows them masked)."""
        self._require(IN_PROGRESS)
        self._keypad_collected(field=field, digits=digits, at=now)

    def record_partial_outcome(self, partial: dict[str, Any], now: datetime) -> None:
        """The valid fields of an outcome that did not match the schema as a whole (kept, not shown
        as ``outcome``: the call fails with ``extraction_failed``)."""
        self._require(IN_PROGRESS)
        self._partial_outcome_recorded(partial_outcome=partial, at=now)

    def complete(self, cost_voice: Decimal, cost_extraction: Decimal, now: datetime) -> None:
        self._require(IN_PROGRESS)
        if self.outcome is None:
            raise CallStateError("a call completes only with an outcome")
        self._completed(cost_voice=cost_voice, cost_extraction=cost_extraction,
                        cost_total=cost_voice + cost_extraction, at=now)

    def fail(self, error_code: str, message: str, now: datetime,
             cost_voice: Decimal = NO_COST, cost_extraction: Decimal = NO_COST) -> None:
        if self.is_terminal:
            raise CallStateError(f"the call is already {self.status}")
        self._failed(error_code=error_code, message=message[:500], cost_voice=cost_voice,
                     cost_extraction=cost_extraction, cost_total=cost_voice + cost_extraction, at=now)
