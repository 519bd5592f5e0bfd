"""Times a request body names, bounded like the query's (domain/instants.py): an instant whose
conversion to UTC or to a callee's zone would overflow is a 422 with the allowed range in ctx."""

from __future__ import annotations

from datetime import datetime

from pydantic_core import PydanticCustomError

from domain.instants import RANGE_CTX, RANGE_RULE, in_range


def bounded_instant(value: datetime) -> datetime:
    if not in_range(value):
        raise PydanticCustomError("datetime_out_of_range", RANGE_RULE, dict(RANGE_CTX))
    return value
