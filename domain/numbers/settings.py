"""A number's settings as one typed value (SPEC.md Number): each field's name, type (``X | None``:
null clears it), default and rule, in the order the API shows them. ``configuration.py``, the
``Number`` aggregate, and the request model and view of ``/v1/numbers`` take their fields from
here.

A field added later gets a default, so numbers registered before it read it from there (events
are a stored contract). Pure: the standard library and the domain.
"""

from __future__ import annotations

import copy
import dataclasses
import typing
from collections.abc import Callable, Mapping
from typing import Any

from domain.calls.outcome_schema import compile_schema
from domain.errors import InputProblem
from domain.numbers import field_rules as rules
from domain.numbers.hours import check_hours, check_overflow_action, check_voicemail_mode
from domain.numbers.routes import check_routes
from domain.numbers.sms_templates import check_templates

# The rule of one field: ``(value, own_e164, problems) -> normalized value`` (field_rules.py).
Check = Callable[[Any, str, list[InputProblem]], Any]

DEFAULT_OBJECTIVE = ("Answer the call on behalf of the business: find out who is calling and what they need, help "
                     "with it where you can, and otherwise take a clear message with a way to call them back.")
DEFAULT_OUTCOME_SCHEMA: dict[str, Any] = {
    "summary": {"type": "string", "description": "What the caller wanted and what was agreed"},
    "caller_name": {"type": "string", "optional": True},
    "callback_requested": {"type": "boolean", "optional": True},
}
DEFAULT_VOICEMAIL_SCHEMA: dict[str, Any] = {
    "message": {"type": "string", "description": "What the caller said, in a sentence or two"},
    "caller_name": {"type": "string", "optional": True},
    "callback_number": {"type": "string", "optional": True, "description": "A number to call back, if given"},
}
DEFAULT_LANGUAGE = "en-US"
DEFAULT_TRANSFER_ATTEMPTS = 3

_SHORT_ID = rules.text(rules.MAX_SHORT_TEXT, blank_ok=False)


def _setting(default: Any, check: Check) -> Any:
    """A field with its default (each value gets its own copy) and the rule of a value given for it."""
    return dataclasses.field(default_factory=lambda: copy.deepcopy(default), metadata={"check": check})


@dataclasses.dataclass(frozen=True, kw_only=True)
class NumberSettings:
    """What a number does on its calls: every settable field."""

    objective: str = _setting(DEFAULT_OBJECTIVE, rules.text(rules.MAX_OBJECTIVE, blank_ok=False))
    greeting: str | None = _setting(None, rules.text(rules.MAX_GREETING, blank_ok=True))
    greeting_voice_id: str | None = _setting(None, _SHORT_ID)  # None: the voice of the number's engine
    persona: str | None = _setting(None, rules.text(rules.MAX_PERSONA, blank_ok=True))
    outcome_schema: dict[str, Any] = _setting(compile_schema(DEFAULT_OUTCOME_SCHEMA).to_definition(),
                                              rules.outcome_schema)
    recording_enabled: bool = _setting(True, rules.boolean)
    voice_engine: str | None = _setting(None, rules.voice_engine)  # None: the tenant's default engine
    flow_id: str | None = _setting(None, _SHORT_ID)
    transfer_destinations: list[dict[str, str]] = _setting([], rules.destinations)
    transfer_max_attempts: int = _setting(DEFAULT_TRANSFER_ATTEMPTS, rules.attempts)
    language: str = _setting(DEFAULT_LANGUAGE, rules.language)
    timezone: str | None = _setting(None, rules.timezone)  # a new number takes its E.164's only zone
    hours_json: dict[str, list[list[str]]] | None = _setting(None, check_hours)  # None: always open
    overflow_action: str = _setting("voicemail", check_overflow_action)
    overflow_message: str | None = _setting(None, rules.text(rules.MAX_GREETING, blank_ok=False))
    routes: list[dict[str, Any]] = _setting([], check_routes)
    voicemail_mode: str = _setting("overflow_only", check_voicemail_mode)
    voicemail_schema: dict[str, Any] = _setting(compile_schema(DEFAULT_VOICEMAIL_SCHEMA).to_definition(),
                                                rules.outcome_schema)
    voicemail_persona: str | None = _setting(None, rules.text(rules.MAX_PERSONA, blank_ok=True))
    sms_enabled: bool = _setting(False, rules.boolean)
    sms_brand_id: str | None = _setting(None, _SHORT_ID)
    sms_templates: list[dict[str, Any]] = _setting([], check_templates)

    @classmethod
    def of(cls, stored: Mapping[str, Any]) -> NumberSettings:
        """Stored settings (an event's), with the defaults of the fields they predate; the value
        holds copies."""
        return cls(**{name: copy.deepcopy(stored[name]) for name in FIELDS if name in stored})

    @classmethod
    def changed(cls, settings: NumberSettings, changes: Mapping[str, Any]) -> NumberSettings:
        """``settings`` with ``changes`` (checked values of some fields) in place."""
        return dataclasses.replace(settings, **changes)

    def as_dict(self) -> dict[str, Any]:
        """Every field by name, in order (copies)."""
        return dataclasses.asdict(self)


FIELDS: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(NumberSettings))
TYPES: dict[str, Any] = typing.get_type_hints(NumberSettings)  # each field's type, ``X | None`` when nullable
NULLABLE = frozenset(name for name in FIELDS if type(None) in typing.get_args(TYPES[name]))
CHECKS: dict[str, Check] = {field.name: field.metadata["check"] for field in dataclasses.fields(NumberSettings)}
