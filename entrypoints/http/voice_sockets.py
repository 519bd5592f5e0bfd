"""The carrier's voice sockets (ARCHITECTURE.md §8): conversation relay (text both ways) and the
media stream (μ-law 8 kHz audio both ways, through a speech engine). Both drive the same
``LiveConversation``.

A socket must present its call's token in its first message (relay ``setup`` or stream ``start``,
``customParameters.token``); without a valid, unused one it is closed (policy violation) before
any frame reaches a brain or a speech engine. The agent speaks only once answering-machine
detection has said it may: a machine gets no audio at all.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

import msgspec
import structlog
from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect

from application.calling.conversation import GO, STOP, LiveConversation
from application.calling.ports import AgentTurn, SpeechEngine
from entrypoints.http.blocking import run_blocking

log = structlog.get_logger(__name__)

FIRST_MESSAGE_SECONDS = 10.0
VERDICT_POLL_SECONDS = 0.1
GOODBYE_SECONDS = 10.0  # how long the last words may take to play before the socket closes
POLICY_VIOLATION = 1008
_decode = msgspec.json.Decoder().decode


async def _pump(socket: WebSocket, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
    """Read every message into ``queue`` (None at the end), so slow turns never stall reading."""
    try:
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if text is None and message.get("bytes") is not None:
                text = message["bytes"].decode("utf-8", errors="replace")
            try:
                decoded = _decode(text or "")
            except msgspec.DecodeError:
                continue
            if isinstance(decoded, dict):
                decoded["_at"] = time.perf_counter()
                queue.put_nowait(decoded)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        queue.put_nowait(None)


async def _first(queue: asyncio.Queue[dict[str, Any] | None], *kinds: str, key: str) -> dict[str, Any] | None:
    """The first message whose ``key`` is one of ``kinds`` (skipping ``connected``), or None."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + FIRST_MESSAGE_SECONDS
    while True:
        try:
            message = await asyncio.wait_for(queue.get(), max(0.0, deadline - loop.time()))
        except TimeoutError:
            return None
        if message is None:
            return None
        if message.get(key) == "connected":
            continue
        return message if message.get(key) in kinds else None


async def _verdict(conversation: LiveConversation) -> bool:
    """Wait while answering-machine detection runs; False when the call ended meanwhile."""
    while True:
        verdict = await run_blocking(conversation.verdict)
        if verdict == GO:
            return True
        if verdict == STOP:
            return False
        await asyncio.sleep(VERDICT_POLL_SECONDS)


async def _close(socket: WebSocket, code: int = 1000) -> None:
    try:
        await socket.close(code=code)
    except (RuntimeError, WebSocketDisconnect):
        pass


def _token(parameters: Any) -> Any:
    return parameters.get("token") if isinstance(parameters, dict) else None


class _Session:
    """One voice socket's plumbing: accept, read every message into ``queue``, check the token of
    the first message, wait for the answering-machine verdict; on exit close the conversation
    (the settler takes over) and the socket, and count how it ended."""

    def __init__(self, socket: WebSocket, call_id: str, transport: str) -> None:
        self.socket = socket
        self.transport = transport
        self.container = socket.app.state.container
        self.metrics = self.container.voice_metrics
        self.conversation = LiveConversation(self.container.calling, call_id, transport)
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.reason = "carrier_closed"
        self._opened = False
        self._pump: asyncio.Task[None] | None = None

    async def __aenter__(self) -> _Session:
        await self.socket.accept()
        self._pump = asyncio.create_task(_pump(self.socket, self.queue))
        return self

    async def open(self, kind: str, *, key: str, parameters: Any) -> dict[str, Any] | None:
        """The first message once its token opened the call's session and the agent may speak;
        None when the socket is refused or the call ended while waiting (``reason`` says which)."""
        first = await _first(self.queue, kind, key=key)
        if first is None or not await run_blocking(self.conversation.open, _token(parameters(first))):
            self.reason = "refused"
            return None
        self._opened = True
        if not await _verdict(self.conversation):
            self.reason = "call_ended"
            return None
        return first

    async def __aexit__(self, *_: object) -> None:
        if self._pump is not None:
            self._pump.cancel()
        self.metrics.sessions.labels(self.transport, self.reason).inc()
        if self._opened:
            await run_blocking(self.conversation.close, self.reason)
        await _close(self.socket, POLICY_VIOLATION if self.reason == "refused" else 1000)


# -- conversation relay ---------------------------------------------------------------------------


async def _relay_say(socket: WebSocket, turn: AgentTurn) -> None:
    if turn.say:
        await socket.send_text(json.dumps({"type": "text", "token": turn.say, "last": True}))
    if turn.press_keys:
        await socket.send_text(json.dumps({"type": "sendDigits", "digits": turn.press_keys}))
    if turn.end_call:
        await socket.send_text(json.dumps({"type": "end", "handoffData": json.dumps({"reason": "agent_ended_call"})}))


@websocket("/webhooks/carrier/relay/{call_id:str}", name="carrier_relay_socket")
async def relay_socket(socket: WebSocket, call_id: str) -> None:
    async with _Session(socket, call_id, "relay") as session:
        if await session.open("setup", key="type", parameters=lambda m: m.get("customParameters")) is None:
            return
        conversation, queue = session.conversation, session.queue
        await _relay_say(socket, await run_blocking(conversation.begin))
        partial = ""
        while not conversation.ended:
            message = await queue.get()
            if message is None:
                break
            kind = message.get("type")
            if kind == "prompt":
                partial += str(message.get("voicePrompt") or "")
                if message.get("last", True):
                    heard, partial = partial, ""
                    await _relay_say(socket, await run_blocking(conversation.heard, heard))
                    session.metrics.turn.labels("relay").observe(time.perf_counter() - message["_at"])
            elif kind == "dtmf" and str(message.get("digit") or "") in "0123456789*#":
                await run_blocking(conversation.pressed, str(message["digit"]))
            elif kind == "error":
                log.warning("relay.error", call_id=call_id, description=str(message.get("description"))[:200])
        session.reason = "agent_ended" if conversation.ended else session.reason


# -- media stream -----------------------------------------------------------------------------------


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
        self._work.put_nowait(("pressed", digit, 0.0))

    async def _run(self) -> None:
        while (item := await self._work.get()) is not None:
            kind, value, at = item
            if kind == "pressed":
                await run_blocking(self.conversation.pressed, value)
                continue
            turn = await run_blocking(self.conversation.heard, value)
            replied = await self.speaker.say(turn)
            self.metrics.turn.labels("stream").observe((replied or time.perf_counter()) - at)
            if self.conversation.ended:
                self.frames.put_nowait({"event": "_agent_ended"})  # wake the frame loop
                return

    async def close(self) -> None:
        self._work.put_nowait(None)
        try:
            await asyncio.wait_for(self._task, GOODBYE_SECONDS)
        except TimeoutError:
            self._task.cancel()


@websocket("/webhooks/carrier/stream/{call_id:str}", name="carrier_stream_socket")
async def stream_socket(socket: WebSocket, call_id: str) -> None:
    async with _Session(socket, call_id, "stream") as session:
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
