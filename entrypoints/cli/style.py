"""Terminal styling for the CLI: colours and bold only on a terminal, never when ``NO_COLOR`` is set
(https://no-color.org); piped or redirected output stays plain text."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import IO, Any

import typer


def colour_wanted(stream: IO[Any] | None = None, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    if env.get("NO_COLOR", ""):
        return False
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def heading(text: str) -> None:
    """One line in bold on a colour terminal, plain otherwise."""
    typer.secho(text, bold=True, color=colour_wanted())
