"""Carrier callbacks and voice sockets (SPEC.md Carrier callbacks; issue 5 items 2-4) driven by hand,
frame by frame, against the fake carrier's REST API: signatures, the answering-machine rule,
final statuses, the relay and stream protocols, and the single-use socket tokens."""

from __future__ import annotations

import base64
import json
import time
from decimal import Decimal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode
from xml.etree import ElementTree

import pytest
from twilio.request_validator import RequestValidator

from adapters.scripted.brain import ScriptedSession
from adapters.speech.loopback import SILENCE, UtteranceDecoder, encode_utterance
from application.calling.live import live_duration
from domain.calls.call import Call
from tests.fakes.twilio.rest import FakeAccount
from tests.support.call_requests import LONDON, call_body
from tests.support.setup import Account, carrier_tenant
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

NUMBERS = [("+14155550100", "Front desk")]
OTHER_NUMBERS = [("+14155550199", "Elsewhere")]


APP_SETTINGS = {"voice_profiles": {"alpha_31": {"transport": "stream"}}}  # alpha_31 streams audio


@pytest.fixture(scope="module")
def acme(client, container, fake):
    return carrier_tenant(client, container, fake, NUMBERS)


@pytest.fixture(scope="module")
def other(client, container, fake):
    return carrier_tenant(client, container, fake, OTHER_NUMBERS)


def dialed_call(client, container, fake, tenant: Account, **body: Any) -> tuple[str, str]:
    """Create a live call and wait for the runner to dial it: (call id, carrier sid)."""
    body.setdefault("voice_engine", "alpha_25")  # the relay profile (no A/B choice here)
    created = client.post("/v1/calls", json=call_body(mode="live", **body), headers=tenant.headers)
    assert created.status_code == 201, created.text
    call_id = created.json()["call_id"]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        call = container.calling.find(Call, Call.create_id(call_id))
        if call.carrier_sid:
            return call_id, call.carrier_sid
        time.sleep(0.02)
    raise AssertionError("the call was not dialed")


def signed(client, container, path: str, params: dict[str, str], token: str, method: str = "POST") -> Any:
    url = container.settings.base_url + path
    signature = RequestValidator(token).compute_signature(url, params if method == "POST" else {})
    headers = {"X-Twilio-Signature": signature}
    if method == "GET":
        return client.get(path, headers=headers)
    return client.post(path, data=params, headers=headers)


def form(account: FakeAccount, sid: str, **extra: str) -> dict[str, str]:
    return {"CallSid": sid, "AccountSid": account.sid, "From": NUMBERS[0][0], "To": LONDON,
            "ApiVersion": "2010-04-01", "Direction": "outbound-api", **extra}


def events_of(container, call_id: str) -> int:
    return container.calling.find(Call, Call.create_id(call_id)).version


def socket_of(twiml: str) -> tuple[str, str, str]:
    """(verb, socket path, token) from a TwiML answer."""
    root = ElementTree.fromstring(twiml)
    connect = root.find("Connect")
    assert connect is not None, twiml
    verb = connect[0]
    token = {p.get("name"): p.get("value") for p in verb.findall("Parameter")}["token"]
    url = verb.get("url") or ""
    return verb.tag, url[url.index("/webhooks"):], token


def test_dialing_sends_the_callbacks_and_detection_to_the_carrier(client, container, fake, acme):
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    create = [r for r in fake.requests_to("/Calls.json", "POST") if r.account_sid == account.sid][-1].form
    base = container.settings.base_url + "/webhooks/carrier"
    assert create["To"] == [LONDON] and create["From"] == [NUMBERS[0][0]]
    assert create["Url"] == [f"{base}/twiml/{call_id}"]
    assert create["StatusCallback"] == [f"{base}/status/{call_id}"]
    assert sorted(create["StatusCallbackEvent"]) == ["answered", "completed", "initiated", "ringing"]
    assert create["MachineDetection"] == ["DetectMessageEnd"] and create["AsyncAmd"] == ["true"]
    assert create["AsyncAmdStatusCallback"] == [f"{base}/status/{call_id}"]
    assert create["RecordingStatusCallback"] == [f"{base}/recording/{call_id}"]
    record = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()
    assert record["status"] == "in_progress"


@pytest.mark.parametrize("route", ["twiml", "status", "recording", "transfer"])
def test_unsigned_wrongly_signed_or_foreign_callbacks_get_403_and_change_nothing(client, container, fake, acme,
                                                                               other, route):
    tenant, account = acme
    _, other_account = other
    call_id, sid = dialed_call(client, container, fake, tenant)
    before = events_of(container, call_id)
    path = f"/webhooks/carrier/{route}/{call_id}"
    params = form(account, sid, CallStatus="busy", AnsweredBy="machine_start", RecordingUrl="https://x/y",
                  RecordingStatus="completed", DialCallStatus="completed")
    attempts = [
        client.post(path, data=params),  # no signature
        client.post(path, data=params, headers={"X-Twilio-Signature": "bm90IGEgc2lnbmF0dXJl"}),
        signed(client, container, path, params, other_account.auth_token),  # another tenant's token
        signed(client, container, path, {**params, "AccountSid": other_account.sid}, account.auth_token),
        client.post(path, data=params, headers={"X-Twilio-Signature": RequestValidator(account.auth_token)
                    .compute_signature(container.settings.base_url + path + "?dest=1", params)}),  # another URL
    ]
    for response in attempts:
        assert response.status_code == 403, response.text
        assert response.json()["error"]["code"] == "invalid_carrier_signature"
    assert events_of(container, call_id) == before  # nothing changed
    assert signed(client, container, path, params, account.auth_token).status_code in (200, 204)  # signed: accepted
    unknown = signed(client, container, "/webhooks/carrier/status/cll_doesnotexist", params, account.auth_token)
    assert unknown.status_code == 403


def test_a_dial_the_carrier_refuses_fails_with_the_carriers_code(client, container, fake, acme):
    tenant, account = acme
    number = account.numbers.pop()  # the carrier no longer lets this account call from it
    try:
        created = client.post("/v1/calls", json=call_body(mode="live", voice_engine="alpha_25"), headers=tenant.headers)
        assert created.status_code == 201, created.text
        record = wait_terminal(client, tenant, created.json()["call_id"])
    finally:
        account.numbers.append(number)
    assert (record["status"], record["error_code"]) == ("failed", "carrier_error_21210"), record


def test_twiml_opens_the_relay_for_the_default_profile_and_the_stream_for_a_stream_profile(client, container, fake,
                                                                                            acme):
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    answer = signed(client, container, f"/webhooks/carrier/twiml/{call_id}", form(account, sid), account.auth_token)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/xml")
    verb, path, token = socket_of(answer.text)
    assert (verb, path) == ("ConversationRelay", f"/webhooks/carrier/relay/{call_id}")
    assert token and account.auth_token not in answer.text
    query = urlencode(form(account, sid))
    by_get = signed(client, container, f"/webhooks/carrier/twiml/{call_id}?{query}", {}, account.auth_token,
                    method="GET")
    assert by_get.status_code == 200 and "ConversationRelay" in by_get.text

    stream_id, stream_sid = dialed_call(client, container, fake, tenant, voice_engine="alpha_31")
    answer = signed(client, container, f"/webhooks/carrier/twiml/{stream_id}", form(account, stream_sid),
                    account.auth_token)
    assert socket_of(answer.text)[:2] == ("Stream", f"/webhooks/carrier/stream/{stream_id}")


@pytest.mark.parametrize("answered_by,code", [
    ("machine_start", "machine_detected"), ("machine_end_beep", "machine_detected"),
    ("machine_end_silence", "machine_detected"), ("machine_end_other", "machine_detected"), ("fax", "fax_detected"),
])
def test_a_machine_answer_abandons_the_call_and_hangs_up(client, container, fake, acme, answered_by, code):
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    path = f"/webhooks/carrier/status/{call_id}"
    assert signed(client, container, path, form(account, sid, AnsweredBy=answered_by,
                                                 MachineDetectionDuration="2400"), account.auth_token).status_code == 204
    record = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()
    assert (record["status"], record["error_code"], record["transcript"]) == ("failed", code, "")
    assert fake.calls[sid].get("status") == "completed"  # hung up over REST
    for late in ({"CallStatus": "completed", "CallDuration": "9"}, {"AnsweredBy": "human"}):
        assert signed(client, container, path, form(account, sid, **late), account.auth_token).status_code == 204
    again = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()
    assert (again["status"], again["error_code"]) == ("failed", code)


@pytest.mark.parametrize("status,code", [("busy", "busy"), ("no-answer", "no_answer"), ("failed", "carrier_failed"),
                                         ("canceled", "carrier_canceled")])
def test_final_carrier_statuses_fail_the_call_with_distinct_codes(client, container, fake, acme, status, code):
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    path = f"/webhooks/carrier/status/{call_id}"
    for progress in ("initiated", "ringing", "ringing"):
        signed(client, container, path, form(account, sid, CallStatus=progress), account.auth_token)
    signed(client, container, path, form(account, sid, CallStatus=status, CallDuration="0"), account.auth_token)
    signed(client, container, path, form(account, sid, CallStatus="completed", CallDuration="30"), account.auth_token)
    record = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()
    assert (record["status"], record["error_code"]) == ("failed", code)


def test_recording_url_is_stored_as_the_mp3_url(client, container, fake, acme):
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    url = f"https://api.twilio.com/2010-04-01/Accounts/{account.sid}/Recordings/RE{'a' * 32}"
    response = signed(client, container, f"/webhooks/carrier/recording/{call_id}",
                      form(account, sid, RecordingSid="RE" + "a" * 32, RecordingUrl=url, RecordingStatus="completed",
                           RecordingDuration="12"), account.auth_token)
    assert response.status_code == 204
    assert container.calling.find(Call, Call.create_id(call_id)).recording_url == url + ".mp3"


@pytest.mark.parametrize(("where", "kept"), [("carrier", True), ("elsewhere", False)])
def test_a_recording_on_the_carriers_configured_server_is_kept_on_plain_http(client, container, fake, acme, where, kept):
    """The carrier's API server (CALLWRIGHT_TWILIO_API_BASE_URL: here the fake, on plain http) holds
    its media: those recordings were lost; any other plain http URL is still refused."""
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    base = fake.base_url if where == "carrier" else "http://127.0.0.2:9"
    url = f"{base}/2010-04-01/Accounts/{account.sid}/Recordings/RE{'b' * 32}"
    response = signed(client, container, f"/webhooks/carrier/recording/{call_id}",
                      form(account, sid, RecordingSid="RE" + "b" * 32, RecordingUrl=url, RecordingStatus="completed",
                           RecordingDuration="12"), account.auth_token)
    assert response.status_code == 204
    stored = container.calling.find(Call, Call.create_id(call_id)).recording_url
    assert stored == (url + ".mp3" if kept else None)


def twiml_token(client, container, account, call_id: str, sid: str) -> str:
    answer = signed(client, container, f"/webhooks/carrier/twiml/{call_id}", form(account, sid), account.auth_token)
    return socket_of(answer.text)[2]


def human(client, container, account, call_id: str, sid: str) -> None:
    assert signed(client, container, f"/webhooks/carrier/status/{call_id}",
                  form(account, sid, AnsweredBy="human"), account.auth_token).status_code == 204


@contextmanager
def answered_relay(client, container, account, call_id: str, sid: str) -> Iterator[Any]:
    """The relay socket of a dialled call a human answered, its setup sent with the call's token."""
    token = twiml_token(client, container, account, call_id, sid)
    human(client, container, account, call_id, sid)
    with client.websocket_connect(f"/webhooks/carrier/relay/{call_id}") as ws:
        ws.send_text(json.dumps({"type": "setup", "callSid": sid, "accountSid": account.sid,
                                 "customParameters": {"token": token}}))
        yield ws


def relay_messages(ws) -> list[dict[str, Any]]:
    """Server messages up to and including the end of one agent turn."""
    got = []
    while True:
        message = json.loads(ws.receive_text())
        got.append(message)
        if message["type"] == "end" or (message["type"] == "text" and message.get("last")):
            if message["type"] == "text":
                return got
            return got


def test_relay_conversation_reaches_a_typed_outcome(client, container, fake, acme):
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    with answered_relay(client, container, account, call_id, sid) as ws:
        first = relay_messages(ws)
        assert "confirmed" in first[-1]["token"]
        ws.send_text(json.dumps({"type": "dtmf", "digit": "5"}))
        ws.send_text(json.dumps({"type": "interrupt", "utteranceUntilInterrupt": "Hello", "durationUntilInterruptMs": 300}))
        ws.send_text(json.dumps({"type": "prompt", "voicePrompt": "Yes, ", "last": False}))
        ws.send_text(json.dumps({"type": "prompt", "voicePrompt": "it is.", "last": True}))
        closing = relay_messages(ws)
        assert closing[-1]["type"] == "text"
        assert json.loads(ws.receive_text())["type"] == "end"
    signed(client, container, f"/webhooks/carrier/status/{call_id}",
           form(account, sid, CallStatus="completed", CallDuration="14"), account.auth_token)
    record = wait_terminal(client, tenant, call_id)
    assert (record["status"], record["outcome"]) == ("completed", {"confirmed": True}), record
    assert "callee: Yes, it is." in record["transcript"]
    assert "callee: [keypad: *]" in record["transcript"] and "5" not in record["transcript"].split("keypad")[1][:5]
    assert record["duration_seconds"] >= 1 and record["cost_voice"] != "0.0000"


def wait_terminal(client, tenant, call_id: str, timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        record = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()
        if record["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return record
        time.sleep(0.05)


def refused(ws) -> list[str]:
    """Messages received before the server closed the socket (there must be none)."""
    received = []
    try:
        while True:
            received.append(ws.receive_text())
    except Exception:  # the close
        return received


@pytest.mark.parametrize("case", ["none", "wrong", "other_call", "reused", "expired_shape"])
def test_a_socket_without_its_calls_valid_unused_token_is_closed_with_nothing_forwarded(client, container, fake,
                                                                                        acme, case):
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    token = twiml_token(client, container, account, call_id, sid)
    other_id, other_sid = dialed_call(client, container, fake, tenant)
    other_token = twiml_token(client, container, account, other_id, other_sid)
    human(client, container, account, call_id, sid)
    presented = {"none": None, "wrong": token[:-2] + "xx", "other_call": other_token, "reused": token,
                 "expired_shape": "a.1.b"}[case]
    if case == "reused":
        with client.websocket_connect(f"/webhooks/carrier/relay/{call_id}") as ws:
            ws.send_text(json.dumps({"type": "setup", "customParameters": {"token": token}}))
            assert relay_messages(ws)  # the first use works
    before = events_of(container, call_id)
    with client.websocket_connect(f"/webhooks/carrier/relay/{call_id}") as ws:
        ws.send_text(json.dumps({"type": "setup", "customParameters": {} if presented is None else {"token": presented}}))
        ws.send_text(json.dumps({"type": "prompt", "voicePrompt": "hello", "last": True}))
        assert refused(ws) == []
    assert events_of(container, call_id) == before or case == "reused"
    call = container.calling.find(Call, Call.create_id(call_id))
    assert [t for t in call.turns if t["speaker"] == "callee"] == []


def stream_say(ws, text: str) -> None:
    for frame in [*encode_utterance(text), *[SILENCE] * 6]:
        ws.send_text(json.dumps({"event": "media", "streamSid": "MZ1",
                                 "media": {"track": "inbound", "payload": base64.b64encode(frame).decode()}}))


def stream_turn(ws) -> tuple[str, int]:
    """The agent's next utterance (frames until its mark, which is echoed) and its frame count."""
    decoder = UtteranceDecoder()
    frames = 0
    while True:
        message = json.loads(ws.receive_text())
        if message["event"] == "media":
            frames += 1
            decoder.feed(base64.b64decode(message["media"]["payload"]))
        elif message["event"] == "mark":
            ws.send_text(json.dumps({"event": "mark", "streamSid": "MZ1", "mark": message["mark"]}))
            return decoder.flush() or "", frames


def test_media_stream_conversation_reaches_a_typed_outcome(client, container, fake, acme):
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant, voice_engine="alpha_31")
    token = twiml_token(client, container, account, call_id, sid)
    human(client, container, account, call_id, sid)
    with client.websocket_connect(f"/webhooks/carrier/stream/{call_id}") as ws:
        ws.send_text(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
        ws.send_text(json.dumps({"event": "start", "streamSid": "MZ1", "start": {
            "streamSid": "MZ1", "callSid": sid, "accountSid": account.sid, "customParameters": {"token": token},
            "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}}))
        decoder, frames = UtteranceDecoder(), 0
        while True:  # the first turn: its audio, then its mark, which is not echoed yet (still playing)
            message = json.loads(ws.receive_text())
            if message["event"] == "mark":
                break
            frames += 1
            decoder.feed(base64.b64decode(message["media"]["payload"]))
        assert "confirmed" in (decoder.flush() or "") and frames >= 1
        stream_say(ws, "No, it is not.")  # the callee talks over the agent: barge-in
        assert json.loads(ws.receive_text()) == {"event": "clear", "streamSid": "MZ1"}
        closing, _ = stream_turn(ws)
        assert "Goodbye" in closing
    record = wait_terminal(client, tenant, call_id)
    assert (record["status"], record["outcome"]) == ("completed", {"confirmed": False}), record
    assert record["voice_engine"] == "alpha_31"


def test_a_machine_verdict_while_the_socket_waits_sends_no_audio(client, container, fake, acme):
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant, voice_engine="alpha_31")
    token = twiml_token(client, container, account, call_id, sid)
    with client.websocket_connect(f"/webhooks/carrier/stream/{call_id}") as ws:
        ws.send_text(json.dumps({"event": "start", "streamSid": "MZ2", "start": {"customParameters": {"token": token}}}))
        stream_say(ws, "Hi, you have reached the voicemail of")
        time.sleep(0.3)  # the socket waits for the verdict meanwhile
        signed(client, container, f"/webhooks/carrier/status/{call_id}",
               form(account, sid, AnsweredBy="machine_end_beep"), account.auth_token)
        assert refused(ws) == []
    record = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()
    assert (record["status"], record["error_code"]) == ("failed", "machine_detected")


def test_a_live_conversations_agent_tokens_are_recorded_and_priced_in_its_voice_cost(client, container, fake, acme,
                                                                                     monkeypatch):
    """The voice session reports the agent's token usage when it closes (issue 14 item 2)."""
    spent = {"input_tokens": 20_000, "output_tokens": 2_000}
    monkeypatch.setattr(ScriptedSession, "usage", property(lambda self: dict(spent)))
    tenant, account = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    with answered_relay(client, container, account, call_id, sid) as ws:
        relay_messages(ws)
        ws.send_text(json.dumps({"type": "prompt", "voicePrompt": "Yes, it is.", "last": True}))
        relay_messages(ws)
        assert json.loads(ws.receive_text())["type"] == "end"
    signed(client, container, f"/webhooks/carrier/status/{call_id}",
           form(account, sid, CallStatus="completed", CallDuration="30"), account.auth_token)
    record = wait_terminal(client, tenant, call_id)
    call = container.calling.find(Call, Call.create_id(call_id))
    prices = container.calling.ports.prices
    assert call.agent_usage == spent
    # The minutes are the carrier's 30 s when its report lands before the call settles, else the
    # voice session's own length (a race this test does not decide): the tokens are added either way.
    assert call.duration_seconds in (30, live_duration(call))
    assert Decimal(record["cost_voice"]) == (prices.voice(call.voice_engine, call.duration_seconds, simulated=False)
                                             + prices.tokens(spent))
    assert Decimal(record["cost_total"]) == Decimal(record["cost_voice"]) + Decimal(record["cost_extraction"])
