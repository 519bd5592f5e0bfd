"""Free-text request fields: bounded, and free of NUL (no view can store it) and of lone
surrogates (not text at all), in plain fields and anywhere inside a free JSON value."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, StringConstraints, ValidationError
from pydantic_core import InitErrorDetails

from domain.text import unsafe_text


def safe_text(value: str) -> str:
    if (unsafe := unsafe_text(value)) is not None:
        raise ValueError(unsafe)
    return value


def _unsafe(value: Any, loc: tuple[str | int, ...]) -> list[InitErrorDetails]:
    """Every text of a JSON value (keys too, at ``[key]`` as pydantic names them) that safe_text refuses."""
    found: list[InitErrorDetails] = []
    if isinstance(value, str):
        try:
            safe_text(value)
        except ValueError as error:
            found.append(InitErrorDetails(type="value_error", loc=loc, input=value, ctx={"error": error}))
    elif isinstance(value, dict):
        for key, item in value.items():
            found += [{**problem, "loc": (*loc, key, "[key]")} for problem in _unsafe(key, ())]
            found += _unsafe(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _unsafe(item, (*loc, index))
    return found


def safe_json(value: Any) -> Any:
    """A free JSON value (metadata, simulation facts) whose every text passes safe_text: each
    problem at its own loc, as for a plain text field."""
    problems = _unsafe(value, ())
    if problems:
        raise ValidationError.from_exception_data("text", problems)
    return value


Label = Annotated[str, StringConstraints(min_length=1, max_length=200), AfterValidator(safe_text)]
