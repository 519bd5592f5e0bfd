"""The media stream voice socket (ARCHITECTURE.md §8): μ-law 8 kHz audio both ways through a
speech engine, ``mark`` after each agent turn, ``clear`` on barge-in. The frame loop does only
cheap work per frame; turns run in a task of the session's own."""

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

    async def say(self, turn: AgentTurn) -> float | None:
        """Send the turn's audio and its mark; when its first frame went out."""
        if not turn.say:
            return None
        self.turns += 1
        sid = self.stream_sid
        first: float | None = None
        async with self._sending:
            for frame in self.speech.speak(turn.say):
                payload = base64.b64encode(frame).decode()
                await self.socket.send_text(f'{{"event":"media","streamSid":"{sid}","media":{{"payload":"{payload}"}}}}')
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
        if self.pending:
            self.pending.clear()
            self.played.set()
            async with self._sending:
                await self.socket.send_text(json.dumps({"event": "clear", "streamSid": self.stream_sid}))


class _Turns:
    """The agent's side of a stream, off the frame loop: utterances and keypad digits are handled in
    order by one task, so frames keep flowing (and barge-in keeps working) while the agent thinks."""

    def __init__(self, conversation: LiveConversation, speaker: _Speaker, metrics: Any,
                 frames: asyncio.Queue[dict[str, Any] | None]) -> None:
        self.conversation = conversation
        self.speaker = speaker
        self.metrics = metrics
        self.frames = frames
        self._work: asyncio.Queue[tuple[str, str, float] | None] = asyncio.Queue()
        self._task = asyncio.create_task(self._run())

    def heard(self, text: str, at: float) -> None:
        self._work.put_nowait(("heard", text, at))

    def pressed(self, digit: str) -> None:
        self._work.put_nowait(("pressed", digit, time.perf_counter()))

    async def _run(self) -> None:
        while (item := await self._work.get()) is not None:
            kind, value, at = item
            if kind in ("pressed", "keys_timeout"):
                if kind == "pressed":
                    turn = await run_blocking(self.conversation.pressed, value)
                else:
                    turn = await run_blocking(self.conversation.keys_timed_out)
                if turn is None:  # a press recorded, or a flow's keypad entry not complete yet
                    self._wake_after_silence()
                    continue
            else:
                turn = await run_blocking(self.conversation.heard, value)
            replied = await self.speaker.say(turn)
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
        speech: SpeechEngine = session.container.speech_engine(await run_blocking(conversation.engine_speech))
        speaker = _Speaker(socket, str(start.get("streamSid") or start["start"].get("streamSid") or ""), speech)
        listener = speech.listener()
        await speaker.say(await run_blocking(conversation.begin))
        turns = _Turns(conversation, speaker, metrics, queue)
        try:
            await _stream_frames(queue, conversation, listener, speaker, turns, metrics)
        finally:
            await turns.close()
        if conversation.ended:
            session.reason = "agent_ended"
            await _goodbye(queue, speaker)


async def _stream_frames(queue: asyncio.Queue[dict[str, Any] | None], conversation: LiveConversation,
                         listener: Any, speaker: _Speaker, turns: _Turns, metrics: Any) -> None:
    """The frame loop: only cheap work per frame; turns go to ``turns``."""
    while not conversation.ended:
        message = await queue.get()
        if message is None:
            break
        event = message.get("event")
        if event == "media":
            try:
                frame = base64.b64decode(message["media"]["payload"])
            except (KeyError, TypeError, ValueError):
                continue
            heard = listener.feed(frame)
            if listener.speaking and speaker.pending:
                await speaker.barge_in()
            if heard:
                turns.heard(heard, message["_at"])
            metrics.frame.observe(time.perf_counter() - message["_at"])
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
