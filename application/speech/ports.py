"""Ports of streaming speech: recognition sessions, synthesis streams and voice activity, over
20 ms μ-law 8 kHz frames (160 bytes). Plain values only: vendor messages stop in the adapters."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

FRAME_BYTES = 160  # 20 ms of μ-law at 8 kHz (one Twilio media message)
FRAME_MS = 20
SAMPLE_RATE = 8000


@dataclass(frozen=True, kw_only=True)
class SpeechStarted:
    """The caller began speaking, ``at_ms`` into the stream."""

    at_ms: int


@dataclass(frozen=True, kw_only=True)
class SpeechEnded:
    """The caller stopped speaking, ``at_ms`` into the stream (silence, not yet an end of turn)."""

    at_ms: int


@dataclass(frozen=True, kw_only=True)
class InterimTranscript:
    """A guess at words still being spoken; a later interim or final replaces it."""

    text: str
    start_ms: int
    end_ms: int


@dataclass(frozen=True, kw_only=True)
class FinalTranscript:
    """Words the recogniser will not revise. ``end_of_turn`` is the recogniser's own judgement
    that the caller has finished (Deepgram ``speech_final``, Flux ``EndOfTurn``); False when it
    has none or thinks more is coming."""

    text: str
    start_ms: int
    end_ms: int
    end_of_turn: bool = False


RecognitionEvent = SpeechStarted | SpeechEnded | InterimTranscript | FinalTranscript


class RecognitionSession(Protocol):
    """One caller's audio, recognised as it arrives. ``feed`` is called on the event loop for every
    frame (50 a second): it only queues; the engine's I/O runs elsewhere. Events are read by one
    task with ``async for event in session.events()``."""

    def feed(self, frame: bytes) -> None:
        """One 20 ms μ-law frame, in stream order."""
        ...

    def events(self) -> AsyncIterator[RecognitionEvent]:
        """Events in stream order; ends after ``close`` once the last final transcript is out."""
        ...

    async def close(self) -> None:
        """No more audio: the recogniser finishes what it heard, then ``events`` ends."""
        ...


class SpeechRecogniser(Protocol):
    name: str

    async def start(self, *, language: str) -> RecognitionSession:
        """A session for one call's inbound audio (a cloud engine connects here)."""
        ...


@dataclass(frozen=True, kw_only=True)
class SpokenFrame:
    """20 ms of synthesised μ-law and the ``say`` it speaks (0 for the first piece of the reply),
    so the transport can tell how far playback got (a Twilio ``mark`` per piece)."""

    audio: bytes
    piece: int


class SynthesisStream(Protocol):
    """One reply being spoken: text goes in piece by piece (a sentence at a time as the brain
    writes it), frames come out as soon as they exist."""

    def say(self, text: str) -> None:
        """Queue the next piece of the reply."""
        ...

    def end(self) -> None:
        """No more text: ``frames`` ends after the last piece's last frame."""
        ...

    def frames(self) -> AsyncIterator[SpokenFrame]:
        ...

    def cancel(self) -> None:
        """Barge-in: drop queued text and audio; ``frames`` yields nothing more and ends.
        Idempotent; safe after ``end``."""
        ...


class SpeechSynthesiser(Protocol):
    name: str

    def open(self, *, language: str, voice: str | None = None) -> SynthesisStream:
        """A stream for one reply (a cloud engine's context; a new one after a barge-in)."""
        ...


class VoiceActivity(Protocol):
    """Whether a 20 ms μ-law frame holds speech; cheap enough for every frame on the event loop."""

    def is_speech(self, frame: bytes) -> bool: ...
