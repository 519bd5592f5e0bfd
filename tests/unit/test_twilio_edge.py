"""The Twilio edge (adapters/twilio/callbacks.py): real callback forms read into the service's
reports, ``X-Twilio-Signature`` and ``AccountSid`` checks (ARCHITECTURE.md §9), and TwiML for each
instruction (ARCHITECTURE.md §8), parsed back as the carrier reads it."""

from __future__ import annotations

import base64
import hashlib
import hmac
from xml.etree import ElementTree

import pytest

from adapters.twilio.callbacks import TwilioEdge
from application.calling.carrier_reports import (
    CallStatusReport,
    InboundCallReport,
    MachineVerdict,
    RecordingReport,
    TransferLegReport,
)
from application.calling.instructions import ConnectVoice, Dial, Hangup, Say

edge = TwilioEdge()
ACCOUNT = "AC" + "a" * 32
TOKEN = "secret-auth-token"
URL = "https://calls.example.test/webhooks/carrier/status/cll_1"


def status_form(status: str, **extra: str) -> list[tuple[str, str]]:
    return [("AccountSid", ACCOUNT), ("CallSid", "CA" + "1" * 32), ("CallStatus", status),
            ("Direction", "outbound-api"), *extra.items()]


def twilio_signature(token: str, url: str, pairs: list[tuple[str, str]]) -> str:
    """Twilio's documented scheme: HMAC-SHA1 over the URL, then each key (sorted) with each of its values."""
    data = url + "".join(key + value for key in sorted({k for k, _ in pairs})
                         for value in sorted({v for k, v in pairs if k == key}))
    return base64.b64encode(hmac.new(token.encode(), data.encode(), hashlib.sha1).digest()).decode()


# -- status callbacks -----------------------------------------------------------------------------

@pytest.mark.parametrize("word,status", [("queued", "queued"), ("initiated", "initiated"), ("ringing", "ringing"),
                                         ("in-progress", "in_progress"), ("answered", "answered")])
def test_lifecycle_progress_is_reported_as_progress_in_our_words(word, status):
    assert edge.read_status(status_form(word)) == CallStatusReport(status=status, final=False)


@pytest.mark.parametrize("word,status", [("completed", "completed"), ("busy", "busy"), ("no-answer", "no_answer"),
                                         ("failed", "failed"), ("canceled", "canceled"), ("Completed", "completed")])
def test_a_final_status_is_reported_with_its_duration(word, status):
    report = edge.read_status(status_form(word, CallDuration="42"))
    assert report == CallStatusReport(status=status, final=True, duration_seconds=42)


def test_a_final_status_without_a_usable_duration_counts_zero_seconds():
    assert edge.read_status(status_form("completed")) == CallStatusReport(status="completed", final=True)
    assert edge.read_status(status_form("busy", CallDuration="n/a")).duration_seconds == 0


def test_an_undocumented_final_word_ends_the_call_as_a_plain_completion():
    assert edge.read_status(status_form("vanished")) == CallStatusReport(status="completed", final=True)


@pytest.mark.parametrize("answered_by", ["human", "unknown", "machine_start", "machine_end_beep",
                                         "machine_end_silence", "machine_end_other", "fax"])
def test_an_answering_machine_verdict_wins_over_the_status_in_the_same_form(answered_by):
    form = status_form("in-progress", AnsweredBy=answered_by, MachineDetectionDuration="2100")
    assert edge.read_status(form) == MachineVerdict(answered_by=answered_by)


def test_an_undocumented_verdict_reads_as_unknown():
    assert edge.read_status(status_form("in-progress", AnsweredBy="robot")) == MachineVerdict(answered_by="unknown")


def test_a_form_with_neither_status_nor_verdict_reports_nothing():
    assert edge.read_status([("AccountSid", ACCOUNT), ("CallSid", "CA1")]) is None


# -- recordings, transfers, inbound ---------------------------------------------------------------

def test_a_completed_recording_is_reported_with_its_mp3_url_and_sid():
    form = [("AccountSid", ACCOUNT), ("RecordingSid", "RE1"), ("RecordingStatus", "completed"),
            ("RecordingUrl", "https://api.twilio.com/2010-04-01/Accounts/AC1/Recordings/RE1")]
    assert edge.read_recording(form) == RecordingReport(
        url="https://api.twilio.com/2010-04-01/Accounts/AC1/Recordings/RE1.mp3", sid="RE1", completed=True)


def test_a_recording_url_that_names_mp3_is_kept_and_a_missing_status_means_completed():
    form = [("RecordingUrl", "https://api.twilio.com/r/RE2.mp3"), ("RecordingSid", "RE2")]
    assert edge.read_recording(form) == RecordingReport(url="https://api.twilio.com/r/RE2.mp3", sid="RE2",
                                                        completed=True)


def test_a_failed_recording_is_not_completed_and_one_without_url_names_none():
    assert edge.read_recording([("RecordingStatus", "failed"), ("RecordingUrl", "https://x.test/r")]).completed is False
    assert edge.read_recording([("RecordingStatus", "completed")]) == RecordingReport(url="", sid="", completed=True)


@pytest.mark.parametrize("word,answered,status", [("completed", True, "completed"), ("answered", True, "completed"),
                                                  ("busy", False, "busy"), ("no-answer", False, "no_answer"),
                                                  ("failed", False, "failed"), ("canceled", False, "canceled")])
def test_each_dial_call_status_reads_as_a_transfer_leg_result(word, answered, status):
    report = edge.read_transfer([("AccountSid", ACCOUNT), ("DialCallStatus", word), ("DialCallDuration", "5")])
    assert report == TransferLegReport(answered=answered, status=status)


def test_the_first_transfer_request_has_no_leg_result():
    assert edge.read_transfer([("AccountSid", ACCOUNT), ("CallStatus", "in-progress")]) is None


def test_an_inbound_call_is_read_from_its_first_values():
    form = [("AccountSid", ACCOUNT), ("CallSid", "CA9"), ("To", "+14155550100"), ("From", "+442071838799"),
            ("To", "+10000000000")]
    assert edge.read_inbound(form) == InboundCallReport(to="+14155550100", from_number="+442071838799",
                                                        carrier_sid="CA9")


# -- signatures -----------------------------------------------------------------------------------

def test_a_callback_signed_with_the_accounts_token_and_naming_it_is_verified():
    form = status_form("ringing")
    assert edge.verify(TOKEN, ACCOUNT, URL, form, twilio_signature(TOKEN, URL, form))


def test_a_wrong_or_missing_signature_is_refused():
    form = status_form("ringing")
    assert not edge.verify(TOKEN, ACCOUNT, URL, form, twilio_signature("another-token", URL, form))
    assert not edge.verify(TOKEN, ACCOUNT, URL + "?x=1", form, twilio_signature(TOKEN, URL, form))
    assert not edge.verify(TOKEN, ACCOUNT, URL, form, "")
    assert not edge.verify(TOKEN, ACCOUNT, URL, form, None)


def test_every_value_of_a_repeated_key_is_signed():
    form = [*status_form("completed"), ("Tag", "one"), ("Tag", "two")]
    assert edge.verify(TOKEN, ACCOUNT, URL, form, twilio_signature(TOKEN, URL, form))
    first_only = [pair for pair in form if pair != ("Tag", "two")]
    assert not edge.verify(TOKEN, ACCOUNT, URL, form, twilio_signature(TOKEN, URL, first_only))


def test_a_validly_signed_callback_naming_another_account_is_refused():
    form = [("AccountSid", "AC" + "b" * 32), ("CallStatus", "ringing")]
    assert not edge.verify(TOKEN, ACCOUNT, URL, form, twilio_signature(TOKEN, URL, form))
    both = [("AccountSid", ACCOUNT), ("AccountSid", "AC" + "b" * 32), ("CallStatus", "ringing")]
    assert not edge.verify(TOKEN, ACCOUNT, URL, both, twilio_signature(TOKEN, URL, both))
    none = [("CallStatus", "ringing")]
    assert not edge.verify(TOKEN, ACCOUNT, URL, none, twilio_signature(TOKEN, URL, none))


def test_a_get_names_its_account_in_the_query_string():
    url = f"https://calls.example.test/webhooks/carrier/twiml/cll_1?AccountSid={ACCOUNT}&CallSid=CA1"
    assert edge.verify(TOKEN, ACCOUNT, url, [], twilio_signature(TOKEN, url, []))
    other = url.replace(ACCOUNT, "AC" + "b" * 32)
    assert not edge.verify(TOKEN, ACCOUNT, other, [], twilio_signature(TOKEN, other, []))


# -- TwiML ----------------------------------------------------------------------------------------

def parsed(*instructions) -> ElementTree.Element:
    document = edge.render(*instructions)
    assert document.startswith("<?xml") and edge.media_type == "application/xml"
    root = ElementTree.fromstring(document)
    assert root.tag == "Response"
    return root


def test_the_relay_opens_conversation_relay_with_its_settings_and_the_token_parameter():
    root = parsed(ConnectVoice(transport="relay", socket_url="wss://calls.example.test/webhooks/carrier/relay/cll_1",
                               parameters={"token": 'a&b"<c>', "number_id": "num_1"}, language="de-DE",
                               voice="en-US-Journey-O"))
    relay = root.find("Connect/ConversationRelay")
    assert relay is not None and root.find("Connect/Stream") is None
    assert relay.attrib == {"url": "wss://calls.example.test/webhooks/carrier/relay/cll_1", "language": "de-DE",
                            "voice": "en-US-Journey-O", "dtmfDetection": "true", "interruptible": "true"}
    assert [(p.get("name"), p.get("value")) for p in relay.iter("Parameter")] == [("token", 'a&b"<c>'),
                                                                                  ("number_id", "num_1")]


def test_the_stream_opens_a_media_stream_with_the_token_parameter():
    root = parsed(ConnectVoice(transport="stream", socket_url="wss://h.test/webhooks/carrier/stream/cll_1?x=1&y=2",
                               parameters={"token": "t0k"}))
    stream = root.find("Connect/Stream")
    assert stream is not None and root.find("Connect/ConversationRelay") is None
    assert stream.attrib == {"url": "wss://h.test/webhooks/carrier/stream/cll_1?x=1&y=2"}
    assert [(p.get("name"), p.get("value")) for p in stream.iter("Parameter")] == [("token", "t0k")]


def test_a_transfer_leg_dials_one_number_with_its_action_and_ring_time():
    root = parsed(Dial(number="+442071838750", action_url="https://h.test/webhooks/carrier/transfer/cll_1?dest=1&b=2",
                       ring_seconds=25))
    dial = root.find("Dial")
    assert dial is not None
    assert dial.attrib == {"action": "https://h.test/webhooks/carrier/transfer/cll_1?dest=1&b=2", "method": "POST",
                           "timeout": "25"}
    assert [(n.text or "").strip() for n in dial.iter("Number")] == ["+442071838750"]


def test_say_then_hangup_keep_their_order_and_text():
    root = parsed(Say("Sorry, nobody could take the call <now> & then"), Hangup())
    assert [child.tag for child in root] == ["Say", "Hangup"]
    assert root[0].text == "Sorry, nobody could take the call <now> & then"


def test_an_empty_answer_is_an_empty_response():
    assert list(parsed()) == []


# -- the REST API's call records (reconciliation) ------------------------------------------------

@pytest.mark.parametrize("word,status", [("queued", "queued"), ("ringing", "ringing"), ("in-progress", "in_progress"),
                                         ("completed", "completed"), ("busy", "busy"), ("no-answer", "no_answer"),
                                         ("failed", "failed"), ("canceled", "canceled"), ("paused", "unknown")])
def test_a_fetched_call_record_speaks_our_words_and_an_undocumented_status_is_not_final(word, status):
    from types import SimpleNamespace

    from adapters.twilio.carrier import _carrier_call

    record = _carrier_call(SimpleNamespace(sid="CA1", status=word, duration="7", answered_by="machine_end_beep"))
    assert (record.status, record.duration_seconds, record.answered_by) == (status, 7, "machine_end_beep")
