"""The carrier's voice sockets (ARCHITECTURE.md §8): what both transports share, and conversation
relay (text both ways); ``media_stream`` has the media stream (μ-law 8 kHz audio both ways, through
a speech engine). Both drive the same ``LiveConversation``.

A socket must present its call's token in its first message (relay ``setup`` or stream ``start``,
``customParameters.token``); without a valid, unused one it is closed (policy violation) before
any frame reaches a brain or a speech engine. The agent speaks only once answering-machine
detection has said it may: a machine gets no audio at all.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import msgspec
import structlog
from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect

from application.calling.conversation import GO, STOP, LiveConversation
from application.calling.ports import AgentTurn
from entrypoints.http.blocking import run_blocking
from entrypoints.http.services import HttpServices

log = structlog.get_logger(__name__)

FIRST_MESSAGE_SECONDS = 10.0
VERDICT_POLL_SECONDS = 0.1
GOODBYE_SECONDS = 10.0  # how long the last words may take to play before the socket closes
POLICY_VIOLATION = 1008
_decode = msgspec.json.Decoder().decode


async def _pump(socket: WebSocket, queue: asyncio.Queue[dict[str, Any] | None],
                route: Callable[[dict[str, Any]], bool] | None = None) -> None:
    """Read every message into ``queue`` (None at the end), so slow turns never stall reading;
    ``route`` may handle a message where it is read instead (True: handled)."""
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
                if route is None or not route(decoded):
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


class SocketSession:
    """One voice socket's plumbing: accept, read every message into ``queue``, check the token of
    the first message, wait for the answering-machine verdict; on exit close the conversation
    (the settler takes over) and the socket, and count how it ended."""

    def __init__(self, socket: WebSocket, call_id: str, transport: str) -> None:
        self.socket = socket
        self.transport = transport
        self.services: HttpServices = socket.app.state.services
        self.metrics = self.services.voice_metrics
        self.conversation = LiveConversation(self.services.calling.calling, call_id, transport)
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        # Handles a message where it is read (the stream's audio frames); None: everything is queued.
        self.inline: Callable[[dict[str, Any]], bool] | None = None
        self.reason = "carrier_closed"
        self._opened = False
        self._pump: asyncio.Task[None] | None = None
        self._recording: asyncio.Task[None] | None = None  # asks the carrier to record, beside the conversation

    async def __aenter__(self) -> SocketSession:
        await self.socket.accept()
        self._pump = asyncio.create_task(_pump(self.socket, self.queue, self._route))
        return self

    def _route(self, message: dict[str, Any]) -> bool:
        inline = self.inline
        return inline is not None and inline(message)

    async def open(self, kind: str, *, key: str, parameters: Any) -> dict[str, Any] | None:
        """The first message once its token opened the call's session and the agent may speak;
        None when the socket is refused or the call ended while waiting (``reason`` says which)."""
        first = await _first(self.queue, kind, key=key)
        if first is None or not await run_blocking(self.conversation.open, _token(parameters(first))):
            self.reason = "refused"
            return None
        self._opened = True
        self._recording = asyncio.create_task(run_blocking(self.conversation.start_recording))
        if not await _verdict(self.conversation):
            self.reason = "call_ended"
            return None
        return first

    async def __aexit__(self, *_: object) -> None:
        if self._pump is not None:
            self._pump.cancel()
        self.metrics.sessions.labels(self.transport, self.reason).inc()
        if self._recording is not None:
            (failed,) = await asyncio.gather(self._recording, return_exceptions=True)
            if isinstance(failed, Exception):  # the carrier's refusals are logged inside; never the call's failure
                log.error("call.recording_start_failed", call_id=self.conversation.call_id,
                          error=type(failed).__name__, exc_info=failed)
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
    async with SocketSession(socket, call_id, "relay") as session:
        if await session.open("setup", key="type", parameters=lambda m: m.get("customParameters")) is None:
            return
        conversation, queue = session.conversation, session.queue
        await _relay_say(socket, await run_blocking(conversation.begin))
        partial = ""
        while not conversation.ended:
            wait = conversation.keys_wait()  # a keypad entry that ends on silence is under way
            try:
                message = await (queue.get() if wait is None else asyncio.wait_for(queue.get(), wait))
            except TimeoutError:
                turn = await run_blocking(conversation.keys_timed_out)
                if turn is not None:
                    await _relay_say(socket, turn)
                continue
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
                turn = await run_blocking(conversation.pressed, str(message["digit"]))
                if turn is not None:  # a flow's keypad step is complete: the agent goes on
                    await _relay_say(socket, turn)
            elif kind == "error":
                log.warning("relay.error", call_id=call_id, description=str(message.get("description"))[:200])
        session.reason = "agent_ended" if conversation.ended else session.reason
