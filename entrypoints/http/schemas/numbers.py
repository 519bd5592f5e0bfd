"""Request and response shapes of ``/v1/numbers``.

Requests check types and bounds; the number's own rules (E.164 of destinations, outcome schema,
time zone) are the domain's (``domain.numbers.configuration``). PATCH sends only the fields it
changes: ``model_fields_set`` tells an absent field from an explicit null.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError

from domain.calls.engines import ENGINES
from domain.numbers.configuration import (
    MAX_GREETING,
    MAX_LABEL,
    MAX_PERSONA,
    MAX_TRANSFER_ATTEMPTS,
    MAX_TRANSFER_DESTINATIONS,
)
from entrypoints.http.schemas.calls import Language, Objective, Strict
from entrypoints.http.schemas.text import safe_text

VoiceEngine = Literal[ENGINES]  # type: ignore[valid-type]


def _exactly(kind: type, code: str, message: str) -> BeforeValidator:
    """Refuse ``"yes"`` for a boolean and ``"3"`` for an integer: Litestar validates models with
    ``strict=False``, which would otherwise coerce them."""

    def check(value: Any) -> Any:
        if value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
            raise PydanticCustomError(code, message)
        return value

    return BeforeValidator(check)


Boolean = Annotated[bool, _exactly(bool, "bool_type", "Input should be a valid boolean")]
Attempts = Annotated[int, Field(ge=1, le=MAX_TRANSFER_ATTEMPTS),
                     _exactly(int, "int_type", "Input should be a valid integer")]
E164 = Annotated[str, StringConstraints(min_length=1, max_length=32)]  # the domain explains a bad number


class TransferDestination(Strict):
    label: Annotated[str, StringConstraints(min_length=1, max_length=MAX_LABEL), AfterValidator(safe_text)]
    e164: E164


class NumberSettings(Strict):
    """The settable fields; null clears greeting, persona, voice_engine and timezone, and is refused
    for the others (the domain says why)."""

    objective: Objective | None = None
    greeting: Annotated[str, StringConstraints(max_length=MAX_GREETING), AfterValidator(safe_text)] | None = None
    persona: Annotated[str, StringConstraints(max_length=MAX_PERSONA), AfterValidator(safe_text)] | None = None
    outcome_schema: dict[str, Any] | None = None
    recording_enabled: Boolean | None = None
    voice_engine: VoiceEngine | None = None
    transfer_destinations: Annotated[
        list[TransferDestination], Field(max_length=MAX_TRANSFER_DESTINATIONS)] | None = None
    transfer_max_attempts: Attempts | None = None
    language: Language | None = None
    timezone: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None

    def given(self) -> dict[str, Any]:
        """Only the fields the body named, with their values (nested models as plain dicts)."""
        return self.model_dump(include=set(self.model_fields_set) - {"e164"})


class ByoNumberCreate(NumberSettings):
    e164: E164


class NumberPatch(NumberSettings):
    pass


class TransferDestinationView(msgspec.Struct, kw_only=True):
    label: str
    e164: str


class NumberView(msgspec.Struct, kw_only=True):
    """SPEC.md Number: the fields stored so far (greetings audio, hours, routes, voicemail, SMS and
    flows come later and will be added alongside), plus ``source``, ``active`` and timestamps."""

    id: str
    e164: str
    source: str
    active: bool
    objective: str
    greeting: str | None
    persona: str | None
    outcome_schema: dict[str, Any]
    recording_enabled: bool
    voice_engine: str | None
    transfer_destinations: list[TransferDestinationView]
    transfer_max_attempts: int
    language: str
    timezone: str | None
    created_at: str
    updated_at: str | None
    disconnected_at: str | None
