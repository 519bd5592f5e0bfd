"""Speaking a reply as it is written (issue 32): sentences reach the synthesiser as soon as they
are complete, and a barge-in stops the frames at once; the cut part never reaches it later."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from application.speech.playback import ReplyPlayback
from application.speech.ports import SpokenFrame

FRAMES_PER_PIECE = 5


class FakeSynthesis:
    """Five frames a piece, made as pieces arrive. ``sloppy``: it still hands out a frame it had in
    hand after ``cancel`` (a cloud engine's audio already on the wire)."""

    def __init__(self, *, sloppy: bool = False) -> None:
        self.said: list[str] = []
        self.cancelled = False
        self.handed_out_after_cancel = 0
        self.sloppy = sloppy
        self._ended = False
        self._wake = asyncio.Event()

    def say(self, text: str) -> None:
        self.said.append(text)
        self._wake.set()

    def end(self) -> None:
        self._ended = True
        self._wake.set()

    def cancel(self) -> None:
        self.cancelled = True
        self._wake.set()

    async def frames(self) -> AsyncIterator[SpokenFrame]:
        piece = 0
        while True:
            if piece < len(self.said):
                for n in range(FRAMES_PER_PIECE):
                    if self.cancelled:
                        if not self.sloppy or self.handed_out_after_cancel:
                            return
                        self.handed_out_after_cancel += 1
                    yield SpokenFrame(audio=bytes([piece, n]) * 80, piece=piece)
                piece += 1
            elif self._ended or self.cancelled:
                return
            else:
                self._wake.clear()
                await self._wake.wait()


def test_the_first_sentence_is_spoken_before_the_reply_is_written() -> None:
    async def scenario() -> None:
        synthesis = FakeSynthesis()
        sent: list[bytes] = []

        async def send(frame: bytes) -> None:
            sent.append(frame)
            await asyncio.sleep(0)

        playback = ReplyPlayback(synthesis, send)
        player = asyncio.create_task(playback.play())
        playback.write("Your appointment is on Tuesday. It la")
        for _ in range(20):
            await asyncio.sleep(0)
        assert len(sent) == FRAMES_PER_PIECE  # the first sentence is out, the second is not written
        playback.write("sts one hour.")
        playback.finish()
        cut = await player
        assert synthesis.said == ["Your appointment is on Tuesday.", "It lasts one hour."]
        assert len(sent) == 2 * FRAMES_PER_PIECE
        assert not cut.cut

    asyncio.run(scenario())


def interrupted_after(frames: int, *, sloppy: bool) -> tuple[ReplyPlayback, FakeSynthesis, list[bytes]]:
    synthesis = FakeSynthesis(sloppy=sloppy)
    sent: list[bytes] = []
    playback = ReplyPlayback(synthesis, lambda frame: _record(sent, frame))
    playback.write("Your appointment is on Tuesday. It lasts one hour. Please bring your card.")
    playback.finish()

    async def send_then_barge_in() -> None:
        async def watch() -> None:
            for _ in range(10_000):
                if len(sent) >= frames:
                    break
                await asyncio.sleep(0)
            playback.interrupt()

        await asyncio.gather(playback.play(), watch())

    asyncio.run(send_then_barge_in())
    return playback, synthesis, sent


async def _record(sent: list[bytes], frame: bytes) -> None:
    sent.append(frame)
    await asyncio.sleep(0)


def test_a_barge_in_stops_the_frames_at_once() -> None:
    playback, synthesis, sent = interrupted_after(7, sloppy=False)
    assert synthesis.cancelled
    assert len(sent) == 7


def test_a_frame_the_engine_hands_out_after_cancel_is_not_sent() -> None:
    playback, synthesis, sent = interrupted_after(7, sloppy=True)
    assert synthesis.handed_out_after_cancel == 1
    assert len(sent) == 7


def test_the_cut_part_is_never_said_later() -> None:
    playback, synthesis, sent = interrupted_after(7, sloppy=False)  # midway through sentence two
    cut = playback.interrupt()
    assert cut.spoken == "Your appointment is on Tuesday."
    assert cut.unsaid == "It lasts one hour. Please bring your card."
    playback.write("And one more thing. ")
    playback.finish()
    assert synthesis.said == ["Your appointment is on Tuesday.", "It lasts one hour.", "Please bring your card."]
