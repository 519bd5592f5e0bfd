"""Barge-in (issue 32): the caller speaking over the agent for ``barge_in_min_ms`` with real words
stops it, once; a backchannel (livekit/agents#7105) or a short blip does not. What the agent had
not said is cut: never said later (pipecat#754), marked in the transcript."""

from __future__ import annotations

from typing import Any

import pytest

from application.speech.barge_in import CUT_MARKER, BargeIn, CutReply, Interrupt, split_at_playback
from application.speech.ports import FinalTranscript, InterimTranscript, SpeechEnded, SpeechStarted
from application.speech.turns import TurnSettings


def speaking_agent(language: str = "en-US", **settings: Any) -> BargeIn:
    barge_in = BargeIn(TurnSettings(**settings), language)
    barge_in.agent_started()
    return barge_in


def test_a_backchannel_over_the_agent_does_not_interrupt() -> None:
    barge_in = speaking_agent()
    assert barge_in.observe(SpeechStarted(at_ms=1_000)) is None
    assert barge_in.observe(InterimTranscript(text="Mm-", start_ms=1_000, end_ms=1_200)) is None
    assert barge_in.observe(FinalTranscript(text="Mm-hmm, okay.", start_ms=1_000, end_ms=1_700)) is None
    assert barge_in.observe(SpeechEnded(at_ms=1_700)) is None


def test_a_real_sentence_of_the_minimum_length_interrupts_once() -> None:
    barge_in = speaking_agent(barge_in_min_ms=300)
    barge_in.observe(SpeechStarted(at_ms=2_000))
    assert barge_in.observe(InterimTranscript(text="wait", start_ms=2_000, end_ms=2_200)) is None  # 200 ms
    decision = barge_in.observe(InterimTranscript(text="wait I need", start_ms=2_000, end_ms=2_300))
    assert decision == Interrupt(at_ms=2_300, heard="wait I need")
    assert barge_in.observe(FinalTranscript(text="Wait, I need to change it.", start_ms=2_000, end_ms=3_000)) is None


def test_a_short_blip_does_not_interrupt() -> None:
    barge_in = speaking_agent(barge_in_min_ms=300)
    barge_in.observe(SpeechStarted(at_ms=500))
    assert barge_in.observe(FinalTranscript(text="No", start_ms=500, end_ms=700)) is None
    barge_in.observe(SpeechEnded(at_ms=700))
    barge_in.observe(SpeechStarted(at_ms=3_000))  # a new utterance: the blip's time does not add up
    assert barge_in.observe(FinalTranscript(text="so", start_ms=3_000, end_ms=3_150)) is None


def test_a_backchannel_followed_by_words_interrupts() -> None:
    barge_in = speaking_agent()
    barge_in.observe(SpeechStarted(at_ms=0))
    assert barge_in.observe(FinalTranscript(text="Okay.", start_ms=0, end_ms=400)) is None
    assert barge_in.observe(InterimTranscript(text="but Friday", start_ms=500, end_ms=900)) == Interrupt(
        at_ms=900, heard="Okay. but Friday")


def test_speech_while_the_agent_is_silent_is_no_barge_in() -> None:
    barge_in = BargeIn(TurnSettings(), "en")
    assert barge_in.observe(FinalTranscript(text="Hello there", start_ms=0, end_ms=900)) is None
    barge_in.agent_started()
    barge_in.agent_stopped()
    assert barge_in.observe(FinalTranscript(text="Hello again", start_ms=1_000, end_ms=1_900)) is None


def test_each_agent_utterance_can_be_interrupted_again() -> None:
    barge_in = speaking_agent()
    assert barge_in.observe(FinalTranscript(text="Stop please", start_ms=0, end_ms=500)) is not None
    barge_in.agent_started()
    assert barge_in.observe(FinalTranscript(text="No, stop", start_ms=900, end_ms=1_400)) is not None


def test_backchannels_are_per_language_and_configurable() -> None:
    spanish = speaking_agent("es-MX")
    assert spanish.is_backchannel("¡Sí, vale!")
    assert not spanish.is_backchannel("okay yeah wait")
    custom = BargeIn(TurnSettings(backchannels={"en": frozenset({"cheers"})}), "en")
    assert custom.is_backchannel("Cheers.")
    assert not custom.is_backchannel("okay")


SENTENCES = ["Your appointment is on Tuesday.", "It lasts one hour.", "Please bring your card."]


def test_the_cut_part_is_what_was_not_played() -> None:
    cut = split_at_playback(SENTENCES, played=1)
    assert cut == CutReply(spoken="Your appointment is on Tuesday.",
                           unsaid="It lasts one hour. Please bring your card.")
    assert cut.transcript_line() == f"Your appointment is on Tuesday. {CUT_MARKER}"


def test_a_sentence_cut_midway_is_split_at_a_word() -> None:
    cut = split_at_playback(SENTENCES, played=1, fraction=0.5)  # "It lasts one hour." half played
    assert cut.spoken == "Your appointment is on Tuesday. It lasts"
    assert cut.unsaid == "one hour. Please bring your card."


def test_a_reply_played_to_the_end_has_nothing_cut() -> None:
    whole = split_at_playback(SENTENCES, played=3)
    assert not whole.cut
    assert whole.transcript_line() == " ".join(SENTENCES)


def test_a_reply_cut_before_its_first_word_is_only_the_marker() -> None:
    assert split_at_playback(SENTENCES, played=0).transcript_line() == CUT_MARKER


def test_playback_progress_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError):
        split_at_playback(SENTENCES, played=0, fraction=1.5)
