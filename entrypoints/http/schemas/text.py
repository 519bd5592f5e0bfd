"""Free-text request fields: bounded, and free of NUL (no view can store it) and of lone
surrogates (not text at all)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, StringConstraints


def safe_text(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    if any("\ud800" <= char <= "\udfff" for char in value):
        raise ValueError("must not contain lone surrogate code points")
    return value


Label = Annotated[str, StringConstraints(min_length=1, max_length=200), AfterValidator(safe_text)]
