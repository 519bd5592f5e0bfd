"""Wire views of aggregates that several routes return."""

from __future__ import annotations

from litestar.serialization import encode_json

from application.calling.lifecycle import CallRead
from application.head_cache import HeadCache
from entrypoints.http.schemas.call_record import CallRecord

_ENCODED = HeadCache(maxsize=2_000)  # a call's record as JSON, by the versions of the call and its SMS


def call_record_json(read: CallRead) -> bytes:
    """``CallRecord.of`` the call encoded, remembered by the versions of the call and its SMS: a
    record is read far more often than its call changes."""
    call, sms = read.call, read.sms
    version, key = call.version, (call.call_id, sms.version if sms is not None else 0)
    body = _ENCODED.get(key, version)
    if body is None:
        body = encode_json(CallRecord.of(call, sms))
        # Not moved while encoding (a cached aggregate fast-forwarded).
        if call.version == version and (sms is None or sms.version == key[1]):
            _ENCODED.put(key, version, body)
    return body
