"""The post-call SMS of ``Call`` (SPEC.md Number ``sms_templates``): each template of the call's
number is sent at most once per call. Sending is claimed on the call first (``SmsClaimed``, a
write that optimistic concurrency lets only one sender make), then the carrier's answer is
recorded (``SmsSent`` or ``SmsFailed``). They follow the terminal event and never move the
call's status, as a recording does.

A mixin of the aggregate, as ``live_commands.py``: the ``@event`` methods stay in ``call.py``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.calls.call_rules import CallStateError

if TYPE_CHECKING:
    from domain.calls.call import Call

    _Base = Call
else:
    _Base = object

SENDING, SENT, FAILED_SMS = "sending", "sent", "failed"


class SmsCommands(_Base):
    def sms_of(self, template_id: str) -> dict[str, Any] | None:
        return next((sms for sms in getattr(self, "sms", ()) if sms["template_id"] == template_id), None)

    def claim_sms(self, template_id: str, to: str, body: str, now: datetime) -> bool:
        """Claim the sending of a template's message; False when it was claimed before (sent,
        failed, or under way elsewhere)."""
        if not self.is_terminal:
            raise CallStateError("messages are sent after the call ends")
        if self.sms_of(template_id) is not None:
            return False
        self._sms_claimed(template_id=template_id, to=to, body=body, at=now)
        return True

    def sms_sent(self, template_id: str, carrier_sid: str, now: datetime) -> None:
        self._require_sending(template_id)
        self._sms_sent(template_id=template_id, carrier_sid=carrier_sid, at=now)

    def sms_failed(self, template_id: str, error: str, now: datetime) -> None:
        self._require_sending(template_id)
        self._sms_failed(template_id=template_id, error=error[:300], at=now)

    def _require_sending(self, template_id: str) -> None:
        sms = self.sms_of(template_id)
        if sms is None or sms["status"] != SENDING:
            raise CallStateError(f"no message of template {template_id} is being sent")
