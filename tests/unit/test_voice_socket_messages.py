"""What the voice sockets send for an agent turn (relay text, keypad digits, end; stream audio and
marks, ``clear`` on barge-in) and the per-call socket token rules."""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import datetime, timedelta, timezone

from adapters.speech.loopback import LoopbackSpeech, UtteranceDecoder
from application.calling.ports import AgentTurn
from domain.calls import stream_token
from entrypoints.http.media_stream import _Speaker
from entrypoints.http.voice_sockets import _relay_say

KEY = b"k" * 32
NOW = datetime(2026, 11, 23, 12, tzinfo=timezone.utc)


class Sent:
    def __init__(self) -> None:
        self.messages: list[dict] = []

    async def send_text(self, text: str) -> None:
        self.messages.append(json.loads(text))


def test_a_relay_turn_sends_text_then_digits_then_end() -> None:
    socket = Sent()
    asyncio.run(_relay_say(socket, AgentTurn(say="Pressing two.", press_keys="2#", end_call=True)))  # type: ignore[arg-type]
    assert [m["type"] for m in socket.messages] == ["text", "sendDigits", "end"]
    assert socket.messages[0] == {"type": "text", "token": "Pressing two.", "last": True}
    assert socket.messages[1]["digits"] == "2#"


def test_a_stream_turn_is_audio_then_a_mark_and_barge_in_clears_it() -> None:
    socket = Sent()
    speaker = _Speaker(socket, "MZ9", LoopbackSpeech())  # type: ignore[arg-type]

    async def scenario() -> None:
        await speaker.say(AgentTurn(say="Hello there"))
        await speaker.barge_in()
        await speaker.barge_in()  # nothing pending any more: no second clear

    asyncio.run(scenario())
    kinds = [m["event"] for m in socket.messages]
    assert kinds[-2:] == ["mark", "clear"] and set(kinds[:-2]) == {"media"}
    decoder = UtteranceDecoder()
    for message in socket.messages[:-2]:
        decoder.feed(base64.b64decode(message["media"]["payload"]))
    assert decoder.flush() == "Hello there"
    assert speaker.played.is_set() and not speaker.pending


def test_socket_tokens_are_bound_to_their_call_and_expire() -> None:
    token = stream_token.issue(KEY, "cll_a", NOW, 300)
    assert stream_token.verify(KEY, token, "cll_a", NOW + timedelta(seconds=299)) is not None
    assert stream_token.verify(KEY, token, "cll_b", NOW) is None  # another call's token
    assert stream_token.verify(KEY, token, "cll_a", NOW + timedelta(seconds=301)) is None  # expired
    assert stream_token.verify(b"x" * 32, token, "cll_a", NOW) is None  # another key
    nonce, expires, mac = token.split(".")
    assert stream_token.verify(KEY, f"{nonce}.{int(expires) + 600}.{mac}", "cll_a", NOW) is None  # stretched
    for junk in (None, "", "a.b", "a.b.c", 42, "x" * 500):
        assert stream_token.verify(KEY, junk, "cll_a", NOW) is None
