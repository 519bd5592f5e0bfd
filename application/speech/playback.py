"""Speaks one reply while the brain writes it: text pieces become sentences, sentences go to a
synthesis stream, frames go out as they come; a barge-in stops it at the next frame."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from application.speech.barge_in import CutReply, split_at_playback
from application.speech.ports import SynthesisStream
from application.speech.sentences import SentenceSplitter

Send = Callable[[bytes], Awaitable[None]]


class ReplyPlayback:
    """One agent reply on one synthesis stream. ``write`` and ``finish`` take the brain's text as
    it comes; ``play`` sends the frames (``send`` is expected to pace them at real time) until the
    reply is over or ``interrupt`` is called. After ``interrupt`` no frame is sent and no text
    reaches the synthesiser again: the cut part is never said later.

    A sentence counts as spoken once its last frame was sent; one cut midway counts as unsaid, so
    the transcript never claims words the caller may not have heard."""

    def __init__(self, stream: SynthesisStream, send: Send, *, splitter: SentenceSplitter | None = None) -> None:
        self._stream = stream
        self._send = send
        self._splitter = splitter or SentenceSplitter()
        self._sentences: list[str] = []
        self._finished = False
        self._stopped = False
        self._current = 0  # the piece whose frames are being sent
        self.frames_sent = 0

    @property
    def sentences(self) -> list[str]:
        """The sentences handed to the synthesiser so far, in order."""
        return list(self._sentences)

    def write(self, text: str) -> None:
        if self._stopped or self._finished:
            return
        for sentence in self._splitter.feed(text):
            self._say(sentence)

    def finish(self) -> None:
        """The brain's reply is complete."""
        if self._stopped or self._finished:
            return
        for sentence in self._splitter.flush():
            self._say(sentence)
        self._finished = True
        self._stream.end()

    async def play(self) -> CutReply:
        """Send the reply's frames; what was spoken and what was cut."""
        async for frame in self._stream.frames():
            if self._stopped:
                break  # a frame the engine had in hand as it was cancelled
            self._current = frame.piece
            await self._send(frame.audio)
            self.frames_sent += 1
        if not self._stopped:
            self._current = len(self._sentences)
        return self.outcome()

    def interrupt(self) -> CutReply:
        """Barge-in: stop now and cancel the synthesis; what was spoken and what was cut."""
        if not self._stopped:
            self._stopped = True
            self._stream.cancel()
        return self.outcome()

    def outcome(self) -> CutReply:
        return split_at_playback(self._sentences, min(self._current, len(self._sentences)))

    def _say(self, sentence: str) -> None:
        self._sentences.append(sentence)
        self._stream.say(sentence)
