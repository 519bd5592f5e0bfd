"""The instructions the inbound use cases give the carrier, as the TwiML documents Twilio reads
(attribute names and values from its documentation: the fake carrier reads the same ones)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from adapters.twilio.twiml import render
from application.calling.instructions import Dial, Gather, Hangup, Record, Say


def verbs(*instructions) -> list[ET.Element]:
    root = ET.fromstring(render(*instructions))
    assert root.tag == "Response"
    return list(root)


def test_the_keypad_menu_asks_for_one_key_and_posts_even_no_key():
    (gather,) = verbs(Gather(prompt="Press 2 for sales.", action_url="https://cw.example/webhooks/carrier/keypad/c1"))
    assert (gather.tag, gather.attrib) == ("Gather", {
        "input": "dtmf", "numDigits": "1", "timeout": "5", "action": "https://cw.example/webhooks/carrier/keypad/c1",
        "method": "POST", "actionOnEmptyResult": "true"})
    assert [(child.tag, child.text) for child in gather] == [("Say", "Press 2 for sales.")]


def test_a_voicemail_is_recorded_after_a_beep_and_transcribed_then_the_call_hangs_up():
    say, record, hangup = verbs(Say("Please leave a message after the tone."),
                                Record(action_url="https://cw.example/v", transcript_url="https://cw.example/t"),
                                Hangup())
    assert (say.tag, record.tag, hangup.tag) == ("Say", "Record", "Hangup")
    assert record.attrib == {"action": "https://cw.example/v", "method": "POST", "maxLength": "120",
                             "playBeep": "true", "transcribe": "true", "transcribeCallback": "https://cw.example/t"}


def test_a_dial_records_the_bridge_only_when_asked():
    (plain,) = verbs(Dial(number="+14155550123", action_url="https://cw.example/d"))
    assert "record" not in plain.attrib and [n.text for n in plain] == ["+14155550123"]
    (recorded,) = verbs(Dial(number="+14155550123", action_url="https://cw.example/d",
                             recording_url="https://cw.example/r"))
    assert (recorded.get("record"), recorded.get("recordingStatusCallback"),
            recorded.get("recordingStatusCallbackEvent")) == ("record-from-answer-dual", "https://cw.example/r",
                                                               "completed")
