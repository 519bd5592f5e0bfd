"""The fake carrier's call simulator (issue 5 item 8) drives a server exactly as Twilio would: signed
callbacks in Twilio's order, the TwiML socket with a scripted callee, AMD, transfers, ``<Gather>``,
``<Record>`` with its transcription, REST-started recordings and the calls list.

The server here is a stub of our own on loopback: ``http.server`` for the callbacks, a
``websockets`` server for the socket, and a tiny agent that speaks first and ends after two turns.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs
from xml.sax.saxutils import quoteattr

import pytest
from twilio.base.exceptions import TwilioRestException
from twilio.request_validator import RequestValidator
from twilio.rest import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

from adapters.speech.loopback import END_OF_UTTERANCE_FRAMES, SILENCE, UtteranceDecoder, encode_utterance
from adapters.twilio.carrier import RebasedHttpClient
from tests.fakes.twilio import FakeTwilio, HangUp, Press, Say, Scenario, Silence
from tests.fakes.twilio.fixture import fake_twilio  # noqa: F401 - fixture
from tests.fakes.twilio.simulator import keys_entered

CALLER = "+14155550100"
EVENTS = ["initiated", "ringing", "answered", "completed"]
# TwiML the stub answers with, by path (relative URLs resolve against the document's URL).
DOCUMENTS = {
    "/gather/press": ('<Response><Gather action="/gather-action"><Say>Enter your code, then hash</Say></Gather>'
                      "<Say>Nothing entered</Say></Response>"),
    "/gather/empty-action": ('<Response><Gather actionOnEmptyResult="true" timeout="3"><Say>Anything?</Say>'
                             "</Gather><Say>Nothing entered</Say></Response>"),  # no action: posts to itself
    "/gather/empty": ('<Response><Gather action="/gather-action" numDigits="1"><Say>Anything?</Say></Gather>'
                      "<Say>Nothing entered</Say></Response>"),
    "/voicemail": ('<Response><Say>Leave a message</Say><Record action="/record-action" maxLength="60" '
                   'transcribeCallback="/transcription" recordingStatusCallback="/recording"/>'
                   "<Say>Unreachable</Say></Response>"),
    "/voicemail/silent": ('<Response><Record action="/record-action" playBeep="false"/>'
                          "<Say>No message, goodbye</Say></Response>"),
    "/record-action": "<Response><Say>Message kept</Say><Hangup/></Response>",
    "/hold": '<Response><Pause length="2"/></Response>',
    "/hangup": "<Response><Hangup/></Response>",
}


@dataclass
class Hit:
    path: str
    params: dict[str, str]
    signed: bool


@dataclass
class StubServer:
    """The server under test, reduced to what the carrier sees of it."""

    auth_token: str
    hits: list[Hit] = field(default_factory=list)
    sockets: list[dict[str, Any]] = field(default_factory=list)  # per socket: path, signed, messages, frames_sent
    client: Client | None = None  # to hang up machines, as the real server does
    http_port: int = 0
    ws_port: int = 0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.http_port}{path}"

    def hits_to(self, path: str) -> list[Hit]:
        return [h for h in self.hits if h.path == path]

    def answer(self, path: str, params: dict[str, str]) -> tuple[int, str]:
        if path in ("/twiml/relay", "/twiml/stream"):
            kind = path.rsplit("/", 1)[1]
            tag = "ConversationRelay" if kind == "relay" else "Stream"
            socket = quoteattr(f"ws://127.0.0.1:{self.ws_port}/{kind}")
            return 200, (f'<Response><Connect action="{self.url("/connect-action")}">'
                         f'<{tag} url={socket}><Parameter name="token" value="tok-{kind}"/></{tag}>'
                         "</Connect></Response>")
        if path == "/transfer":
            return 200, ('<Response><Dial action="/dial-action" timeout="20"><Number>+14155550201</Number></Dial>'
                         "</Response>")
        if path == "/dial-action" and params["DialCallStatus"] != "completed":
            return 200, '<Response><Dial action="/dial-action"><Number>+14155550202</Number></Dial></Response>'
        if path in ("/dial-action", "/connect-action"):
            return 200, "<Response><Hangup/></Response>"
        if path == "/amd" and params["AnsweredBy"].startswith("machine") and self.client is not None:
            self.client.calls(params["CallSid"]).update(status="completed")  # abandoned: no message left
        if path == "/broken":
            return 503, ""
        if path.startswith("/gather") and "Digits" in params:
            return 200, f'<Response><Say>You entered {params["Digits"] or "nothing"}</Say><Hangup/></Response>'
        if path in DOCUMENTS:
            return 200, DOCUMENTS[path]
        return 204, ""

    def relay_agent(self, connection: ServerConnection, socket: dict[str, Any]) -> None:
        prompts = 0
        for raw in connection:
            message = json.loads(raw)
            socket["messages"].append(message)
            if message["type"] == "setup":
                connection.send(json.dumps({"type": "text", "token": "Hello, ", "last": False}))
                connection.send(json.dumps({"type": "text", "token": "how can I help?", "last": True}))
            elif message["type"] == "prompt":
                prompts += 1
                if prompts == 1:
                    connection.send(json.dumps({"type": "sendDigits", "digits": "1"}))
                    connection.send(json.dumps({"type": "text", "token": f"You said {message['voicePrompt']}",
                                                "last": True}))
                else:
                    connection.send(json.dumps({"type": "end", "handoffData": json.dumps({"reason": "done"})}))
            elif message["type"] == "dtmf":
                connection.send(json.dumps({"type": "text", "token": f"Pressed {message['digit']}", "last": True}))

    def stream_agent(self, connection: ServerConnection, socket: dict[str, Any]) -> None:
        decoder, stream_sid, heard = UtteranceDecoder(), "", 0

        def speak(text: str, mark: str) -> None:
            for frame in encode_utterance(text) + [SILENCE] * END_OF_UTTERANCE_FRAMES:
                connection.send(json.dumps({"event": "media", "streamSid": stream_sid,
                                            "media": {"payload": base64.b64encode(frame).decode()}}))
                socket["frames_sent"] += 1
            connection.send(json.dumps({"event": "mark", "streamSid": stream_sid, "mark": {"name": mark}}))

        for raw in connection:
            message = json.loads(raw)
            if message["event"] != "media":
                socket["messages"].append(message)
            if message["event"] == "start":
                stream_sid = message["streamSid"]
                speak("Hello from the stream agent", "greeting")
            elif message["event"] == "media":
                said = decoder.feed(base64.b64decode(message["media"]["payload"]))
                if said is not None:
                    heard += 1
                    socket["heard"].append(said)
                    speak(f"I heard {said}", f"reply-{heard}")

    def serve_socket(self, connection: ServerConnection) -> None:
        path = connection.request.path
        signature = connection.request.headers.get("X-Twilio-Signature", "")
        url = f"ws://127.0.0.1:{self.ws_port}{path}"
        socket = {"path": path, "signed": RequestValidator(self.auth_token).validate(url, {}, signature),
                  "messages": [], "frames_sent": 0, "heard": []}
        self.sockets.append(socket)
        try:
            (self.relay_agent if path == "/relay" else self.stream_agent)(connection, socket)
        except ConnectionClosed:
            pass


@pytest.fixture
def account(fake_twilio: FakeTwilio):  # noqa: F811 - fixture
    return fake_twilio.add_account(numbers=[(CALLER, "Main")])


@pytest.fixture
def stub(account) -> Iterator[StubServer]:
    server = StubServer(auth_token=account.auth_token)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length") or 0)
            params = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode(), keep_blank_values=True).items()}
            signed = RequestValidator(server.auth_token).validate(
                server.url(self.path), params, self.headers.get("X-Twilio-Signature", ""))
            server.hits.append(Hit(self.path, params, signed))
            status, body = server.answer(self.path, params)
            self.send_response(status)
            self.send_header("Content-Type", "text/xml")
            self.send_header("Content-Length", str(len(body.encode())))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *_: Any) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    http.daemon_threads = True
    server.http_port = http.server_address[1]
    sockets = serve(server.serve_socket, "127.0.0.1", 0, compression=None)
    server.ws_port = sockets.socket.getsockname()[1]
    for target in (lambda: http.serve_forever(poll_interval=0.05), sockets.serve_forever):
        threading.Thread(target=target, daemon=True).start()
    try:
        yield server
    finally:
        sockets.shutdown()
        http.shutdown()
        http.server_close()


def sdk(fake: FakeTwilio, account) -> Client:
    return Client(account.sid, account.auth_token, http_client=RebasedHttpClient(fake.base_url, timeout=5),
                  environment={})


def dial(client: Client, stub: StubServer, to: str, twiml: str = "/twiml/relay", **extra: Any) -> str:
    return client.calls.create(to=to, from_=CALLER, url=stub.url(twiml), method="POST",
                               status_callback=stub.url("/status"), status_callback_method="POST",
                               status_callback_event=EVENTS, timeout=20, **extra).sid


def test_a_relay_call_runs_in_twilios_order_with_signed_callbacks_and_alternating_turns(fake_twilio, account, stub):
    fake_twilio.script("+14155550111", Scenario(turns=[Say("I need an appointment"), Say("Thanks, bye")]))
    client = sdk(fake_twilio, account)
    stub.client = client
    sid = dial(client, stub, "+14155550111", machine_detection="DetectMessageEnd", async_amd="true",
               async_amd_status_callback=stub.url("/amd"), async_amd_status_callback_method="POST",
               record=True, recording_status_callback=stub.url("/recording"),
               recording_status_callback_event=["completed"])
    record = fake_twilio.wait_finished(sid, timeout=5)

    assert all(hit.signed for hit in stub.hits) and all(s["signed"] for s in stub.sockets)
    assert record.statuses() == ["initiated", "ringing", "in-progress", "completed"]
    kinds = [c.kind for c in record.callbacks]
    assert kinds[:4] == ["status", "status", "status", "twiml"] and kinds[-2:] == ["status", "recording"]
    assert kinds.index("twiml") < kinds.index("amd") < len(kinds) - 2  # asynchronous AMD: during the conversation
    assert kinds.index("twiml") < kinds.index("action") < len(kinds) - 2
    assert [c.params["SequenceNumber"] for c in record.callbacks_of("status")] == ["0", "1", "2", "3"]
    assert int(record.callbacks_of("status")[-1].params["CallDuration"]) >= 1
    assert stub.hits_to("/amd")[0].params["AnsweredBy"] == "human"
    assert stub.hits_to("/connect-action")[0].params["HandoffData"] == '{"reason": "done"}'

    (socket,) = stub.sockets
    assert socket["messages"][0]["customParameters"] == {"token": "tok-relay"}
    assert [m["voicePrompt"] for m in socket["messages"][1:]] == ["I need an appointment", "Thanks, bye"]
    assert record.transcript == [("agent", "Hello, how can I help?"), ("callee", "I need an appointment"),
                                 ("agent", "You said I need an appointment"), ("callee", "Thanks, bye")]
    assert record.digits == ["1"] and record.received[-1]["type"] == "end"

    recording = stub.hits_to("/recording")[0].params
    assert recording["RecordingSid"] == record.recording_sid and recording["RecordingSid"].startswith("RE")
    assert recording["RecordingUrl"].endswith(f"/Accounts/{account.sid}/Recordings/{record.recording_sid}")
    fetched = client.calls(sid).fetch()
    assert (fetched.status, fetched.answered_by, fetched.duration) == ("completed", "human", str(record.duration))


def test_a_stream_call_speaks_frames_echoes_marks_and_decodes_the_agent(fake_twilio, account, stub):
    fake_twilio.script("+14155550112", Scenario(turns=[Say("Is that the dentist?"), Say("See you")]))
    sid = dial(sdk(fake_twilio, account), stub, "+14155550112", twiml="/twiml/stream")
    record = fake_twilio.wait_finished(sid, timeout=5)

    (socket,) = stub.sockets
    events = [m["event"] for m in socket["messages"]]
    assert events[:2] == ["connected", "start"] and events[-1] == "stop"
    assert socket["messages"][1]["start"]["customParameters"] == {"token": "tok-stream"}
    assert [m["mark"]["name"] for m in socket["messages"] if m["event"] == "mark"] == ["greeting", "reply-1", "reply-2"]
    assert socket["heard"] == ["Is that the dentist?", "See you"]
    assert record.media_frames == socket["frames_sent"]
    assert record.agent_said == ["Hello from the stream agent", "I heard Is that the dentist?", "I heard See you"]
    assert [who for who, _ in record.transcript] == ["agent", "callee", "agent", "callee", "agent"]
    assert record.statuses()[-1] == "completed" and not stub.hits_to("/connect-action")  # the callee hung up


@pytest.mark.parametrize(("result", "statuses"), [("busy", ["initiated", "ringing", "busy"]),
                                                  ("no-answer", ["initiated", "ringing", "no-answer"]),
                                                  ("failed", ["initiated", "failed"])])
def test_an_unanswered_call_posts_its_final_status_and_never_fetches_twiml(fake_twilio, account, stub, result,
                                                                           statuses):
    fake_twilio.script("+14155550113", Scenario(result=result))
    sid = dial(sdk(fake_twilio, account), stub, "+14155550113")
    record = fake_twilio.wait_finished(sid, timeout=5)
    assert record.statuses() == statuses
    assert record.callbacks_of("status")[-1].params["CallDuration"] == "0"
    assert not record.twiml and not stub.hits_to("/twiml/relay") and not stub.sockets
    assert fake_twilio.calls[sid]["status"] == result


def test_a_machine_verdict_is_posted_and_the_server_hangs_up(fake_twilio, account, stub):
    """SPEC, answering-machine rule: a machine verdict abandons the call."""
    fake_twilio.script("+14155550114", Scenario(answered_by="machine_end_beep", turns=[Silence(5)]))
    client = sdk(fake_twilio, account)
    stub.client = client
    sid = dial(client, stub, "+14155550114", machine_detection="DetectMessageEnd", async_amd="true",
               async_amd_status_callback=stub.url("/amd"))
    record = fake_twilio.wait_finished(sid, timeout=5)
    assert stub.hits_to("/amd")[0].params["AnsweredBy"] == "machine_end_beep"
    assert record.statuses()[-1] == "completed" and not stub.hits_to("/connect-action")
    assert client.calls(sid).fetch().answered_by == "machine_end_beep"


def test_a_redirect_closes_the_socket_and_dials_until_a_transfer_completes(fake_twilio, account, stub):
    first, second = "+14155550201", "+14155550202"
    fake_twilio.script("+14155550115", Scenario(turns=[Say("Put me through"), Silence(5)],
                                                transfer_results={first: "no-answer"}))
    client = sdk(fake_twilio, account)
    sid = dial(client, stub, "+14155550115")
    record = fake_twilio.wait_for_call("+14155550115")
    deadline = time.monotonic() + 5
    while len(record.agent_said) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    client.calls(sid).update(url=stub.url("/transfer"), method="POST")
    fake_twilio.wait_finished(sid, timeout=5)

    assert record.dialled == [first, second]
    assert [h.params["DialCallStatus"] for h in stub.hits_to("/dial-action")] == ["no-answer", "completed"]
    assert all(hit.signed for hit in stub.hits)
    assert not stub.hits_to("/connect-action")  # a redirect does not end <Connect> through its action
    assert [c.kind for c in record.callbacks][-4:] == ["redirect", "dial-action", "dial-action", "status"]
    assert record.statuses()[-1] == "completed" and fake_twilio.dials_to("+14155550115") == 1


def test_an_inbound_call_and_failing_callbacks_do_not_stop_the_script(fake_twilio, account, stub):
    sid = fake_twilio.place_inbound(account, to=CALLER, from_="+14155550116", voice_url=stub.url("/twiml/relay"),
                                    scenario=Scenario(turns=[Say("Hi"), Press("42")]),
                                    status_callback=stub.url("/broken"))
    record = fake_twilio.wait_finished(sid, timeout=5)
    inbound = stub.hits_to("/twiml/relay")[0].params
    assert (inbound["Direction"], inbound["CallStatus"], inbound["To"]) == ("inbound", "ringing", CALLER)
    assert [(c.kind, c.status) for c in record.callbacks][-1] == ("status", 503) and record.status == "completed"
    assert [m.get("digit") for m in stub.sockets[0]["messages"] if m["type"] == "dtmf"] == ["4", "2"]
    assert not record.callbacks_of("amd")


def test_the_sdk_lists_calls_by_number_status_and_start_date(fake_twilio, account, stub):
    fake_twilio.script("+14155550117", Scenario(result="busy"))
    fake_twilio.script("+14155550118", Scenario(result="no-answer"))
    client = sdk(fake_twilio, account)
    sids = [dial(client, stub, to) for to in ("+14155550117", "+14155550118", "+14155550117")]
    for sid in sids:
        fake_twilio.wait_finished(sid, timeout=5)
    today = datetime.now(timezone.utc).date()

    listed = client.calls.list(to="+14155550117", from_=CALLER, start_time_after=today)
    assert [c.sid for c in listed] == [sids[2], sids[0]]  # newest first
    assert [c.sid for c in client.calls.list(status="no-answer")] == [sids[1]]
    assert client.calls.list(to="+14155550117", start_time_before=today - timedelta(days=1)) == []
    assert len(client.calls.list(page_size=1)) == 3  # followed next_page_uri with the filters kept
    assert fake_twilio.dials_to("+14155550117") == 2


def wait_in_progress(fake: FakeTwilio, to: str, timeout: float = 5.0) -> None:
    record = fake.wait_for_call(to)
    deadline = time.monotonic() + timeout
    while record.status != "in-progress" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert record.status == "in-progress", record.notes


def test_a_gather_posts_the_pressed_digits_to_its_action_and_runs_the_answer(fake_twilio, account, stub):
    fake_twilio.script("+14155550121", Scenario(turns=[Press("42#7")]))
    sid = dial(sdk(fake_twilio, account), stub, "+14155550121", twiml="/gather/press")
    record = fake_twilio.wait_finished(sid, timeout=5)

    (action,) = stub.hits_to("/gather-action")
    assert (action.params["Digits"], action.params["FinishedOnKey"]) == ("42", "#")  # the finishing key excluded
    assert (action.params["CallSid"], action.params["CallStatus"]) == (sid, "in-progress") and action.signed
    assert record.transcript == [("twiml-say", "Enter your code, then hash"), ("callee-dtmf", "42"),
                                 ("twiml-say", "You entered 42")]
    assert [c.kind for c in record.callbacks if c.kind != "status"] == ["twiml", "gather"]
    assert record.statuses()[-1] == "completed"


def test_an_empty_gather_with_action_on_empty_result_posts_empty_digits_to_its_own_document(fake_twilio, account,
                                                                                            stub):
    fake_twilio.script("+14155550122", Scenario(turns=[Say("Hello?")]))  # speaks, presses nothing
    sid = dial(sdk(fake_twilio, account), stub, "+14155550122", twiml="/gather/empty-action")
    record = fake_twilio.wait_finished(sid, timeout=5)

    first, again = stub.hits_to("/gather/empty-action")
    assert "Digits" not in first.params
    assert (again.params["Digits"], again.params["FinishedOnKey"]) == ("", "") and again.signed
    assert record.transcript == [("twiml-say", "Anything?"), ("twiml-say", "You entered nothing")]
    assert record.callbacks_of("gather")[0].url == stub.url("/gather/empty-action")


def test_an_empty_gather_without_action_on_empty_result_falls_through_to_the_next_verb(fake_twilio, account, stub):
    fake_twilio.script("+14155550123", Scenario(turns=[Silence(0)]))
    sid = dial(sdk(fake_twilio, account), stub, "+14155550123", twiml="/gather/empty")
    record = fake_twilio.wait_finished(sid, timeout=5)

    assert not stub.hits_to("/gather-action") and not record.callbacks_of("gather")
    assert record.transcript == [("twiml-say", "Anything?"), ("twiml-say", "Nothing entered")]
    assert record.statuses()[-1] == "completed"


@pytest.mark.parametrize(("pressed", "finish_on_key", "num_digits", "result"),
                         [("42#7", "#", 0, ("42", "#")), ("1234", "#", 2, ("12", "")), ("#", "#", 0, ("", "#")),
                          ("12#", "", 0, ("12#", "")), ("9*", "*#", 5, ("9", "*"))])
def test_gather_input_stops_at_num_digits_or_a_finishing_key(pressed, finish_on_key, num_digits, result):
    assert keys_entered(pressed, finish_on_key, num_digits) == result


def test_a_gather_whose_caller_hangs_up_ends_the_call_without_its_action(fake_twilio, account, stub):
    fake_twilio.script("+14155550124", Scenario(turns=[HangUp()]))
    sid = dial(sdk(fake_twilio, account), stub, "+14155550124", twiml="/gather/press")
    record = fake_twilio.wait_finished(sid, timeout=5)
    assert not stub.hits_to("/gather-action") and record.transcript == [("twiml-say", "Enter your code, then hash")]
    assert record.statuses()[-1] == "completed"


def test_a_voicemail_left_before_hanging_up_posts_its_action_transcription_and_recording_status(fake_twilio,
                                                                                                 account, stub):
    message = "Hi it is Ann call me back please"  # 8 words: 3 s at 2.5 words a second
    fake_twilio.script("+14155550125", Scenario(turns=[Say("Hi it is Ann"), Say("call me back please"), HangUp()]))
    sid = dial(sdk(fake_twilio, account), stub, "+14155550125", twiml="/voicemail")
    record = fake_twilio.wait_finished(sid, timeout=5)  # also waits for the transcription

    (voicemail,) = record.voicemails
    assert voicemail["sid"].startswith("RE") and (voicemail["duration"], voicemail["text"]) == (3, message)
    assert voicemail["url"] == f"https://api.twilio.com/2010-04-01/Accounts/{account.sid}/Recordings/{voicemail['sid']}"
    (action,) = stub.hits_to("/record-action")
    assert action.params["Digits"] == "hangup" and action.params["CallStatus"] == "completed"
    assert (action.params["RecordingSid"], action.params["RecordingUrl"], action.params["RecordingDuration"]) == (
        voicemail["sid"], voicemail["url"], "3")
    (transcription,) = stub.hits_to("/transcription")
    assert (transcription.params["TranscriptionText"], transcription.params["TranscriptionStatus"]) == (
        message, "completed")
    transcription_sid = transcription.params["TranscriptionSid"]
    assert transcription_sid.startswith("TR")
    assert transcription.params["TranscriptionUrl"].endswith(f"/{account.sid}/Transcriptions/{transcription_sid}")
    assert (transcription.params["RecordingSid"], transcription.params["CallSid"]) == (voicemail["sid"], sid)
    (status,) = stub.hits_to("/recording")
    assert (status.params["RecordingSid"], status.params["RecordingStatus"], status.params["RecordingSource"],
            status.params["RecordingDuration"]) == (voicemail["sid"], "completed", "RecordVerb", "3")
    assert all(hit.signed for hit in stub.hits)

    kinds = [c.kind for c in record.callbacks]
    assert kinds.index("record") < kinds.index("recording") and kinds.index("record") < kinds.index("transcription")
    assert record.transcript == [("twiml-say", "Leave a message"), ("twiml-beep", ""), ("callee", message)]
    assert record.statuses()[-1] == "completed"  # the action's answer was ignored: nothing said after


def test_a_voicemail_ended_with_a_key_runs_the_actions_answer(fake_twilio, account, stub):
    fake_twilio.script("+14155550126", Scenario(turns=[Say("Quick note"), Press("#")]))
    sid = dial(sdk(fake_twilio, account), stub, "+14155550126", twiml="/voicemail")
    record = fake_twilio.wait_finished(sid, timeout=5)

    (action,) = stub.hits_to("/record-action")
    assert (action.params["Digits"], action.params["CallStatus"], action.params["RecordingDuration"]) == (
        "#", "in-progress", "1")
    assert record.transcript[-2:] == [("callee", "Quick note"), ("twiml-say", "Message kept")]
    assert ("twiml-say", "Unreachable") not in record.transcript


def test_a_record_with_nothing_said_posts_no_action_and_goes_on_to_the_next_verb(fake_twilio, account, stub):
    fake_twilio.script("+14155550127", Scenario(turns=[]))
    sid = dial(sdk(fake_twilio, account), stub, "+14155550127", twiml="/voicemail/silent")
    record = fake_twilio.wait_finished(sid, timeout=5)

    assert not stub.hits_to("/record-action") and not record.callbacks_of("record") and not record.voicemails
    assert record.transcript == [("twiml-say", "No message, goodbye")]  # playBeep="false": no beep
    assert record.statuses()[-1] == "completed"


def test_a_recording_started_through_the_sdk_is_posted_when_the_call_ends(fake_twilio, account, stub):
    fake_twilio.script("+14155550128", Scenario(realtime=True))  # <Pause length="2"> in wall-clock time
    client = sdk(fake_twilio, account)
    sid = dial(client, stub, "+14155550128", twiml="/hold")
    wait_in_progress(fake_twilio, "+14155550128")

    recording = client.calls(sid).recordings.create(recording_status_callback=stub.url("/api-recording"),
                                                    recording_status_callback_event=["completed"])
    assert recording.sid.startswith("RE") and (recording.call_sid, recording.account_sid) == (sid, account.sid)
    assert (recording.status, recording.source, recording.channels) == ("in-progress", "StartCallRecordingAPI", 1)
    assert recording.uri == f"/2010-04-01/Accounts/{account.sid}/Calls/{sid}/Recordings/{recording.sid}.json"
    assert recording.date_created is not None and not stub.hits_to("/api-recording")  # not before the call ends

    record = fake_twilio.wait_finished(sid, timeout=5)
    (hit,) = stub.hits_to("/api-recording")
    assert hit.signed and (hit.params["RecordingSid"], hit.params["CallSid"]) == (recording.sid, sid)
    assert (hit.params["RecordingStatus"], hit.params["RecordingSource"], hit.params["RecordingChannels"]) == (
        "completed", "StartCallRecordingAPI", "1")
    assert int(hit.params["RecordingDuration"]) >= 1
    assert hit.params["RecordingUrl"] == record.recording_url and record.recording_sid == recording.sid
    assert [c.kind for c in record.callbacks][-2:] == ["status", "recording"]
    form = fake_twilio.requests_to(f"/Calls/{sid}/Recordings.json", "POST")[0].form
    assert (form["RecordingStatusCallbackEvent"], form["RecordingStatusCallback"]) == (
        ["completed"], [stub.url("/api-recording")])


def test_recording_an_unknown_or_another_accounts_call_is_not_found(fake_twilio, account, stub):
    client = sdk(fake_twilio, account)
    with pytest.raises(TwilioRestException) as unknown:
        client.calls("CA" + "0" * 32).recordings.create()
    assert (unknown.value.status, unknown.value.code) == (404, 20404)

    fake_twilio.script("+14155550129", Scenario(result="busy"))
    sid = dial(client, stub, "+14155550129")
    fake_twilio.wait_finished(sid, timeout=5)
    other = fake_twilio.add_account(numbers=[("+14155550199", "Other")])
    with pytest.raises(TwilioRestException) as foreign:
        sdk(fake_twilio, other).calls(sid).recordings.create()
    assert (foreign.value.status, foreign.value.code) == (404, 20404)


def test_recording_a_call_that_has_ended_is_refused_with_21220(fake_twilio, account, stub):
    client = sdk(fake_twilio, account)
    sid = dial(client, stub, "+14155550130", twiml="/hangup")
    record = fake_twilio.wait_finished(sid, timeout=5)
    assert record.status == "completed"
    with pytest.raises(TwilioRestException) as ended:
        client.calls(sid).recordings.create(recording_status_callback=stub.url("/api-recording"))
    assert (ended.value.status, ended.value.code) == (400, 21220)
    assert "not in-progress" in ended.value.msg
    assert not stub.hits_to("/api-recording")
