"""A call's post-call SMS as an aggregate of its own (domain/calls/sms.py): claimed when opened,
then each message sent or failed once; release 0.1.0's messages on the call replay as values."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from domain.calls.call_rules import FAILED_SMS, SENDING, SENT
from domain.calls.sms import CallSms, SmsMessage, SmsStateError

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)
OWED = [("tpl_a", "+442071838799", "Thanks."), ("tpl_b", "+442071838799", "We will call back.")]


def test_opening_claims_every_owed_message_in_order():
    sms = CallSms.claim("ten_1", "cll_1", OWED, NOW)
    assert sms.id == CallSms.create_id("cll_1") and sms.call_id == "cll_1" and sms.tenant_id == "ten_1"
    assert [(m.template_id, m.to, m.body, m.status) for m in sms.messages.values()] == [
        ("tpl_a", "+442071838799", "Thanks.", SENDING), ("tpl_b", "+442071838799", "We will call back.", SENDING)]
    assert [type(e).__name__ for e in sms.collect_events()] == ["Opened", "Claimed", "Claimed"]


def test_each_message_is_settled_once_and_replays_the_same():
    sms = CallSms.claim("ten_1", "cll_1", OWED, NOW)
    later = NOW + timedelta(seconds=2)
    sms.sent("tpl_a", "SM1", later)
    sms.failed("tpl_b", "21610: " + "x" * 400, later)
    assert sms.messages["tpl_a"] == SmsMessage(template_id="tpl_a", to="+442071838799", body="Thanks.", status=SENT,
                                               sent_at=later, carrier_sid="SM1")
    assert sms.messages["tpl_b"].status == FAILED_SMS and len(sms.messages["tpl_b"].error or "") == 300
    for settle in (lambda: sms.sent("tpl_a", "SM2", later), lambda: sms.failed("tpl_b", "again", later),
                   lambda: sms.sent("tpl_c", "SM3", later)):
        with pytest.raises(SmsStateError):
            settle()

    replayed = None
    for event in sms.collect_events():
        replayed = event.mutate(replayed)
    assert replayed is not None and replayed.messages == sms.messages
