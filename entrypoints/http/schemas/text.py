"""Free-text request fields (names, labels): bounded and free of NUL, which no view can store."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, StringConstraints


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


Label = Annotated[str, StringConstraints(min_length=1, max_length=200), AfterValidator(_no_nul)]
