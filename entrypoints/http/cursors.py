"""Opaque list cursors: a paged list's ``next_cursor``, accepted back by the same route as ``cursor``.

A cursor is the URL-safe base64 of a JSON array that starts with the list's name, so a cursor handed
to another list, or edited, is a 422 on ``cursor`` rather than a wrong page.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any

from application.errors import FieldError

MAX_LENGTH = 400


def encode(kind: str, *values: Any) -> str:
    raw = json.dumps([kind, *values], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(kind: str, cursor: str, *types: type, offset: int = 0) -> list[Any]:
    """The values of ``cursor``, one of each of ``types`` in order; a 422 on ``cursor`` otherwise.
    A cursor says where the page starts, so an ``offset`` beside it is refused too."""
    if offset:
        raise FieldError(["query", "offset"], "give cursor or offset, not both", code="value_error", value=offset)
    try:
        found = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError):
        found = None
    if (not isinstance(found, list) or len(found) != len(types) + 1 or found[0] != kind
            or not all(type(value) is wanted for value, wanted in zip(found[1:], types))):
        raise refused(cursor)
    return found[1:]


def moment(value: str, cursor: str) -> datetime:
    """A time a cursor holds (written with ``datetime.isoformat``: every microsecond kept)."""
    try:
        found = datetime.fromisoformat(value)
    except ValueError:
        raise refused(cursor) from None
    if found.tzinfo is None:
        raise refused(cursor)
    return found


def refused(cursor: str) -> FieldError:
    return FieldError(["query", "cursor"], "cursor must be a value returned as next_cursor by this list",
                      code="value_error", value=cursor[:MAX_LENGTH])
