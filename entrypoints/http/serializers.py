"""Wire views of aggregates that several routes return."""

from __future__ import annotations

from litestar.serialization import encode_json

from application.head_cache import HeadCache
from domain.calls.call import Call
from entrypoints.http.schemas.call_record import CallRecord

_ENCODED = HeadCache(maxsize=2_000)  # a call's record as JSON, by the call's version


def call_record_json(call: Call) -> bytes:
    """``CallRecord.of(call)`` encoded, remembered by the call's version: a record is read far more often
    than its call changes."""
    version = call.version
    body = _ENCODED.get(call.call_id, version)
    if body is None:
        body = encode_json(CallRecord.of(call))
        if call.version == version:  # not moved while encoding (a cached aggregate fast-forwarded)
            _ENCODED.put(call.call_id, version, body)
    return body
