"""The call record as the wire shows it, as plain data (``from``, nested objects as dicts): what
tests compare with a stored answer."""

from __future__ import annotations

from typing import Any

import msgspec

from application.calling.lifecycle import CallRead
from domain.calls.call import Call
from entrypoints.http.schemas.call_record import CallRecord


def call_record(call: Call | CallRead) -> dict[str, Any]:
    """The record of a call, or of a call as read with its post-call SMS."""
    record = CallRecord.of(call.call, call.sms) if isinstance(call, CallRead) else CallRecord.of(call)
    return msgspec.to_builtins(record)  # type: ignore[no-any-return]
