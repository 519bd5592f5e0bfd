"""A number's greeting as audio (SPEC.md Number ``greeting_audio_fresh``): rendered through the
speech port whenever the greeting or its voice changes, stored by number, and marked on the number
(``GreetingRendered``) so that ``greeting_audio_fresh`` turns true. Inbound calls play it first."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Protocol

from application.calling.app import Calling
from application.calling.ports import SpeechEngine
from application.errors import ConflictError
from domain.numbers.number import Number


class GreetingAudioStore(Protocol):
    """The rendered audio of each number's greeting (μ-law 8 kHz, the speech port's frames joined)."""

    def put(self, number_id: str, sha256: str, audio: bytes) -> None: ...

    def get(self, number_id: str) -> tuple[str, bytes] | None:
        """(sha256, audio) of the number's latest rendering, or None."""
        ...


SpeechFor = Callable[[Number], SpeechEngine]  # the speech engine of a number's voice engine


def render_greeting(calling: Calling, speech_for: SpeechFor, store: GreetingAudioStore, number_id: str) -> bool:
    """Render the number's greeting when its audio is stale; True when this rendered it. Idempotent:
    a number whose audio is fresh (or that has no greeting, or was disconnected) is left alone,
    and a greeting changed meanwhile is rendered when its own change is processed."""
    number = calling.find(Number, Number.id_of(number_id))
    if number is None or not number.active or number.greeting_audio_fresh or number.greeting is None:
        return False
    greeting, voice_id = number.greeting, number.greeting_voice_id
    audio = b"".join(speech_for(number).speak(greeting))
    digest = hashlib.sha256(audio).hexdigest()
    store.put(number.number_id, digest, audio)
    if not number.greeting_audio_rendered(greeting=greeting, voice_id=voice_id, sha256=digest, size=len(audio),
                                          at=calling.ports.clock()):
        return False
    try:
        calling.commit(number)
    except ConflictError:
        return False  # changed meanwhile: that change is rendered in its turn
    return True
