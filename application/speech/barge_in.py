"""Barge-in: when the caller's speech over the agent stops the agent, and what the agent had not
said when it was stopped (never said later, marked as cut in the transcript)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from application.speech.ports import (
    FinalTranscript, InterimTranscript, RecognitionEvent, SpeechStarted,
)
from application.speech.turns import TurnSettings

# Appended to the agent's line when it was cut off. The unsaid words stay out of the transcript so
# the outcome extractor never credits the agent with them; ``CutReply.unsaid`` keeps them for logs.
CUT_MARKER = "… [cut]"

_NOT_WORD = re.compile(r"[^\w']+")


def words(text: str) -> tuple[str, ...]:
    """``text`` as lower-case words: punctuation and hyphens are spaces ("Mm-hmm." is mm, hmm)."""
    return tuple(_NOT_WORD.sub(" ", text.replace("’", "'").lower()).split())


@dataclass(frozen=True, kw_only=True)
class Interrupt:
    """Stop the agent: the caller has taken the turn, ``at_ms`` into the stream."""

    at_ms: int
    heard: str


class BargeIn:
    """Decides, while the agent speaks, whether the caller is taking the turn: their current
    utterance (finals since they started speaking plus the latest interim) spans at least
    ``barge_in_min_ms`` and holds a word that is not a backchannel. Says ``Interrupt`` once per
    agent utterance. Needs transcripts: voice activity alone cannot tell "uh-huh" from "wait"."""

    def __init__(self, settings: TurnSettings, language: str) -> None:
        self._min_ms = settings.barge_in_min_ms
        self._backchannel_words = frozenset(
            word for phrase in settings.backchannels_for(language) for word in words(phrase))
        self._agent_speaking = False
        self._interrupted = False
        self._finals: list[str] = []
        self._interim = ""
        self._start_ms: int | None = None
        self._end_ms = 0

    def agent_started(self) -> None:
        self._agent_speaking = True
        self._interrupted = False
        self._reset_utterance()

    def agent_stopped(self) -> None:
        self._agent_speaking = False

    def is_backchannel(self, text: str) -> bool:
        """Every word of ``text`` is a backchannel word ("Okay, yeah." is; "okay, wait" is not)."""
        return all(word in self._backchannel_words for word in words(text))

    def observe(self, event: RecognitionEvent) -> Interrupt | None:
        if isinstance(event, SpeechStarted):
            self._reset_utterance()
            return None
        if not isinstance(event, InterimTranscript | FinalTranscript):
            return None
        if not event.text.strip():
            return None
        self._start_ms = event.start_ms if self._start_ms is None else min(self._start_ms, event.start_ms)
        self._end_ms = max(self._end_ms, event.end_ms)
        if isinstance(event, FinalTranscript):
            self._finals.append(event.text.strip())
            self._interim = ""
        else:
            self._interim = event.text.strip()
        if not self._agent_speaking or self._interrupted:
            return None
        heard = " ".join([*self._finals, self._interim]).strip()
        if self._end_ms - self._start_ms < self._min_ms or self.is_backchannel(heard):
            return None
        self._interrupted = True
        return Interrupt(at_ms=self._end_ms, heard=heard)

    def _reset_utterance(self) -> None:
        self._finals = []
        self._interim = ""
        self._start_ms = None
        self._end_ms = 0


@dataclass(frozen=True, kw_only=True)
class CutReply:
    """A reply split where playback stopped: ``spoken`` reached the caller, ``unsaid`` never will."""

    spoken: str
    unsaid: str

    @property
    def cut(self) -> bool:
        return bool(self.unsaid)

    def transcript_line(self) -> str:
        """The agent's line as the transcript shows it: what was said, then the cut marker."""
        if not self.cut:
            return self.spoken
        return f"{self.spoken} {CUT_MARKER}" if self.spoken else CUT_MARKER


def split_at_playback(sentences: Sequence[str], played: int, fraction: float = 0.0) -> CutReply:
    """Split queued ``sentences`` after ``played`` whole sentences plus ``fraction`` (0–1) of the
    next one's audio. A partly played sentence is split at a word, in proportion to its words
    (speech runs at a roughly even rate); a word that had only begun counts as unsaid."""
    if played < 0 or not 0.0 <= fraction <= 1.0:
        raise ValueError(f"played must be >= 0 and fraction within 0..1, not {played}, {fraction}")
    spoken = [sentence.strip() for sentence in sentences[:played]]
    unsaid = [sentence.strip() for sentence in sentences[played:]]
    if unsaid and fraction > 0.0:
        current = unsaid[0].split()
        heard = math.floor(len(current) * fraction)
        if heard:
            spoken.append(" ".join(current[:heard]))
        unsaid[0] = " ".join(current[heard:])
    return CutReply(spoken=" ".join(s for s in spoken if s), unsaid=" ".join(s for s in unsaid if s))
