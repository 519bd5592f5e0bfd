"""The media socket of ``<Connect>``: the scripted callee on a ConversationRelay or Media Stream socket.

``CallSimulation._connect`` (in ``simulator``) opens one session per ``<Connect>`` verb; the session plays
the ``Scenario``'s turns into the socket and records what the server's agent sends back.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import deque
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.sync.client import ClientConnection, connect

from adapters.speech.loopback import END_OF_UTTERANCE_FRAMES, SILENCE, UtteranceDecoder, encode_utterance
from tests.fakes.twilio.simulator import HangUp, Press, Say, is_loopback, new_sid

if TYPE_CHECKING:
    from tests.fakes.twilio.simulator import CallSimulation

FRAME_SECONDS = 0.02


class MediaSession:
    """One ``<Connect>`` socket: the scripted callee speaks into it, the server's agent answers.

    ``run`` returns how it ended: ``callee`` (hung up), ``agent`` (relay ``end``), ``closed`` (by the
    server), ``failed`` (never opened) or ``interrupted`` (REST hang-up or redirect).
    """

    def __init__(self, call: CallSimulation, url: str, parameters: dict[str, str]) -> None:
        self.call = call
        self.record = call.record
        self.scenario = call.scenario
        self.changed = call.changed
        self.url = url
        self.parameters = parameters
        self.agent_turns = 0
        self.heard = 0  # agent turns the callee has waited for
        self.agent_ended = False
        self.closed = False
        self.handoff_data: Any = None
        self._ws: ClientConnection | None = None
        self._send_lock = threading.RLock()

    def run(self) -> str:
        if not is_loopback(self.url):
            self.record.notes.append(f"socket {self.url} is not on loopback: not opened")
            return "failed"
        with ExitStack() as stack:
            try:
                self._ws = stack.enter_context(connect(
                    self.url, additional_headers={"X-Twilio-Signature": self.call.sign(self.url)}, proxy=None,
                    compression=None, open_timeout=5, close_timeout=2, ping_interval=None))
            except (OSError, TimeoutError, WebSocketException) as exc:
                self.record.notes.append(f"socket {self.url} did not open: {exc!r}")
                return "failed"
            receiver = threading.Thread(target=self._receive, name="fake-socket", daemon=True)
            receiver.start()
            try:
                self.opened()
                return self._converse()
            finally:
                self.closing()
                self._ws.close()
                receiver.join(5)

    def _converse(self) -> str:
        while (turn := self.call.peek_turn()) is not None:
            if isinstance(turn, (Say, Press)) and turn.wait:
                self._await_agent_turn()
            if ending := self._ending():
                return ending
            self.call.take_turn()
            if isinstance(turn, HangUp):
                return "callee"
            if isinstance(turn, Say):
                self.record.transcript.append(("callee", turn.text))
                self.say(turn.text)
            elif isinstance(turn, Press):
                self.record.transcript.append(("callee-dtmf", turn.digits))
                self.press(turn.digits)
            else:
                self.silence(turn.seconds)
        self._await_agent_turn()
        with self.changed:
            self.changed.wait_for(lambda: self._ending() is not None, timeout=self.scenario.linger)
        return self._ending() or "callee"

    def _await_agent_turn(self) -> None:
        with self.changed:
            arrived = self.changed.wait_for(lambda: self.agent_turns > self.heard or self._ending() is not None,
                                            timeout=self.scenario.reply_timeout)
            if not arrived:
                self.record.notes.append(f"no agent turn within {self.scenario.reply_timeout} s: the callee went on")
            self.heard = self.agent_turns
            self.changed.wait_for(lambda: self._ending() is not None, timeout=self.scenario.reply_delay)

    def _ending(self) -> str | None:
        if self.call.interrupted():
            return "interrupted"
        if self.agent_ended:
            return "agent"
        return "closed" if self.closed else None

    def _receive(self) -> None:
        assert self._ws is not None
        try:
            for raw in self._ws:
                message = _json_object(raw)
                with self.changed:
                    if message is not None:
                        self.on_message(message)
                    else:
                        self.record.notes.append(f"socket message is not a JSON object: {raw!r:.80}")
                    self.changed.notify_all()
        except ConnectionClosed:
            pass
        finally:
            with self.changed:
                self.closed = True
                self.changed.notify_all()

    def _send(self, payload: dict[str, Any]) -> None:
        assert self._ws is not None
        with self._send_lock:
            try:
                self._ws.send(json.dumps(payload))
            except ConnectionClosed:
                pass  # the receiver sees the close and ends the session

    def _agent_turn_ended(self) -> None:
        self.agent_turns += 1

    def _agent_spoke(self, text: str) -> None:
        self.record.agent_said.append(text)
        self.record.transcript.append(("agent", text))

    def opened(self) -> None: ...

    def on_message(self, message: dict[str, Any]) -> None: ...

    def say(self, text: str) -> None: ...

    def press(self, digits: str) -> None: ...

    def silence(self, seconds: float) -> None:
        with self.changed:
            self.changed.wait_for(lambda: self._ending() is not None, timeout=seconds)

    def closing(self) -> None: ...


class RelaySession(MediaSession):
    """``<ConversationRelay>``: text both ways; the carrier does the speech recognition and synthesis."""

    def __init__(self, call: CallSimulation, url: str, parameters: dict[str, str]) -> None:
        super().__init__(call, url, parameters)
        self._tokens: list[str] = []

    def opened(self) -> None:
        r = self.record
        self.record.setup = {"type": "setup", "sessionId": new_sid("VX"), "callSid": r.sid, "accountSid": r.account_sid,
                             "from": r.from_, "to": r.to, "direction": r.direction, "callType": "PSTN",
                             "customParameters": self.parameters}
        self._send(self.record.setup)

    def on_message(self, message: dict[str, Any]) -> None:
        self.record.received.append(message)
        kind = message.get("type")
        if kind == "text":
            self._tokens.append(str(message.get("token", "")))
            if message.get("last"):
                self._agent_spoke("".join(self._tokens))
                self._tokens.clear()
                self._agent_turn_ended()
        elif kind == "sendDigits":
            self.record.digits.append(str(message.get("digits", "")))
        elif kind == "end":
            self.agent_ended = True
            self.handoff_data = message.get("handoffData")

    def say(self, text: str) -> None:
        self._send({"type": "prompt", "voicePrompt": text, "lang": "en-US", "last": True})

    def press(self, digits: str) -> None:
        for digit in digits:
            self._send({"type": "dtmf", "digit": digit})


def _json_object(raw: str | bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


@dataclass(frozen=True)
class _Mark:
    name: str


class StreamSession(MediaSession):
    """``<Stream>``: μ-law frames both ways, spoken in ``adapters.speech.loopback``'s scripted form.

    The agent's audio is "played" as it arrives (realtime: one frame per 20 ms tick); a ``mark`` is
    echoed once the frames before it were played, and one with no audio behind it ends the agent's turn.
    """

    def __init__(self, call: CallSimulation, url: str, parameters: dict[str, str]) -> None:
        super().__init__(call, url, parameters)
        self.stream_sid = new_sid("MZ")
        self._sequence = 0
        self._chunk = 0
        self._playback: deque[bytes | _Mark] = deque()  # the agent's audio not yet played
        self._outbox: deque[bytes] = deque()  # the callee's audio not yet sent (realtime)
        self._decoder = UtteranceDecoder()
        self._clock: threading.Thread | None = None
        self._stopping = False

    def opened(self) -> None:
        self._send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        r = self.record
        self.record.setup = self._event("start", start={
            "accountSid": r.account_sid, "streamSid": self.stream_sid, "callSid": r.sid, "tracks": ["inbound"],
            "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
            "customParameters": self.parameters})
        if self.scenario.realtime:
            self._clock = threading.Thread(target=self._tick, name="fake-stream-clock", daemon=True)
            self._clock.start()

    def on_message(self, message: dict[str, Any]) -> None:
        event = message.get("event")
        if event == "media":
            self.record.media_frames += 1
            try:
                self._playback.append(base64.b64decode(message["media"]["payload"]))
            except (KeyError, TypeError, ValueError):
                self.record.notes.append("media message without a base64 payload")
        else:
            self.record.received.append(message)
        if event == "mark":
            self._playback.append(_Mark(str((message.get("mark") or {}).get("name", ""))))
        elif event == "clear":
            marks = [item for item in self._playback if isinstance(item, _Mark)]
            self._playback.clear()
            for mark in marks:
                self._echo(mark)
        self._play_now()

    def say(self, text: str) -> None:
        frames = encode_utterance(text) + [SILENCE] * (END_OF_UTTERANCE_FRAMES + 1)
        if not self.scenario.realtime:
            for frame in frames:
                self._send_frame(frame)
            return
        with self.changed:
            self._outbox.extend(frames)
            self.changed.wait_for(lambda: not self._outbox or self._ending() is not None)

    def press(self, digits: str) -> None:
        for digit in digits:
            self._event("dtmf", dtmf={"track": "inbound_track", "digit": digit})

    def silence(self, seconds: float) -> None:
        if self.scenario.realtime:
            return super().silence(seconds)  # the clock sends silence anyway
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and self._ending() is None:
            self._send_frame(SILENCE)
            with self.changed:
                self.changed.wait_for(lambda: self._ending() is not None, timeout=min(FRAME_SECONDS, left))

    def closing(self) -> None:
        self._stopping = True
        if self._clock is not None:
            self._clock.join(2)
        if not self.closed:
            self._event("stop", stop={"accountSid": self.record.account_sid, "callSid": self.record.sid})

    def _tick(self) -> None:
        """Realtime: every 20 ms, one frame of the callee's audio (or silence) out, one of the agent's played."""
        due = time.monotonic()
        while not self._stopping and not self.closed:
            with self.changed:
                frame = self._outbox.popleft() if self._outbox else SILENCE
                self._play_next()
                self.changed.notify_all()
            self._send_frame(frame)
            due += FRAME_SECONDS
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.2:
                due = time.monotonic()  # fell far behind: do not burst to catch up

    def _play_now(self) -> None:
        if not self.scenario.realtime:
            while self._playback:
                self._play_next()

    def _play_next(self) -> None:
        self._echo_marks()
        if self._playback:
            frame = self._playback.popleft()
            assert isinstance(frame, bytes)
            if (text := self._decoder.feed(frame)) is not None:
                self._agent_spoke(text)
        self._echo_marks()

    def _echo_marks(self) -> None:
        while self._playback and isinstance(self._playback[0], _Mark):
            mark = self._playback.popleft()
            assert isinstance(mark, _Mark)
            self._echo(mark)

    def _echo(self, mark: _Mark) -> None:
        if (text := self._decoder.flush()) is not None:
            self._agent_spoke(text)
        self._event("mark", mark={"name": mark.name})
        if not any(isinstance(item, bytes) for item in self._playback):
            self._agent_turn_ended()

    def _send_frame(self, frame: bytes) -> None:
        with self._send_lock:
            self._chunk += 1
            self._event("media", media={"track": "inbound", "chunk": str(self._chunk),
                                        "timestamp": str((self._chunk - 1) * 20),
                                        "payload": base64.b64encode(frame).decode()})

    def _event(self, name: str, **body: Any) -> dict[str, Any]:
        with self._send_lock:
            self._sequence += 1
            payload = {"event": name, "sequenceNumber": str(self._sequence), "streamSid": self.stream_sid, **body}
            self._send(payload)
        return payload


SESSIONS: dict[str, type[MediaSession]] = {"ConversationRelay": RelaySession, "Stream": StreamSession}
