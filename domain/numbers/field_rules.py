"""The rules of a number's single settings (SPEC.md Number), one checker per kind of value.

A checker takes ``(value, own_e164, problems)``, returns the normalized value, or None after
adding every problem it found to ``problems`` as ``(loc within the field, message, type code,
the input at fault)``. ``settings.py`` names the checker of each field; the shapes of their
own (hours, routes, SMS templates) have modules of their own. Pure: the standard library, the
dialing rules and the outcome schema compiler.
"""

from __future__ import annotations

import functools
import re
import zoneinfo
from collections.abc import Mapping
from typing import Any

from domain.calls import dialing_rules
from domain.calls.engines import ENGINES
from domain.calls.outcome_schema import compile_schema
from domain.errors import DialingRuleError, InputProblem, OutcomeSchemaError
from domain.text import unsafe_text

MAX_TRANSFER_DESTINATIONS = 5  # SPEC.md Limits
MAX_TRANSFER_ATTEMPTS = 5
MAX_LABEL = 80
MAX_OBJECTIVE = 4000
MAX_GREETING = 1000
MAX_PERSONA = 2000
MAX_SHORT_TEXT = 200  # ids of outside things: a voice, an SMS brand

# [0-9], not \d: other scripts' digits are not E.164.
E164_SHAPE = re.compile(r"\+[1-9][0-9]{1,14}")
# The call request's BCP-47 shape (entrypoints/http/schemas/calls.py ``Language``).
LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}")


def text(limit: int, *, blank_ok: bool) -> Any:
    def checked(value: Any, _: str, problems: list[InputProblem]) -> str | None:
        if not isinstance(value, str):
            problems.append(([], "must be a string", "string_type", value))
        elif len(value) > limit:
            problems.append(([], f"must be at most {limit} characters", "string_too_long", value))
        elif not blank_ok and not value.strip():
            problems.append(([], "must not be blank", "string_too_short", value))
        elif (unsafe := unsafe_text(value)) is not None:
            problems.append(([], unsafe, "value_error", value))
        else:
            return value
        return None

    return checked


def outcome_schema(value: Any, _: str, problems: list[InputProblem]) -> dict[str, Any] | None:
    try:
        return compile_schema(value).to_definition()
    except OutcomeSchemaError as exc:
        problems.extend((list(loc), message, kind, None) for loc, message, kind in exc.problems)
        return None


def boolean(value: Any, _: str, problems: list[InputProblem]) -> bool | None:
    if isinstance(value, bool):
        return value
    problems.append(([], "must be true or false", "bool_type", value))
    return None


def voice_engine(value: Any, _: str, problems: list[InputProblem]) -> str | None:
    if value in ENGINES:
        return str(value)
    problems.append(([], f"must be one of {', '.join(ENGINES)} (or null for the tenant's default)", "enum", value))
    return None


def attempts(value: Any, _: str, problems: list[InputProblem]) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_TRANSFER_ATTEMPTS:
        return value
    problems.append(([], f"must be a whole number from 1 to {MAX_TRANSFER_ATTEMPTS}", "transfer_max_attempts", value))
    return None


def language(value: Any, _: str, problems: list[InputProblem]) -> str | None:
    if isinstance(value, str) and LANGUAGE_TAG.fullmatch(value):
        return value
    problems.append(([], "must be a BCP-47 language tag such as en-US", "language", value))
    return None


@functools.cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def timezone(value: Any, _: str, problems: list[InputProblem]) -> str | None:
    if isinstance(value, str) and value in _zones():
        return value
    problems.append(([], "must be an IANA time zone such as America/New_York", "timezone", value))
    return None


def destinations(value: Any, own_e164: str, problems: list[InputProblem]) -> list[dict[str, str]] | None:
    if not isinstance(value, list):
        problems.append(([], "must be a list of {label, e164}", "list_type", value))
        return None
    if len(value) > MAX_TRANSFER_DESTINATIONS:
        problems.append(([], f"a number has at most {MAX_TRANSFER_DESTINATIONS} transfer destinations",
                         "too_long", len(value)))
        return None
    found: list[dict[str, str]] = []
    for index, item in enumerate(value):
        checked = destination(item, own_e164, [index], problems)
        if checked is None:
            continue
        if any(d["e164"] == checked["e164"] for d in found):
            problems.append(([index, "e164"], "the same number is already a destination", "duplicate_destination",
                             checked["e164"]))
            continue
        found.append(checked)
    return found


def destination(item: Any, own_e164: str, loc: list[str | int], problems: list[InputProblem]) -> dict[str, str] | None:
    if not isinstance(item, Mapping):
        problems.append((loc, "must be an object {label, e164}", "dict_type", item))
        return None
    before = len(problems)
    for key in item:
        if key not in ("label", "e164"):
            problems.append(([*loc, key], "is not a field of a transfer destination", "extra_forbidden", item[key]))
    label, e164 = item.get("label"), item.get("e164")
    if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL or unsafe_text(label):
        problems.append(([*loc, "label"], f"must be text of 1 to {MAX_LABEL} characters", "label", label))
    if not isinstance(e164, str):
        problems.append(([*loc, "e164"], "must be an E.164 number", "invalid_e164", e164))
    else:
        try:
            dialing_rules.parse_destination(e164)
        except DialingRuleError as exc:
            problems.append(([*loc, "e164"], exc.message, exc.code, e164))
        else:
            if e164 == own_e164:
                problems.append(([*loc, "e164"], "a number cannot transfer to itself", "transfer_to_self", e164))
    if len(problems) > before:
        return None
    return {"label": label.strip(), "e164": e164}  # type: ignore[union-attr]
