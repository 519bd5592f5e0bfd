"""When the caller's turn ends: turn-taking settings and two endpointing strategies, one on voice
activity with a silence timer, one on the recogniser's own end-of-turn events. Pure logic: time
comes in as milliseconds, from the audio (20 ms a frame) or from a clock that is passed in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from application.speech.ports import FRAME_MS, FinalTranscript, RecognitionEvent, VoiceActivity

Clock = Callable[[], int]  # monotonic milliseconds (wall time, not audio time)

# Words a listener says to show they are following, not to take the turn (per language, primary
# subtag). Compared after normalising case, punctuation and hyphens ("Mm-hmm." is "mm hmm").
BACKCHANNELS: Mapping[str, frozenset[str]] = MappingProxyType({
    "en": frozenset({"uh-huh", "uh huh", "mhm", "mm-hmm", "hmm", "ok", "okay", "yeah", "yep",
                     "right", "sure", "alright", "all right"}),
    "es": frozenset({"sí", "ajá", "vale", "claro", "ok", "okay", "mhm"}),
    "fr": frozenset({"oui", "ouais", "d'accord", "ok", "okay", "mhm", "hmm"}),
    "de": frozenset({"ja", "genau", "okay", "ok", "mhm", "hmm", "stimmt"}),
})


@dataclass(frozen=True, kw_only=True)
class TurnSettings:
    """How the agent takes turns on a call (to hang on a voice profile).

    ``endpointing_ms``: silence after speech that ends the caller's turn; a shorter pause is a
    pause. ``turn_timeout_ms``: the longest wait for the caller's turn on the wall clock, counted
    from when the turn opened (the agent stopped speaking), whatever voice activity says: a
    silent caller and hold music both end there. ``barge_in_min_ms``: how long the caller must
    speak over the agent, with words that are not a backchannel, to stop it."""

    endpointing_ms: int = 500
    turn_timeout_ms: int = 10_000
    barge_in_min_ms: int = 300
    backchannels: Mapping[str, frozenset[str]] = field(default_factory=lambda: BACKCHANNELS)

    def __post_init__(self) -> None:
        for name in ("endpointing_ms", "turn_timeout_ms", "barge_in_min_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive number of milliseconds, not {value!r}")
        if self.endpointing_ms >= self.turn_timeout_ms:
            raise ValueError(f"endpointing_ms ({self.endpointing_ms}) must be shorter than "
                             f"turn_timeout_ms ({self.turn_timeout_ms})")
        frozen = {language.lower(): frozenset(words) for language, words in self.backchannels.items()}
        object.__setattr__(self, "backchannels", MappingProxyType(frozen))

    def backchannels_for(self, language: str) -> frozenset[str]:
        """The backchannels of ``language`` ("en-US" falls back to "en"); none when unknown."""
        tag = language.lower()
        return self.backchannels.get(tag) or self.backchannels.get(tag.split("-")[0], frozenset())


@dataclass(frozen=True, kw_only=True)
class TurnEnded:
    """The caller's turn is over: ``endpoint`` (they finished) or ``timeout`` (the wait ran out)."""

    reason: Literal["endpoint", "timeout"]
    waited_ms: int  # wall time since the turn opened


class _TurnTimer:
    """The ``turn_timeout_ms`` backstop shared by the strategies."""

    def __init__(self, clock: Clock, timeout_ms: int) -> None:
        self._clock = clock
        self._timeout_ms = timeout_ms
        self._opened_at: int | None = None
        self.done = True

    def open(self) -> None:
        self._opened_at = self._clock()
        self.done = False

    def waited_ms(self) -> int:
        return 0 if self._opened_at is None else self._clock() - self._opened_at

    def end(self, reason: Literal["endpoint", "timeout"]) -> TurnEnded:
        self.done = True
        return TurnEnded(reason=reason, waited_ms=self.waited_ms())

    def expired(self) -> TurnEnded | None:
        if self.done or self.waited_ms() < self._timeout_ms:
            return None
        return self.end("timeout")


class VadEndpointing:
    """The turn ends once the caller has spoken and ``endpointing_ms`` of non-speech followed,
    counted in audio (20 ms a frame, so network jitter does not stretch a pause); or at
    ``turn_timeout_ms`` on the wall clock. Each ``TurnEnded`` is returned once, until ``open``."""

    def __init__(self, vad: VoiceActivity, settings: TurnSettings, clock: Clock) -> None:
        self._vad = vad
        self._settings = settings
        self._timer = _TurnTimer(clock, settings.turn_timeout_ms)
        self._heard_speech = False
        self._silence_ms = 0

    def open(self) -> None:
        """The caller's turn begins (the agent finished speaking, or was cut off)."""
        self._timer.open()
        self._heard_speech = False
        self._silence_ms = 0

    def feed(self, frame: bytes) -> TurnEnded | None:
        if self._timer.done:
            return None
        if self._vad.is_speech(frame):
            self._heard_speech = True
            self._silence_ms = 0
        elif self._heard_speech:
            self._silence_ms += FRAME_MS
            if self._silence_ms >= self._settings.endpointing_ms:
                return self._timer.end("endpoint")
        return self._timer.expired()

    def poll(self) -> TurnEnded | None:
        """The timeout alone, for a timer while no frames arrive (a stalled stream)."""
        return self._timer.expired()


class RecogniserEndpointing:
    """The turn ends on the recogniser's own end of turn (a final transcript flagged
    ``end_of_turn``) once the caller has said words this turn; or at ``turn_timeout_ms`` on the
    wall clock. An end of turn with no words (noise) is ignored."""

    def __init__(self, settings: TurnSettings, clock: Clock) -> None:
        self._timer = _TurnTimer(clock, settings.turn_timeout_ms)
        self._words: list[str] = []

    @property
    def heard(self) -> str:
        """The final words of this turn so far."""
        return " ".join(self._words)

    def open(self) -> None:
        self._timer.open()
        self._words = []

    def observe(self, event: RecognitionEvent) -> TurnEnded | None:
        if self._timer.done:
            return None
        if isinstance(event, FinalTranscript):
            if event.text.strip():
                self._words.append(event.text.strip())
            if event.end_of_turn and self._words:
                return self._timer.end("endpoint")
        return self._timer.expired()

    def poll(self) -> TurnEnded | None:
        return self._timer.expired()
