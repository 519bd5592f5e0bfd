"""Post-call SMS (issue 14, item 3) against the fake carrier's Messages API: each template whose
condition holds on the outcome is sent once from the number to the other party, shown on the
call record; a second run sends nothing more; a failed send is retried, then recorded, and never
touches the call."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from decimal import Decimal
from typing import Any

import pytest

from application.numbers import post_call_sms
from application.numbers.post_call_sms import send_post_call_sms
from domain import ids
from domain.calls.call import Call
from domain.calls.sms import CallSms
from tests.support.calls import queued_call
from tests.support.setup import carrier_tenant
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

_serial = itertools.count(700)
CALLER = "+442071838799"
SCHEMA = {"caller_name": {"type": "string"}, "callback_requested": {"type": "boolean", "optional": True}}
TEMPLATES = [
    {"name": "Thanks", "body": "Thanks for calling {{ number.e164 }}, {{ outcome.caller_name }}."},
    {"name": "Callback", "body": "We will call {{ call.from }} back.",
     "condition": {"field": "callback_requested", "op": "eq", "value": True}},
    {"name": "Nameless", "body": "Unused", "condition": {"field": "caller_name", "op": "absent"}},
]


@pytest.fixture
def line(client, container, fake) -> dict[str, Any]:
    e164 = f"+1415555{next(_serial):04d}"
    tenant = carrier_tenant(client, container, fake, [(e164, "Main line")], select=False)[0]
    number = client.post("/v1/numbers/byo", headers=tenant.headers, json={
        "e164": e164, "outcome_schema": SCHEMA, "sms_enabled": True, "sms_templates": TEMPLATES})
    assert number.status_code == 201, number.text
    return {"tenant": tenant, "number": number.json()}


def ended_inbound_call(container, line: dict[str, Any], outcome: dict[str, Any] | None, caller: str = CALLER,
                       before_saving: Any = None) -> str:
    """An inbound call to the line that has ended (completed with ``outcome``, else failed)."""
    now = container.clock()
    call_id = ids.to_public(ids.CALL, uuid.uuid4())
    call = queued_call(tenant_id=line["tenant"].tenant_id, call_id=call_id, direction="inbound", mode="live",
                       to=line["number"]["e164"], from_number=caller, outcome_schema=SCHEMA,
                       metadata={"number_id": line["number"]["id"]}, simulation=None, at=now)
    call.inbound_answered("CA" + uuid.uuid4().hex, now)
    call.end(30, now)
    if outcome is not None:
        call.record_outcome(outcome, 0.9, {}, now)
        call.complete(Decimal("0.0100"), Decimal("0.0010"), now)
    else:
        call.fail("no_answer", "the caller hung up", now)
    if before_saving is not None:
        before_saving(call, now)
    container.calling.commit(call)
    return call_id


def texts_to(fake, e164: str) -> list[dict[str, Any]]:
    return [m for m in fake.messages.values() if m["to"] == e164]


def settled(client, line: dict[str, Any], call_id: str, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The call record's ``sms`` once the reactor has settled ``count`` messages."""
    deadline = time.monotonic() + timeout
    while True:
        sms = client.get(f"/v1/calls/{call_id}", headers=line["tenant"].headers).json()["sms"]
        if len(sms) >= count and all(m["status"] != "sending" for m in sms) or time.monotonic() > deadline:
            return sms
        time.sleep(0.02)


def tries_to(fake, e164: str) -> int:
    return sum(r.form.get("To") == [e164] for r in fake.requests_to("/Messages.json", "POST"))


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch):
    monkeypatch.setattr(post_call_sms, "RETRY_PAUSES", (0.0, 0.0))


def test_the_templates_whose_condition_holds_are_sent_once_and_shown_on_the_record(client, container, fake, line):
    caller = "+442071830001"
    call_id = ended_inbound_call(container, line, {"caller_name": "Ada", "callback_requested": True}, caller)

    sms = settled(client, line, call_id, 2)  # the reactor saw the call end
    assert send_post_call_sms(container.calling, call_id) == 0  # and seeing it again sends nothing

    sent = texts_to(fake, caller)
    assert sorted(m["body"] for m in sent) == sorted([
        f"Thanks for calling {line['number']['e164']}, Ada.", f"We will call {caller} back."])
    assert {m["from"] for m in sent} == {line["number"]["e164"]} and tries_to(fake, caller) == 2
    assert [(s["to"], s["status"]) for s in sms] == [(caller, "sent"), (caller, "sent")]
    assert {s["template_id"] for s in sms} == {t["id"] for t in line["number"]["sms_templates"][:2]}
    record = client.get(f"/v1/calls/{call_id}", headers=line["tenant"].headers).json()
    assert all(s["sent_at"] for s in sms) and record["status"] == "completed"


def test_two_senders_at_once_send_each_message_once(client, container, fake, line):
    caller = "+442071830007"
    call_id = ended_inbound_call(container, line, {"caller_name": "Gil", "callback_requested": True}, caller)
    counts: list[int] = []
    senders = [threading.Thread(target=lambda: counts.append(send_post_call_sms(container.calling, call_id)))
               for _ in range(3)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(10)
    settled(client, line, call_id, 2)
    assert tries_to(fake, caller) == 2 and sum(counts) <= 2


def test_a_condition_that_does_not_hold_sends_nothing_for_it(client, container, fake, line):
    caller = "+442071830002"
    call_id = ended_inbound_call(container, line, {"caller_name": "Bo"}, caller)

    assert [s["status"] for s in settled(client, line, call_id, 1)] == ["sent"]
    assert [m["body"] for m in texts_to(fake, caller)] == [f"Thanks for calling {line['number']['e164']}, Bo."]


def test_a_refused_send_is_recorded_as_failed_and_a_carrier_outage_is_retried(client, container, fake, line):
    refused_caller, outage_caller = "+442071830003", "+442071830004"
    fake.refuse_messages_to = frozenset({refused_caller})
    try:
        call_id = ended_inbound_call(container, line, {"caller_name": "Cy"}, refused_caller)
        sms = settled(client, line, call_id, 1)
    finally:
        fake.refuse_messages_to = frozenset()
    assert [(s["status"], s["sent_at"]) for s in sms] == [("failed", None)]
    assert tries_to(fake, refused_caller) == 1  # a refusal is final
    assert client.get(f"/v1/calls/{call_id}", headers=line["tenant"].headers).json()["status"] == "completed"

    fake.messages_down = True
    try:
        call_id = ended_inbound_call(container, line, {"caller_name": "Di"}, outage_caller)
        sms = settled(client, line, call_id, 1)
    finally:
        fake.messages_down = False
    assert [s["status"] for s in sms] == ["failed"]
    assert tries_to(fake, outage_caller) == 3  # tried again twice, then failed


def test_a_failed_call_sends_its_unconditional_templates_and_a_withheld_caller_nothing(client, container, fake, line):
    caller = "+442071830005"
    call_id = ended_inbound_call(container, line, None, caller)
    # No outcome: the unconditional template, and the one that waits for caller_name to be absent.
    assert [s["status"] for s in settled(client, line, call_id, 2)] == ["sent", "sent"]
    assert sorted(m["body"] for m in texts_to(fake, caller)) == sorted(
        [f"Thanks for calling {line['number']['e164']}, .", "Unused"])

    withheld = ended_inbound_call(container, line, {"caller_name": "Ed"}, caller="anonymous")
    assert send_post_call_sms(container.calling, withheld) == 0
    assert settled(client, line, withheld, 0, timeout=0.3) == []


def test_a_number_without_sms_sends_nothing(client, container, fake, line):
    assert client.patch(f"/v1/numbers/{line['number']['id']}", headers=line["tenant"].headers,
                        json={"sms_enabled": False}).status_code == 200
    caller = "+442071830006"
    call_id = ended_inbound_call(container, line, {"caller_name": "Fa"}, caller)
    assert send_post_call_sms(container.calling, call_id) == 0
    assert texts_to(fake, caller) == []
    found = container.calling.find(Call, Call.create_id(call_id))
    assert found is not None and found.sms == {}
    assert container.calling.find(CallSms, CallSms.create_id(call_id)) is None


def test_the_calls_history_shows_its_messages_after_its_end_with_seqs_that_page_on(client, container, fake, line):
    caller = "+442071830008"
    call_id = ended_inbound_call(container, line, {"caller_name": "Hal"}, caller)
    settled(client, line, call_id, 1)
    headers = line["tenant"].headers
    events = client.get(f"/v1/calls/{call_id}/events", headers=headers).json()["data"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events][-3:] == ["call.completed", "call.sms_claimed", "call.sms_sent"]
    claimed, sent = events[-2:]
    assert claimed["data"] == {"template_id": line["number"]["sms_templates"][0]["id"], "to": caller,
                               "body": f"Thanks for calling {line['number']['e164']}, Hal.",
                               "tenant_id": line["tenant"].tenant_id, "at": claimed["data"]["at"]}
    assert set(sent["data"]) == {"template_id", "carrier_sid", "tenant_id", "at"}
    assert claimed["by"] == sent["by"] == "callwright"

    pages, cursor = [], None
    while True:
        page = client.get(f"/v1/calls/{call_id}/events", headers=headers,
                          params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        pages.extend(page["data"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == events


def test_the_record_as_of_an_instant_shows_the_messages_sent_by_then(client, container, fake, line):
    caller = "+442071830009"
    call_id = ended_inbound_call(container, line, {"caller_name": "Ida"}, caller)
    settled(client, line, call_id, 1)
    headers = line["tenant"].headers
    events = client.get(f"/v1/calls/{call_id}/events", headers=headers).json()["data"]
    ended = next(e["at"] for e in events if e["type"] == "call.completed")
    before = client.get(f"/v1/calls/{call_id}", headers=headers, params={"as_of": ended}).json()
    after = client.get(f"/v1/calls/{call_id}", headers=headers, params={"as_of": events[-1]["at"]}).json()
    assert before["status"] == "completed" and before["sms"] == []
    assert [(s["to"], s["status"]) for s in after["sms"]] == [(caller, "sent")]


def sent_on_the_call(call: Call, template_id: str, to: str, now: Any) -> None:
    """A message as release 0.1.0 recorded it: claimed and sent on the call itself."""
    call._sms_claimed(template_id=template_id, to=to, body="Old", at=now)
    call._sms_sent(template_id=template_id, carrier_sid="SM" + "0" * 32, at=now)


def test_a_call_whose_messages_were_recorded_on_it_is_not_texted_again(client, container, fake, line):
    """Release 0.1.0 claimed a call's messages on the call (Call.SmsClaimed): its record still shows
    them, and sending again claims only what it did not claim."""
    caller = "+442071830010"
    call_id = ended_inbound_call(container, line, {"caller_name": "Jo", "callback_requested": True}, caller,
                                 before_saving=lambda call, now: sent_on_the_call(
                                     call, line["number"]["sms_templates"][0]["id"], caller, now))
    sms = settled(client, line, call_id, 2)
    assert [(s["body"], s["status"]) for s in sms] == [("Old", "sent"), (f"We will call {caller} back.", "sent")]
    assert send_post_call_sms(container.calling, call_id) == 0
    assert [m["body"] for m in texts_to(fake, caller)] == [f"We will call {caller} back."]
