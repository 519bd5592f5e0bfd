"""Times a request body names, bounded like the query's (domain/instants.py): an instant whose
conversion to UTC or to a callee's zone would overflow is a 422 with the allowed range in ctx."""

from __future__ import annotations

from datetime import datetime

from pydantic_core import PydanticCustomError

from application.errors import FieldError

from domain.instants import RANGE_CTX, RANGE_RULE, in_range


def bounded_instant(value: datetime) -> datetime:
    if not in_range(value):
        raise PydanticCustomError("datetime_out_of_range", RANGE_RULE, dict(RANGE_CTX))
    return value


def zoned(value: datetime | None, name: str) -> datetime | None:
    """A query instant that must name its zone (audit filters, ``as_of``): 422 ``timezone_missing``."""
    if value is not None and value.tzinfo is None:
        raise FieldError(["query", name], f"{name} needs a time zone (for instance 2026-11-01T00:00:00Z)",
                         code="timezone_missing", value=value.isoformat())
    return value
