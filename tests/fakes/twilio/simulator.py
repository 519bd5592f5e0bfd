"""The fake carrier's call simulator: one thread per call plays a test's ``Scenario`` as Twilio would.

A call's life, top to bottom: progress callbacks while it rings, the TwiML fetch, asynchronous AMD,
the media socket (ConversationRelay or Media Stream, in ``media``) with a scripted callee, redirects,
``<Gather>`` (DTMF), ``<Record>`` (voicemail, transcription) and ``<Dial>`` transfers, then the final
status and the recording callbacks (``Record`` on create, REST-started recordings). Sends to loopback only.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
import urllib.error
import urllib.request
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import format_datetime
from typing import Any, Union
from urllib.parse import urlencode, urljoin, urlsplit

from twilio.request_validator import RequestValidator

API_VERSION = "2010-04-01"
CALLBACK_TIMEOUT = 10.0  # Twilio waits 15 s for a TwiML answer
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
MACHINE_DETECTION = frozenset({"Enable", "DetectMessageEnd"})
WORDS_PER_SECOND = 2.5  # how fast a scripted caller speaks into a <Record>
TRANSCRIBABLE_SECONDS = 120  # Twilio transcribes <Record> recordings of at most two minutes


def new_sid(prefix: str) -> str:
    return prefix + uuid.uuid4().hex


def rfc2822(moment: datetime | None = None) -> str:
    return format_datetime(moment or datetime.now(timezone.utc))


def is_loopback(url: str | None) -> bool:
    return bool(url) and urlsplit(url).hostname in LOOPBACK


def recording_url(account_sid: str, sid: str) -> str:
    """Where Twilio serves a recording's audio (no extension: its default format)."""
    return f"https://api.twilio.com/{API_VERSION}/Accounts/{account_sid}/Recordings/{sid}"


def keys_entered(pressed: str, finish_on_key: str, num_digits: int) -> tuple[str, str]:
    """``<Gather>``'s result of ``pressed``: the digits (cut at ``num_digits``, 0 for no limit) and the
    finishing key that ended the input ("" when none did; the key itself is not part of the digits)."""
    digits = ""
    for key in pressed:
        if key in finish_on_key:
            return digits, key
        digits += key
        if num_digits and len(digits) >= num_digits:
            break
    return digits, ""


# --- what a test scripts ----------------------------------------------------------------------


@dataclass(frozen=True)
class Say:
    """The callee speaks ``text``; with ``wait`` only once the agent has finished its turn."""

    text: str
    wait: bool = True


@dataclass(frozen=True)
class Press:
    """The callee presses ``digits`` (DTMF, one event per digit); ``wait`` as for ``Say``."""

    digits: str
    wait: bool = True


@dataclass(frozen=True)
class Silence:
    """The callee stays quiet for ``seconds`` of wall-clock time (stream: silent frames every 20 ms)."""

    seconds: float


@dataclass(frozen=True)
class HangUp:
    """The callee hangs up at once."""


Turn = Union[Say, Press, Silence, HangUp]


@dataclass
class Scenario:
    """What one destination does when dialled. Time fields are seconds."""

    result: str = "answered"  # answered | busy | no-answer | failed | canceled
    answered_by: str = "human"  # AMD verdict, reported only when the server asked for AMD
    amd_delay: float = 0.05  # after the TwiML fetch
    turns: list[Turn] = field(default_factory=list)
    transfer_results: dict[str, str] = field(default_factory=dict)  # E.164 -> completed | no-answer | busy | failed
    realtime: bool = False  # stream audio at 20 ms a frame, <Say>/<Pause>/transfers in wall-clock time
    ring_seconds: float = 0.0  # between ringing and the outcome
    reply_timeout: float = 10.0  # how long the callee waits for the agent's turn before speaking anyway
    reply_delay: float = 0.0  # the callee's pause after the agent's turn
    linger: float = 0.2  # after its last turn the callee stays this long, so the agent may end the call first
    transfer_seconds: int = 5  # DialCallDuration of a completed transferred leg
    transcription_delay: float = 0.05  # between the <Record> action's answer and the transcription callback


# --- what a test reads --------------------------------------------------------------------------


@dataclass(frozen=True)
class Callback:
    """One request the carrier made to the server under test (``status`` None: no HTTP answer)."""

    kind: str  # inbound | status | twiml | amd | action | redirect | dial-action | whisper | gather | record
    #            | recording | transcription
    method: str
    url: str
    params: dict[str, str]
    status: int | None
    signature: str
    body: str = ""
    error: str | None = None


@dataclass
class CallRecord:
    """Everything one simulated call did, updated live by its thread."""

    sid: str
    account_sid: str
    to: str
    from_: str
    direction: str  # outbound-api | inbound
    params: dict[str, list[str]]  # the create request's form, repeated keys kept ({} when inbound)
    scenario: Scenario
    status: str = "queued"
    answered_by: str | None = None
    duration: int | None = None
    callbacks: list[Callback] = field(default_factory=list)
    twiml: list[str] = field(default_factory=list)  # every TwiML document fetched, in order
    setup: dict[str, Any] | None = None  # the relay ``setup`` or stream ``start`` message sent
    received: list[dict[str, Any]] = field(default_factory=list)  # server socket messages, media frames excepted
    media_frames: int = 0  # audio ``media`` frames the server sent
    agent_said: list[str] = field(default_factory=list)  # relay: tokens joined per turn; stream: decoded utterances
    # (agent | callee | callee-dtmf | twiml-say | twiml-beep, text)
    transcript: list[tuple[str, str]] = field(default_factory=list)
    digits: list[str] = field(default_factory=list)  # relay ``sendDigits`` and ``<Play digits>``
    dialled: list[str] = field(default_factory=list)  # ``<Dial>`` destinations, in order
    whispers: list[tuple[str, str]] = field(default_factory=list)  # (destination, what its ``<Number url>`` said)
    recording_sid: str | None = None
    recording_url: str | None = None
    voicemails: list[dict[str, Any]] = field(default_factory=list)  # <Record> recordings: sid, url, duration, text
    notes: list[str] = field(default_factory=list)  # what went wrong on the way (failed callbacks, timeouts)
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    def callbacks_of(self, kind: str) -> list[Callback]:
        return [c for c in self.callbacks if c.kind == kind]

    def statuses(self) -> list[str]:
        """The ``CallStatus`` of each status callback posted."""
        return [c.params["CallStatus"] for c in self.callbacks_of("status")]


class _CallOver(Exception):
    """Unwinds a call's thread to its end with the final ``CallStatus``."""

    def __init__(self, status: str = "completed") -> None:
        super().__init__(status)
        self.status = status


@dataclass(frozen=True)
class _Document:
    url: str  # relative URLs in it resolve against this
    root: ET.Element


@dataclass(frozen=True)
class _ApiRecording:
    """A recording started through the REST API; it completes when the call ends."""

    sid: str
    started: float  # time.monotonic()
    options: dict[str, list[str]]  # the create request's form


# --- one call's life --------------------------------------------------------------------------


class CallSimulation:
    """One call on its own thread; ``options`` are the create request's form (or an inbound plan)."""

    def __init__(self, record: CallRecord, auth_token: str, options: dict[str, list[str]],
                 sync: Callable[..., None]) -> None:
        self.record = record
        self.scenario = record.scenario
        self.options = options
        self.changed = threading.Condition()  # wakes waits on REST hang-ups, redirects and socket events
        self._validator = RequestValidator(auth_token)
        self._sync = sync  # keeps the REST API's call resource in step
        self._hangup = False
        self._redirect: tuple[str, str] | None = None
        self._over = False
        self._answered_at: float | None = None
        self._sequence = 0
        self._cursor = 0
        self._amd: threading.Thread | None = None
        self._final: str | None = None  # the status the call ended with, once it has
        self._api_recordings: list[_ApiRecording] = []
        self._transcriptions: list[threading.Thread] = []
        self.thread = threading.Thread(target=self.run, name=f"fake-call-{record.sid[-8:]}", daemon=True)

    # Requests from the REST API, on its threads.

    def hang_up(self) -> str:
        """The status the call ends with: completed once answered, canceled before."""
        with self.changed:
            if self.record.finished.is_set():
                return self.record.status
            self._hangup = True
            self.changed.notify_all()
            return "completed" if self._answered_at is not None else "canceled"

    def redirect(self, url: str, method: str = "POST") -> None:
        with self.changed:
            self._redirect = (url, method)
            self.changed.notify_all()

    def interrupted(self) -> bool:
        with self.changed:
            return self._hangup or self._redirect is not None

    def start_recording(self, options: dict[str, list[str]]) -> str | None:
        """Records the call from now on (REST ``Recordings.json``, ``options`` its form): the recording's
        SID, or None when the call is not in progress."""
        with self.changed:
            if self._answered_at is None or self._over or self._hangup or self.record.status != "in-progress":
                return None
            recording = _ApiRecording(new_sid("RE"), time.monotonic(), options)
            self._api_recordings.append(recording)
            return recording.sid

    # The life.

    def run(self) -> None:
        status = "completed"
        try:
            document = self._ring_inbound() if self.record.direction == "inbound" else self._ring()
            while document is not None:
                document = self._execute(document)
        except _CallOver as over:
            status = over.status
        except Exception:  # noqa: BLE001 - a fault in the fake must still finish the call for wait_finished
            self.record.notes.append("simulator fault: " + traceback.format_exc())
        finally:
            self._finish(status)

    def _ring(self) -> _Document | None:
        self._set(start_time=rfc2822())
        self._progress("initiated", "initiated")
        if self.scenario.result != "failed":
            self._set(status="ringing")
            self._progress("ringing", "ringing")
        self._wait(self.scenario.ring_seconds)
        if self._hangup:
            raise _CallOver("canceled")
        if self.scenario.result != "answered":
            raise _CallOver(self.scenario.result)
        self._answer()
        params = self._call_params()
        if self._amd_requested() and self._option("AsyncAmd", "false").lower() != "true":
            # Synchronous AMD delivers AnsweredBy on the TwiML request itself.
            self._wait(self.scenario.amd_delay)
            params |= self._amd_verdict()
        if self._option("Twiml"):
            document = self._parse("inline", self._option("Twiml"))
        else:
            document = self._fetch("twiml", self._option("Url"), self._option("Method", "POST"), params)
        if self._amd_requested() and self._option("AsyncAmd", "false").lower() == "true":
            self._amd = threading.Thread(target=self._post_amd, name="fake-amd", daemon=True)
            self._amd.start()
        return document

    def _ring_inbound(self) -> _Document:
        self._set(status="ringing", start_time=rfc2822())
        document = self._fetch("inbound", self._option("Url"), self._option("Method", "POST"),
                               self._call_params("ringing"))
        self._answer()
        return document

    def _answer(self) -> None:
        with self.changed:
            self._answered_at = time.monotonic()
        self._set(status="in-progress")
        self._progress("answered", "in-progress")

    def _execute(self, document: _Document) -> _Document | None:
        """Runs a TwiML document's verbs; returns the next document, or None when the call is over."""
        for verb in document.root:
            jump = self._interruption() or self._verb(verb, document)
            if jump is not None:
                return jump
        return self._interruption()  # at the end of a document Twilio hangs up

    def _interruption(self) -> _Document | None:
        with self.changed:
            if self._hangup:
                raise _CallOver("completed")
            redirect, self._redirect = self._redirect, None
        if redirect is None:
            return None
        return self._fetch("redirect", redirect[0], redirect[1], self._call_params())

    def _verb(self, verb: ET.Element, document: _Document) -> _Document | None:
        text = (verb.text or "").strip()
        if verb.tag == "Connect":
            return self._connect(verb, document)
        if verb.tag == "Dial":
            return self._dial(verb, document)
        if verb.tag == "Gather":
            return self._gather(verb, document)
        if verb.tag == "Record":
            return self._record_verb(verb, document)
        if verb.tag == "Redirect":
            return self._fetch("redirect", urljoin(document.url, text), verb.get("method", "POST"), self._call_params())
        if verb.tag == "Hangup":
            raise _CallOver("completed")
        if verb.tag == "Say":
            self.record.transcript.append(("twiml-say", text))
            self._wait(0.06 * len(text) if self.scenario.realtime else 0)
        elif verb.tag == "Pause":
            self._wait(float(verb.get("length", "1")) if self.scenario.realtime else 0)
        elif verb.tag == "Play" and verb.get("digits"):
            self.record.digits.append(verb.get("digits", ""))
        else:
            self.record.notes.append(f"<{verb.tag}> is not simulated: skipped")
        return None

    def _connect(self, verb: ET.Element, document: _Document) -> _Document | None:
        from tests.fakes.twilio.media import SESSIONS  # here, not at the top: media builds on this module's names

        target = next(iter(verb), None)
        session_type = SESSIONS.get(target.tag) if target is not None else None
        if target is None or session_type is None:
            self.record.notes.append("<Connect> without <ConversationRelay> or <Stream>: skipped")
            return None
        parameters = {p.get("name", ""): p.get("value", "") for p in target.iter("Parameter")}
        session = session_type(self, target.get("url", ""), parameters)
        ending = session.run()
        if ending == "callee":
            raise _CallOver("completed")
        if ending == "interrupted" or not verb.get("action"):
            return None  # a redirect is never followed by the connect action
        params = self._call_params()
        if session.handoff_data is not None:
            handoff = session.handoff_data
            params["HandoffData"] = handoff if isinstance(handoff, str) else json.dumps(handoff)
        return self._fetch("action", urljoin(document.url, verb.get("action", "")), verb.get("method", "POST"), params)

    def _dial(self, verb: ET.Element, document: _Document) -> _Document | None:
        nouns = [((n.text or "").strip(), n.get("url")) for n in verb.iter("Number")] or [((verb.text or "").strip(), None)]
        nouns = [(n, url) for n, url in nouns if n]
        numbers = [n for n, _ in nouns]
        self.record.dialled.extend(numbers)
        outcomes = [self.scenario.transfer_results.get(n, "completed") for n in numbers]
        status = "completed" if "completed" in outcomes else (outcomes[0] if outcomes else "failed")
        answered = next(((n, url) for n, url in nouns if self.scenario.transfer_results.get(n, "completed") == "completed"),
                        None)
        if answered is not None and answered[1]:
            self._whisper(answered[0], urljoin(document.url, answered[1]))
        duration = self.scenario.transfer_seconds if status == "completed" else 0
        self._wait(duration if self.scenario.realtime else 0)
        jump = None
        if verb.get("action"):
            params = self._call_params() | {"DialCallStatus": status, "DialCallSid": new_sid("CA"),
                                            "DialCallDuration": str(duration)}
            jump = self._fetch("dial-action", urljoin(document.url, verb.get("action", "")),
                               verb.get("method", "POST"), params)
        if status == "completed":
            raise _CallOver("completed")  # the callee talked to the transferee, then hung up
        return jump

    def _whisper(self, number: str, url: str) -> None:
        """``<Number url>``: the TwiML the answering destination hears before the bridge (its ``<Say>``s)."""
        params = self._call_params() | {"CallSid": new_sid("CA"), "To": number, "Direction": "outbound-dial"}
        callback = self._post("whisper", url, "POST", params)
        if callback.status != 200:
            self.record.notes.append(f"whisper request failed ({callback.status}): the destination heard nothing")
            return
        try:
            root = ET.fromstring(callback.body)
        except ET.ParseError as exc:
            self.record.notes.append(f"whisper TwiML does not parse: {exc}")
            return
        for say in root.iter("Say"):
            self.record.whispers.append((number, (say.text or "").strip()))

    def _gather(self, verb: ET.Element, document: _Document) -> _Document | None:
        """``<Gather>`` of DTMF: plays its nested prompts, then takes the caller's ``Press`` (see ``_keys``).

        Digits, or an empty result with ``actionOnEmptyResult``, go to the action (default: this document's
        URL) and its answer runs next; an empty result otherwise falls through to the next verb.
        """
        for child in verb:
            if child.tag in ("Say", "Play", "Pause"):
                self._verb(child, document)
            else:
                self.record.notes.append(f"<{child.tag}> nested in <Gather> is not simulated: skipped")
        if self.interrupted():
            return self._interruption()
        if "dtmf" in verb.get("input", "dtmf").split():
            digits, finished = self._keys(verb)
        else:
            self.record.notes.append("<Gather> speech input is not simulated: nothing was heard")
            digits, finished = self._no_input(verb)
        if self.interrupted():
            return self._interruption()
        if not digits and verb.get("actionOnEmptyResult", "false").lower() != "true":
            return None
        params = self._call_params() | {"Digits": digits, "FinishedOnKey": finished}
        return self._fetch("gather", urljoin(document.url, verb.get("action", "")), verb.get("method", "POST"),
                           params)

    def _keys(self, verb: ET.Element) -> tuple[str, str]:
        """The caller's answer to a ``<Gather>``: a ``Press`` at the cursor gives (digits, finishing key);
        a ``HangUp`` ends the call (no action request); anything else is no input until the timeout."""
        turn = self.peek_turn()
        if isinstance(turn, HangUp):
            self.take_turn()
            raise _CallOver("completed")
        if not isinstance(turn, Press):
            return self._no_input(verb)
        self.take_turn()
        num_digits = int(verb.get("numDigits") or 0)
        digits, finished = keys_entered(turn.digits, verb.get("finishOnKey", "#"), num_digits)
        if digits:
            self.record.transcript.append(("callee-dtmf", digits))
        if not finished and not (num_digits and len(digits) >= num_digits):
            self._wait(self._seconds(verb, "timeout", 5) if self.scenario.realtime else 0)  # after the last key
        return digits, finished

    def _no_input(self, verb: ET.Element) -> tuple[str, str]:
        self._wait(self._seconds(verb, "timeout", 5) if self.scenario.realtime else 0)
        return "", ""

    def _record_verb(self, verb: ET.Element, document: _Document) -> _Document | None:
        """``<Record>``: the caller's message (see ``_message``) becomes a recording, posted to the action
        (default: this document's URL) whose answer runs next, or is ignored when the caller hung up.
        Nothing said: no recording, no action request, on to the next verb (unless the caller hung up).
        """
        if verb.get("playBeep", "true").lower() == "true":
            self.record.transcript.append(("twiml-beep", ""))
        max_length = int(self._seconds(verb, "maxLength", 3600))
        message, ending = self._message(verb.get("finishOnKey", "1234567890*#"), max_length)
        words = len(message.split())
        duration = min(max(1, round(words / WORDS_PER_SECOND)), max_length) if words else 0
        if message:
            self.record.transcript.append(("callee", message))
        if self.scenario.realtime:
            self._wait(duration + (self._seconds(verb, "timeout", 5) if ending == "" else 0))
        if self.interrupted():
            return self._interruption()
        if not duration:
            if ending == "hangup":
                raise _CallOver("completed")
            return None
        sid = new_sid("RE")
        url = recording_url(self.record.account_sid, sid)
        self.record.voicemails.append({"sid": sid, "url": url, "duration": duration, "text": message})
        hung_up = ending == "hangup"
        params = self._call_params("completed" if hung_up else "in-progress") | {
            "RecordingUrl": url, "RecordingSid": sid, "RecordingDuration": str(duration), "Digits": ending}
        action = self._post("record", urljoin(document.url, verb.get("action", "")), verb.get("method", "POST"),
                            params)
        callback = verb.get("recordingStatusCallback")
        if callback:
            self._recording_status(urljoin(document.url, callback), verb.get("recordingStatusCallbackMethod", "POST"),
                                   verb.get("recordingStatusCallbackEvent", "completed").split(),
                                   sid, url, duration, "RecordVerb")
        self._transcribe(verb, document, {"RecordingSid": sid, "RecordingUrl": url}, message, duration)
        if hung_up:
            raise _CallOver("completed")  # Twilio ignores the action's answer
        return self._document("record", action)

    def _message(self, finish_on_key: str, max_length: int) -> tuple[str, str]:
        """What the caller leaves in a ``<Record>``: the consecutive ``Say`` turns at the cursor, joined,
        and how the recording ended: ``hangup`` (a ``HangUp`` next), the first finishing key of a ``Press``
        next, or "" (the silence timeout, or ``maxLength`` reached before either). Other turns stay."""
        said: list[str] = []
        while isinstance(turn := self.peek_turn(), Say):
            self.take_turn()
            said.append(turn.text)
        message = " ".join(said)
        if round(len(message.split()) / WORDS_PER_SECOND) > max_length:
            return message, ""
        turn = self.peek_turn()
        if isinstance(turn, HangUp):
            self.take_turn()
            return message, "hangup"
        key = next((k for k in turn.digits if k in finish_on_key), None) if isinstance(turn, Press) else None
        if key is None:
            return message, ""
        self.take_turn()
        return message, key

    def _transcribe(self, verb: ET.Element, document: _Document, recording: dict[str, str], text: str,
                    duration: int) -> None:
        """Posts a ``<Record>`` transcription to ``transcribeCallback`` (which implies ``transcribe``) on a
        thread of its own, ``transcription_delay`` later: it may arrive after the call has ended."""
        callback = verb.get("transcribeCallback")
        if not callback:  # transcribe="true" alone: Twilio transcribes, but tells no one
            return
        sid = new_sid("TR")
        done = bool(text) and duration <= TRANSCRIBABLE_SECONDS
        params = self._call_params() | recording | {
            "TranscriptionSid": sid, "TranscriptionText": text if done else "",
            "TranscriptionStatus": "completed" if done else "failed",
            "TranscriptionUrl": f"https://api.twilio.com/{API_VERSION}/Accounts/{self.record.account_sid}"
                                f"/Transcriptions/{sid}"}
        thread = threading.Thread(target=self._post_transcription, args=(urljoin(document.url, callback), params),
                                  name="fake-transcription", daemon=True)
        self._transcriptions.append(thread)
        thread.start()

    def _post_transcription(self, url: str, params: dict[str, str]) -> None:
        time.sleep(self.scenario.transcription_delay)
        with self.changed:
            status = self._final or "in-progress"
        self._post("transcription", url, "POST", params | {"CallStatus": status})

    def _post_amd(self) -> None:
        with self.changed:  # a call that ends early still hears its verdict first
            self.changed.wait_for(lambda: self._over, timeout=self.scenario.amd_delay)
        params = {"CallSid": self.record.sid, "AccountSid": self.record.account_sid} | self._amd_verdict()
        url = self._option("AsyncAmdStatusCallback")
        if url:
            self._post("amd", url, self._option("AsyncAmdStatusCallbackMethod", "POST"), params)

    def _finish(self, status: str) -> None:
        with self.changed:
            self._over, self._final = True, status
            recordings = list(self._api_recordings)
            self.changed.notify_all()
        if self._amd is not None:
            self._amd.join(CALLBACK_TIMEOUT + 1)
        answered = self._answered_at is not None
        duration = max(1, round(time.monotonic() - self._answered_at)) if self._answered_at is not None else 0
        self.record.duration = duration
        self._set(status=status, duration=str(duration), end_time=rfc2822())
        extra = {"CallDuration": str(duration)}
        if self.record.answered_by:
            extra["AnsweredBy"] = self.record.answered_by
        self._progress("completed", status, extra)
        if answered and self._option("Record", "false").lower() == "true":
            self._recording(duration)
        for recording in recordings:
            self._api_recording(recording)
        for thread in self._transcriptions:  # wait_finished also waits for the transcriptions
            thread.join(self.scenario.transcription_delay + CALLBACK_TIMEOUT + 1)
        self.record.finished.set()

    def _recording(self, duration: int) -> None:
        sid = new_sid("RE")
        self.record.recording_sid = sid
        self.record.recording_url = recording_url(self.record.account_sid, sid)
        self._recording_status(self._option("RecordingStatusCallback"),
                               self._option("RecordingStatusCallbackMethod", "POST"),
                               self._events("RecordingStatusCallbackEvent"), sid, self.record.recording_url,
                               duration, "RecordVerb")

    def _api_recording(self, recording: _ApiRecording) -> None:
        """A REST-started recording completes with the call: it lasted from its start to the call's end."""
        self.record.recording_sid = recording.sid
        self.record.recording_url = recording_url(self.record.account_sid, recording.sid)
        options = recording.options
        channels = 2 if (options.get("RecordingChannels") or ["mono"])[0] == "dual" else 1
        self._recording_status((options.get("RecordingStatusCallback") or [""])[0],
                               (options.get("RecordingStatusCallbackMethod") or ["POST"])[0],
                               self._events("RecordingStatusCallbackEvent", options),
                               recording.sid, self.record.recording_url,
                               max(1, round(time.monotonic() - recording.started)), "StartCallRecordingAPI",
                               channels)

    def _recording_status(self, url: str, method: str, events: list[str], sid: str, audio_url: str,
                          duration: int, source: str, channels: int = 1) -> None:
        """The ``completed`` recording status callback, when one was asked for."""
        if not url or "completed" not in events:
            return
        self._post("recording", url, method, {
            "AccountSid": self.record.account_sid, "CallSid": self.record.sid, "RecordingSid": sid,
            "RecordingUrl": audio_url, "RecordingStatus": "completed", "RecordingDuration": str(duration),
            "RecordingChannels": str(channels), "RecordingSource": source})

    # Helpers of the life above.

    def peek_turn(self) -> Turn | None:
        turns = self.scenario.turns
        return turns[self._cursor] if self._cursor < len(turns) else None

    def take_turn(self) -> None:
        self._cursor += 1

    def _option(self, name: str, default: str = "") -> str:
        return (self.options.get(name) or [default])[0]

    def _events(self, name: str, options: dict[str, list[str]] | None = None) -> list[str]:
        """A repeatable, space-separated events option (default ``completed``) of ``options`` or the call's."""
        given = (self.options if options is None else options).get(name)
        return [e for value in given or ["completed"] for e in value.split()]

    @staticmethod
    def _seconds(verb: ET.Element, name: str, default: float) -> float:
        return float(verb.get(name) or default)

    def _amd_requested(self) -> bool:
        return self._option("MachineDetection") in MACHINE_DETECTION

    def _amd_verdict(self) -> dict[str, str]:
        self.record.answered_by = self.scenario.answered_by
        self._set(answered_by=self.scenario.answered_by)
        return {"AnsweredBy": self.scenario.answered_by,
                "MachineDetectionDuration": str(round(self.scenario.amd_delay * 1000))}

    def _set(self, **fields: str) -> None:
        if "status" in fields:
            self.record.status = fields["status"]
        self._sync(**fields)

    def _wait(self, seconds: float) -> None:
        """Sleeps, waking early for a REST hang-up or redirect."""
        with self.changed:
            self.changed.wait_for(lambda: self._hangup or self._redirect is not None, timeout=max(0.0, seconds))

    def _call_params(self, status: str = "in-progress") -> dict[str, str]:
        r = self.record
        return {"CallSid": r.sid, "AccountSid": r.account_sid, "From": r.from_, "To": r.to, "CallStatus": status,
                "Direction": r.direction, "ApiVersion": API_VERSION}

    def _progress(self, event: str, status: str, extra: dict[str, str] | None = None) -> None:
        url = self._option("StatusCallback")
        if not url or event not in self._events("StatusCallbackEvent"):
            return
        params = self._call_params(status) | {"CallbackSource": "call-progress-events",
                                              "SequenceNumber": str(self._sequence), "Timestamp": rfc2822()}
        self._sequence += 1
        self._post("status", url, self._option("StatusCallbackMethod", "POST"), params | (extra or {}))

    def _fetch(self, kind: str, url: str, method: str, params: dict[str, str]) -> _Document:
        return self._document(kind, self._post(kind, url, method, params))

    def _document(self, kind: str, callback: Callback) -> _Document:
        """The TwiML a request was answered with; a failed request is an application error that hangs up."""
        if callback.status is None or not 200 <= callback.status < 300:
            self.record.notes.append(f"{kind} request failed ({callback.error}): application error, hanging up")
            raise _CallOver("completed")
        return self._parse(callback.url, callback.body)

    def _parse(self, url: str, body: str) -> _Document:
        self.record.twiml.append(body)
        try:
            root = ET.fromstring(body)
        except ET.ParseError as exc:
            root = ET.Element("invalid")
            self.record.notes.append(f"TwiML from {url} does not parse: {exc}")
        if root.tag != "Response":
            self.record.notes.append(f"TwiML from {url} is not a <Response>: application error, hanging up")
            raise _CallOver("completed")
        return _Document(url, root)

    def _post(self, kind: str, url: str, method: str, params: dict[str, str]) -> Callback:
        callback = deliver(kind, url, method, params, self._validator)
        self.record.callbacks.append(callback)
        if callback.error:
            self.record.notes.append(f"{kind} {callback.url}: {callback.error}")
        return callback

    def sign(self, url: str) -> str:
        return self._validator.compute_signature(url, {})


def deliver(kind: str, url: str, method: str, params: dict[str, str], validator: RequestValidator) -> Callback:
    """One signed, form-encoded request, as Twilio sends its webhooks; never retried."""
    method = method.upper()
    if method == "GET":
        url = url + ("&" if urlsplit(url).query else "?") + urlencode(params)
        signature, data = validator.compute_signature(url, {}), None
    else:
        signature, data = validator.compute_signature(url, params), urlencode(params).encode()
    if not is_loopback(url):
        return Callback(kind, method, url, params, None, signature, error="not a loopback address: not sent")
    headers = {"X-Twilio-Signature": signature, "User-Agent": "TwilioProxy/1.1"}
    if data is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with _OPENER.open(request, timeout=CALLBACK_TIMEOUT) as response:
            body = response.read().decode("utf-8", "replace")
            return Callback(kind, method, url, params, response.status, signature, body)
    except urllib.error.HTTPError as exc:
        body = exc.read().decode("utf-8", "replace")
        return Callback(kind, method, url, params, exc.code, signature, body, error=f"HTTP {exc.code}")
    except (OSError, ValueError) as exc:  # refused, reset, timed out
        return Callback(kind, method, url, params, None, signature, error=f"{type(exc).__name__}: {exc}")


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy from the environment
