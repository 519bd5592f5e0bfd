"""Public identifiers: prefixed views of internal UUIDs (``usr_…``, ``key_…``).

Deterministic ids for index aggregates are uuid5 names under one namespace per kind.
"""

from __future__ import annotations

import re
import uuid

_HEX32 = re.compile(r"^[0-9a-f]{32}$")

USER = "usr"
TENANT = "ten"
API_KEY = "key"
EVENT = "evt"
CALL = "cll"
WEBHOOK = "wh"
DELIVERY = "dlv"
PUSH_SUBSCRIPTION = "psub"
PUSH_NOTIFICATION = "pntf"

_NAMESPACE = uuid.UUID("6f1c3c5e-5d0b-4f43-9a57-0d1f2b8c7a10")


class MalformedIdError(ValueError):
    """A public id does not have the expected prefix and 32 hex digits."""


def to_public(prefix: str, value: uuid.UUID) -> str:
    return f"{prefix}_{value.hex}"


def from_public(prefix: str, public_id: str) -> uuid.UUID:
    head, sep, tail = public_id.partition("_")
    if head != prefix or not sep or not _HEX32.match(tail):
        raise MalformedIdError(f"expected an id like {prefix}_<32 hex digits>")
    return uuid.UUID(hex=tail)


def deterministic(kind: str, natural_key: str) -> uuid.UUID:
    """Id of an index aggregate: the same natural key always names the same aggregate."""
    return uuid.uuid5(_NAMESPACE, f"{kind}:{natural_key}")
