"""The media stream voice socket (ARCHITECTURE.md §8): μ-law 8 kHz audio both ways through a
speech engine, ``mark`` after each agent turn, ``clear`` on barge-in. Inbound audio frames are
handled where the socket is read, with only cheap work per frame; turns run in a task of the
session's own, and the CPU of a turn (the brain, speech synthesis, encoding the reply's messages)
runs on a thread. The turn's events are appended behind it (``LiveConversation.log``)."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

from litestar import WebSocket, websocket

from application.calling.conversation import LiveConversation
from application.calling.ports import AgentTurn, SpeechEngine
from entrypoints.http.blocking import run_blocking
from entrypoints.http.voice_sockets import GOODBYE_SECONDS, SocketSession

class _Speaker:
    """Sends the agent's audio with a mark after each turn; ``clear`` on barge-in."""

    def __init__(self, socket: WebSocket, stream_sid: str, speech: SpeechEngine) -> None:
        self.socket = socket
        self.stream_sid = stream_sid
        self.speech = speech
        self.pending: set[str] = set()
        self.turns = 0
        self.played = asyncio.Event()
        self.played.set()
        self._sending = asyncio.Lock()  # turns are sent by their own task; barge-in by the frame loop
        self._clearing: asyncio.Task[None] | None = None  # a barge-in's ``clear`` on its way

    def messages(self, turn: AgentTurn | None) -> list[str]:
        """The ``media`` messages that say the turn (CPU only: run it on a thread)."""
        if turn is None or not turn.say:
            return []
        sid = self.stream_sid
        return [f'{{"event":"media","streamSid":"{sid}","media":{{"payload":"{base64.b64encode(frame).decode()}"}}}}'
                for frame in self.speech.speak(turn.say)]

    async def say(self, turn: AgentTurn, messages: list[str] | None = None) -> float | None:
        """Send the turn's audio (``messages`` when prepared already) and its mark; when its first
        frame went out."""
        if not turn.say:
            return None
        self.turns += 1
        sid = self.stream_sid
        first: float | None = None
        clearing, self._clearing = self._clearing, None
        if clearing is not None:  # the barge-in before this turn is cleared before it plays
            await asyncio.gather(clearing, return_exceptions=True)
        async with self._sending:
            for message in self.messages(turn) if messages is None else messages:
                await self.socket.send_text(message)
                first = first or time.perf_counter()
            name = f"turn-{self.turns}"
            self.pending.add(name)
            self.played.clear()
            await self.socket.send_text(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": name}}))
        return first

    def marked(self, name: str) -> None:
        self.pending.discard(name)
        if not self.pending:
            self.played.set()

    async def barge_in(self) -> None:
        if self.interrupt():
            await self.clear()

    def interrupt(self) -> bool:
        """The other party speaks over the agent: forget the pending marks; True when a ``clear``
        must be sent."""
        if not self.pending:
            return False
        self.pending.clear()
        self.played.set()
        return True

    def start_clear(self) -> None:
        """Send ``clear`` without waiting for it (the frame handler cannot wait); the next turn
        waits for it."""
        self._clearing = asyncio.get_running_loop().create_task(self.clear())

    async def clear(self) -> None:
        async with self._sending:
            await self.socket.send_text(json.dumps({"event": "clear", "streamSid": self.stream_sid}))


class _LoopLag:
    """While any media stream is open, a 10 ms timer on the event loop: how late it fires is how
    long an arriving frame waits before the loop reads it (``callwright_voice_loop_lag_seconds``)."""

    PERIOD = 0.01

    def __init__(self) -> None:
        self.streams = 0
        self._task: asyncio.Task[None] | None = None

    def enter(self, metrics: Any) -> None:
        self.streams += 1
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._task = loop.create_task(self._run(metrics.loop_lag))

    def leave(self) -> None:
        self.streams -= 1

    async def _run(self, lag: Any) -> None:
        loop = asyncio.get_running_loop()
        while self.streams > 0:
            due = loop.time() + self.PERIOD
            await asyncio.sleep(self.PERIOD)
            lag.observe(max(0.0, loop.time() - due))


_LAG = _LoopLag()


class _Turns:
    """The agent's side of a stream, off the frame loop: utterances and keypad digits are handled in
    order by one task, so frames keep flowing (and barge-in keeps working) while the agent thinks."""

    def __init__(self, conversation: LiveConversation, speaker: _Speaker, metrics: Any,
                 frames: asyncio.Queue[dict[str, Any] | None]) -> None:
        self.conversation = conversation
        self.speaker = speaker
        self.metrics = metrics
        self.frames = frames
        # A scripted brain and speech engine answer in microseconds with no I/O: their turns run
        # here, without two hand-overs to a thread and back; any other runs on a thread.
        self.instant = conversation.instant and bool(getattr(speaker.speech, "instant", False))
        self._work: asyncio.Queue[tuple[str, str, float] | None] = asyncio.Queue()
        self._task = asyncio.create_task(self._run())

    def heard(self, text: str, at: float) -> None:
        self._work.put_nowait(("heard", text, at))

    def pressed(self, digit: str) -> None:
        self._work.put_nowait(("pressed", digit, time.perf_counter()))

    def _answer(self, kind: str, value: str) -> tuple[AgentTurn | None, list[str]]:
        """On a thread: the agent's turn and the messages that say it."""
        if kind == "pressed":
            turn = self.conversation.pressed(value)
        elif kind == "keys_timeout":
            turn = self.conversation.keys_timed_out()
        else:
            turn = self.conversation.heard(value)
        return turn, self.speaker.messages(turn)

    async def _run(self) -> None:
        while (item := await self._work.get()) is not None:
            kind, value, at = item
            if kind == "heard" and self.instant:
                turn = self.conversation.reply(value)
                messages = self.speaker.messages(turn)
                if turn.transfer:
                    await run_blocking(self.conversation.hand_over, turn)
            else:
                turn, messages = await run_blocking(self._answer, kind, value)
            if turn is None:  # a press recorded, or a flow's keypad entry not complete yet
                self._wake_after_silence()
                continue
            replied = await self.speaker.say(turn, messages)
            self.metrics.turn.labels("stream").observe((replied or time.perf_counter()) - at)
            if self.conversation.ended:
                self.frames.put_nowait({"event": "_agent_ended"})  # wake the frame loop
                return

    def _wake_after_silence(self) -> None:
        """A keypad entry that ends on silence: look again once its silence may have run out."""
        wait = self.conversation.keys_wait()
        if wait is not None:
            asyncio.get_running_loop().call_later(
                wait + 0.01, lambda: self._work.put_nowait(("keys_timeout", "", time.perf_counter())))

    async def close(self) -> None:
        self._work.put_nowait(None)
        try:
            await asyncio.wait_for(self._task, GOODBYE_SECONDS)
        except TimeoutError:
            self._task.cancel()


@websocket("/webhooks/carrier/stream/{call_id:str}", name="carrier_stream_socket")
async def stream_socket(socket: WebSocket, call_id: str) -> None:
    async with SocketSession(socket, call_id, "stream") as session:
        start = await session.open("start", key="event", parameters=_stream_parameters)
        if start is None:
            return
        conversation, queue, metrics = session.conversation, session.queue, session.metrics
        speech: SpeechEngine = session.services.speech_engine(await run_blocking(conversation.engine_speech))
        speaker = _Speaker(socket, str(start.get("streamSid") or start["start"].get("streamSid") or ""), speech)
        greeting = await run_blocking(conversation.begin)
        await speaker.say(greeting, await run_blocking(speaker.messages, greeting))
        turns = _Turns(conversation, speaker, metrics, queue)
        frames = _Frames(conversation, speech.listener(), speaker, turns, metrics)
        session.inline = frames.media  # from now on audio frames are handled where they are read
        _LAG.enter(metrics)
        try:
            await _stream_frames(queue, conversation, frames, speaker, turns)
        finally:
            _LAG.leave()
            session.inline = None
            await turns.close()
        if conversation.ended:
            session.reason = "agent_ended"
            await _goodbye(queue, speaker)


class _Frames:
    """Inbound audio, handled in the socket's reading task as each frame arrives (no hand-over to
    another task per frame): decode, the speech listener, barge-in; a finished utterance goes to
    ``turns``."""

    def __init__(self, conversation: LiveConversation, listener: Any, speaker: _Speaker, turns: _Turns,
                 metrics: Any) -> None:
        self.conversation, self.listener, self.speaker, self.turns = conversation, listener, speaker, turns
        self.observe = metrics.frame.observe

    def media(self, message: dict[str, Any]) -> bool:
        """Handle a ``media`` message; False for any other message (it goes to the queue)."""
        if message.get("event") != "media":
            return False
        if self.conversation.ended:
            return True  # the agent hung up: the last frames are heard by no one
        try:
            frame = base64.b64decode(message["media"]["payload"])
        except (KeyError, TypeError, ValueError):
            return True
        heard = self.listener.feed(frame)
        if self.listener.speaking and self.speaker.interrupt():
            self.speaker.start_clear()
        if heard:
            self.turns.heard(heard, message["_at"])
        self.observe(time.perf_counter() - message["_at"])
        return True


async def _stream_frames(queue: asyncio.Queue[dict[str, Any] | None], conversation: LiveConversation,
                         frames: _Frames, speaker: _Speaker, turns: _Turns) -> None:
    """The control messages (marks, keypad, stop); audio frames are handled by ``frames`` as they
    are read, and any that reached the queue before it took over, here."""
    while not conversation.ended:
        message = await queue.get()
        if message is None:
            break
        event = message.get("event")
        if event == "media":
            frames.media(message)
        elif event == "mark":
            speaker.marked(str((message.get("mark") or {}).get("name")))
        elif event == "dtmf":
            digit = str((message.get("dtmf") or {}).get("digit") or "")
            if digit and digit in "0123456789*#":
                turns.pressed(digit)
        elif event == "stop":
            break


def _stream_parameters(message: dict[str, Any]) -> Any:
    details = message.get("start")
    return details.get("customParameters") if isinstance(details, dict) else None


async def _goodbye(queue: asyncio.Queue[dict[str, Any] | None], speaker: _Speaker) -> None:
    """Let the last words play (their mark comes back) before hanging up."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GOODBYE_SECONDS
    while speaker.pending and loop.time() < deadline:
        try:
            message = await asyncio.wait_for(queue.get(), deadline - loop.time())
        except TimeoutError:
            return
        if message is None or message.get("event") == "stop":
            return
        if message.get("event") == "mark":
            speaker.marked(str((message.get("mark") or {}).get("name")))
