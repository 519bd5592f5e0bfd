"""Turn-taking strategies (issue 32): the caller's turn ends after ``endpointing_ms`` of silence
following speech, not at a shorter pause; a wall-clock ``turn_timeout_ms`` from the turn's opening
ends it whatever voice activity says (a silent caller, hold music: livekit/agents#5862)."""

from __future__ import annotations

from typing import Any

import pytest

from application.speech.ports import FinalTranscript, InterimTranscript, SpeechStarted
from application.speech.turns import RecogniserEndpointing, TurnEnded, TurnSettings, VadEndpointing

SPEECH = b"\x01" * 160
SILENCE = b"\xff" * 160


class MarkedVoice:
    """Voice activity that believes the frames: ``SPEECH`` is speech, anything else is not."""

    def is_speech(self, frame: bytes) -> bool:
        return frame == SPEECH


class Clock:
    """The wall clock, advanced by hand (frames advance it 20 ms each when ``feed`` does)."""

    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def feed(endpointing: VadEndpointing, clock: Clock, frame: bytes, ms: int) -> list[TurnEnded]:
    ended = []
    for _ in range(ms // 20):
        clock.now += 20
        if (end := endpointing.feed(frame)) is not None:
            ended.append(end)
    return ended


def vad_turn(**settings: Any) -> tuple[VadEndpointing, Clock]:
    clock = Clock()
    endpointing = VadEndpointing(MarkedVoice(), TurnSettings(**settings), clock)
    endpointing.open()
    return endpointing, clock


def test_a_400_ms_pause_does_not_end_the_turn_but_600_ms_of_silence_does() -> None:
    endpointing, clock = vad_turn(endpointing_ms=500)
    assert feed(endpointing, clock, SPEECH, 800) == []
    assert feed(endpointing, clock, SILENCE, 400) == []  # a pause mid-sentence
    assert feed(endpointing, clock, SPEECH, 600) == []
    ended = feed(endpointing, clock, SILENCE, 600)
    assert [end.reason for end in ended] == ["endpoint"]  # once, at 500 ms of silence
    assert ended[0].waited_ms == 800 + 400 + 600 + 500


def test_silence_before_the_caller_speaks_is_not_an_end_of_turn() -> None:
    endpointing, clock = vad_turn(endpointing_ms=500, turn_timeout_ms=5_000)
    assert feed(endpointing, clock, SILENCE, 2_000) == []


def test_a_silent_caller_ends_the_turn_at_the_timeout() -> None:
    endpointing, clock = vad_turn(turn_timeout_ms=3_000)
    ended = feed(endpointing, clock, SILENCE, 4_000)
    assert ended == [TurnEnded(reason="timeout", waited_ms=3_000)]


def test_hold_music_heard_as_speech_forever_ends_at_the_timeout() -> None:
    endpointing, clock = vad_turn(turn_timeout_ms=3_000)
    assert feed(endpointing, clock, SPEECH, 10_000) == [TurnEnded(reason="timeout", waited_ms=3_000)]


def test_the_timeout_fires_by_poll_when_no_frames_arrive() -> None:
    endpointing, clock = vad_turn(turn_timeout_ms=3_000)
    clock.now += 2_999
    assert endpointing.poll() is None
    clock.now += 1
    assert endpointing.poll() == TurnEnded(reason="timeout", waited_ms=3_000)
    assert endpointing.poll() is None  # reported once


def test_the_timeout_counts_from_when_the_turn_opened() -> None:
    endpointing, clock = vad_turn(turn_timeout_ms=3_000)
    feed(endpointing, clock, SILENCE, 4_000)
    endpointing.open()  # the agent spoke again; a new turn
    assert feed(endpointing, clock, SILENCE, 2_000) == []


def recogniser_turn(timeout_ms: int = 5_000) -> tuple[RecogniserEndpointing, Clock]:
    clock = Clock()
    endpointing = RecogniserEndpointing(TurnSettings(turn_timeout_ms=timeout_ms), clock)
    endpointing.open()
    return endpointing, clock


def test_the_recogniser_s_end_of_turn_ends_the_turn() -> None:
    endpointing, clock = recogniser_turn()
    assert endpointing.observe(SpeechStarted(at_ms=100)) is None
    assert endpointing.observe(InterimTranscript(text="on tues", start_ms=100, end_ms=600)) is None
    assert endpointing.observe(FinalTranscript(text="On Tuesday,", start_ms=100, end_ms=900)) is None
    clock.now += 1_500
    end = endpointing.observe(FinalTranscript(text="at ten.", start_ms=900, end_ms=1_400, end_of_turn=True))
    assert end == TurnEnded(reason="endpoint", waited_ms=1_500)
    assert endpointing.heard == "On Tuesday, at ten."


def test_an_end_of_turn_without_words_is_noise() -> None:
    endpointing, clock = recogniser_turn()
    assert endpointing.observe(FinalTranscript(text=" ", start_ms=0, end_ms=300, end_of_turn=True)) is None


def test_the_recogniser_strategy_has_the_same_timeout_backstop() -> None:
    endpointing, clock = recogniser_turn(timeout_ms=4_000)
    clock.now += 4_000
    assert endpointing.observe(InterimTranscript(text="la la", start_ms=0, end_ms=4_000)) == TurnEnded(
        reason="timeout", waited_ms=4_000)


@pytest.mark.parametrize("field", ["endpointing_ms", "turn_timeout_ms", "barge_in_min_ms"])
@pytest.mark.parametrize("value", [0, -20])
def test_settings_refuse_a_zero_or_negative_duration(field: str, value: int) -> None:
    with pytest.raises(ValueError, match=field):
        TurnSettings(**{field: value})  # type: ignore[arg-type]


def test_settings_refuse_an_endpointing_longer_than_the_timeout() -> None:
    with pytest.raises(ValueError, match="shorter than"):
        TurnSettings(endpointing_ms=5_000, turn_timeout_ms=2_000)


def test_backchannels_fall_back_from_region_to_language() -> None:
    settings = TurnSettings(backchannels={"en": frozenset({"ok"}), "en-GB": frozenset({"cheers"})})
    assert settings.backchannels_for("en-US") == frozenset({"ok"})
    assert settings.backchannels_for("en-GB") == frozenset({"cheers"})
    assert settings.backchannels_for("xx") == frozenset()
