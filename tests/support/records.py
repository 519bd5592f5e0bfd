"""The call record as the wire shows it, as plain data (``from``, nested objects as dicts): what
tests compare with a stored answer."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.calls.call import Call
from entrypoints.http.schemas.call_record import CallRecord


def call_record(call: Call) -> dict[str, Any]:
    return msgspec.to_builtins(CallRecord.of(call))  # type: ignore[no-any-return]
