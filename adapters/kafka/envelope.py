"""The envelope every event travels in on Kafka (ARCHITECTURE.md §6), and its way back to the
domain event the notification log would have given.

``data`` is the stored event state as JSON (``json.loads`` of what eventsourcing's transcoder
wrote): plain JSON values as they are, values of other types as the transcoder's markers, e.g.
``{"_type_": "datetime_iso", "_data_": "2026-11-22T04:28:24.535822+00:00"}``, ``decimal_str``,
``uuid_hex``. Consumers outside this code base read the markers as documented there; our reactors
get the same event objects as from the log through ``to_domain_event``.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

import msgspec
from eventsourcing.application import Application
from eventsourcing.persistence import Notification, StoredEvent

from domain import ids
from domain.timestamps import iso


class Envelope(msgspec.Struct, frozen=True, kw_only=True):
    event_id: str  # "evt_" + hex of uuid5(application, aggregate id, version): the dedupe key
    type: str  # the event's topic, e.g. "domain.calls.call:Call.Completed"
    application: str  # "Calling", "Accounts"
    tenant_id: str | None
    aggregate_id: str  # UUID, as text
    version: int  # the aggregate's version after this event
    notification_id: int  # position in the application's notification log
    occurred_at: str  # ISO 8601 in UTC with "Z", from the event's timestamp
    data: dict[str, Any]


class _WireEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    """The same fields in the same order: the stored state is copied in without being parsed."""

    event_id: str
    type: str
    application: str
    tenant_id: str | None
    aggregate_id: str
    version: int
    notification_id: int
    occurred_at: str
    data: msgspec.Raw


class _Marker(msgspec.Struct):
    type_: str = msgspec.field(name="_type_")
    data_: Any = msgspec.field(name="_data_")


class _Head(msgspec.Struct):
    """The two fields of a stored state the envelope repeats; the rest is skipped unparsed."""

    timestamp: _Marker | None = None
    tenant_id: Any = None


class EnvelopeUnsupportedError(RuntimeError):
    """The application encrypts or compresses its stored events: their state is not JSON."""


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Envelope)
_head_decoder = msgspec.json.Decoder(_Head)


def event_id(application: str, aggregate_id: uuid.UUID | str, version: int) -> str:
    return ids.to_public(ids.EVENT, ids.deterministic("event", f"{application}:{aggregate_id}:{version}"))


def message_key(aggregate_id: uuid.UUID | str) -> bytes:
    """The Kafka key: the aggregate id's 16 bytes, so one aggregate's events share a partition."""
    return aggregate_id.bytes if isinstance(aggregate_id, uuid.UUID) else str(aggregate_id).encode()


def check_plain_json(app: Application[Any]) -> None:
    mapper = app.mapper
    if mapper.cipher is not None or mapper.compressor is not None:
        raise EnvelopeUnsupportedError(
            f"{app.name} encrypts or compresses stored events; the envelope carries plain JSON state only"
        )


def from_notification(application: str, notification: Notification, app: Application[Any] | None = None) -> bytes:
    """Encoded envelope of one notification of ``application``'s log (state must be plain JSON)."""
    head = _head_decoder.decode(notification.state)
    stamp = head.timestamp
    if stamp is not None and stamp.type_ == "datetime_iso" and isinstance(stamp.data_, str):
        occurred_at = iso(datetime.fromisoformat(stamp.data_))
    elif app is not None:
        occurred_at = iso(app.mapper.to_domain_event(notification).timestamp)  # type: ignore[attr-defined]
    else:
        raise ValueError(f"event {notification.topic} has no datetime_iso timestamp")
    tenant_id = head.tenant_id if isinstance(head.tenant_id, str) else None
    return _encoder.encode(_WireEnvelope(
        event_id=event_id(application, notification.originator_id, notification.originator_version),
        type=notification.topic,
        application=application,
        tenant_id=tenant_id,
        aggregate_id=str(notification.originator_id),
        version=notification.originator_version,
        notification_id=notification.id,
        occurred_at=occurred_at or "",
        data=msgspec.Raw(notification.state),
    ))


def encode(envelope: Envelope) -> bytes:
    return _encoder.encode(envelope)


def decode(value: bytes) -> Envelope:
    try:
        return _decoder.decode(value)
    except msgspec.DecodeError:
        # Python's json writes NaN and Infinity, which strict JSON parsers refuse.
        return msgspec.convert(json.loads(value), Envelope)


def to_domain_event(envelope: Envelope, app: Application[Any]) -> Any:
    """The domain event object, exactly as ``app.mapper`` rebuilds it from the notification log."""
    check_plain_json(app)
    aggregate_id: uuid.UUID | str
    try:
        aggregate_id = uuid.UUID(envelope.aggregate_id)
    except ValueError:
        aggregate_id = envelope.aggregate_id
    return app.mapper.to_domain_event(StoredEvent(
        originator_id=aggregate_id,
        originator_version=envelope.version,
        topic=envelope.type,
        state=app.mapper.transcoder.encode(envelope.data),
    ))
