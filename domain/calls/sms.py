"""A call's post-call SMS (SPEC.md Number ``sms_enabled``, ``sms_templates``): an aggregate of its
own, one per call, opened when the call has ended and its number owes it messages.

Exactly once: every message the call owes is claimed in the commit that opens the aggregate, so of
two senders that saw the call end only one opens it; the other's commit conflicts and sends
nothing. A message is then ``sending`` until the carrier's answer is recorded (``sent`` or
``failed``); a sender that dies in between leaves it ``sending``, never sent twice.

Calls of release 0.1.0 recorded their messages on the call itself (``Call.SmsClaimed``, …); those
stay readable there (``Call.sms``), and a call that has any is not texted again.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.calls.call_rules import FAILED_SMS, SENDING, SENT

MAX_ERROR = 300  # characters of a carrier's refusal kept on the message


class SmsStateError(Exception):
    pass


@dataclass(frozen=True, kw_only=True)
class SmsMessage:
    """One message: a template's text to the other party of the call, and what became of it."""

    template_id: str
    to: str
    body: str
    status: str = SENDING  # sending | sent | failed
    sent_at: datetime | None = None
    carrier_sid: str | None = None
    error: str | None = None

    @classmethod
    def after_sent(cls, message: SmsMessage, carrier_sid: str, at: datetime) -> SmsMessage:
        return replace(message, status=SENT, sent_at=at, carrier_sid=carrier_sid)

    @classmethod
    def after_failure(cls, message: SmsMessage, error: str) -> SmsMessage:
        return replace(message, status=FAILED_SMS, error=error)


class CallSms(TenantAggregate):
    """``messages``: by template id, in the order they were claimed."""

    @staticmethod
    def create_id(call_id: str) -> uuid.UUID:
        return ids.deterministic("call-sms", call_id)

    @classmethod
    def claim(cls, tenant_id: str, call_id: str, owed: Iterable[tuple[str, str, str]], now: datetime) -> CallSms:
        """Open a call's SMS, claiming each owed ``(template_id, to, body)``; save it to claim them."""
        sms = cls(tenant_id=tenant_id, call_id=call_id, at=now)
        for template_id, to, body in owed:
            sms._claimed(template_id=template_id, to=to, body=body, at=now)
        return sms

    @event("Opened")
    def __init__(self, tenant_id: str, call_id: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.call_id = call_id
        self.opened_at = at
        self.messages: dict[str, SmsMessage] = {}

    def sent(self, template_id: str, carrier_sid: str, now: datetime) -> None:
        self._require_sending(template_id)
        self._sent(template_id=template_id, carrier_sid=carrier_sid, at=now)

    def failed(self, template_id: str, error: str, now: datetime) -> None:
        self._require_sending(template_id)
        self._failed(template_id=template_id, error=error[:MAX_ERROR], at=now)

    def _require_sending(self, template_id: str) -> None:
        message = self.messages.get(template_id)
        if message is None or message.status != SENDING:
            raise SmsStateError(f"no message of template {template_id} is being sent")

    @event("Claimed")
    def _claimed(self, template_id: str, to: str, body: str, at: datetime) -> None:
        self.messages = {**self.messages, template_id: SmsMessage(template_id=template_id, to=to, body=body)}

    @event("Sent")
    def _sent(self, template_id: str, carrier_sid: str, at: datetime) -> None:
        self.messages = {**self.messages,
                         template_id: SmsMessage.after_sent(self.messages[template_id], carrier_sid, at)}

    @event("Failed")
    def _failed(self, template_id: str, error: str, at: datetime) -> None:
        self.messages = {**self.messages, template_id: SmsMessage.after_failure(self.messages[template_id], error)}
