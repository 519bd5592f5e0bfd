"""A key's history for auditors (docs/audit.md "Histories"): its events in order, in the API's
words, and the key as it stood at an instant, replayed from its events up to then.

``api_key.expired`` is not stored: a rotated key expires by the clock, so the history shows it at
its ``expires_at`` once that instant has passed (unless the key was revoked before).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from eventsourcing.application import project_aggregate

from application.accounts.app import Accounts
from application.accounts.keys import owned_key
from application.errors import NotFoundError
from application.principal import Principal
from domain.accounts.api_key import ApiKey
from domain.timestamps import iso

NAMES = {
    ApiKey.Issued: "api_key.issued",
    ApiKey.Rotated: "api_key.rotated",
    ApiKey.RotatedKeyUsed: "api_key.rotated_key_used",
    ApiKey.Revoked: "api_key.revoked",
}


@dataclass(frozen=True)
class KeyEntry:
    seq: int | None  # None for the derived api_key.expired
    type: str
    at: datetime
    by: str
    data: dict[str, Any]


def _events(accounts: Accounts, key: ApiKey) -> list[Any]:
    return [accounts.mapper.to_domain_event(stored) for stored in accounts.recorder.select_events(key.id)]


def _entry(event: Any, key_id: str) -> KeyEntry:
    at = event.at
    if isinstance(event, ApiKey.Issued):  # never the key's hash
        data = {"prefix": event.prefix, "name": event.name, "scopes": _list(event.scopes),
                "number_ids": _list(event.number_ids), "rotated_from": event.rotated_from}
        return KeyEntry(event.originator_version, NAMES[ApiKey.Issued], at, event.issued_by, data)
    if isinstance(event, ApiKey.Rotated):
        data = {"successor_key_id": event.successor_key_id, "expires_at": iso(event.expires_at)}
        return KeyEntry(event.originator_version, NAMES[ApiKey.Rotated], at, event.by, data)
    if isinstance(event, ApiKey.RotatedKeyUsed):
        data = {"method": event.method, "path": event.path}
        return KeyEntry(event.originator_version, NAMES[ApiKey.RotatedKeyUsed], at, key_id, data)
    if isinstance(event, ApiKey.Revoked):
        return KeyEntry(event.originator_version, NAMES[ApiKey.Revoked], at, event.by, {})
    return KeyEntry(event.originator_version, "api_key." + type(event).__name__.lower(), at, "callwright", {})


def _list(values: Any) -> list[str] | None:
    return list(values) if values is not None else None


def key_history(accounts: Accounts, principal: Principal, key_id: str) -> list[KeyEntry]:
    """Every entry of the tenant's key, oldest first (404 for another tenant's key)."""
    key = owned_key(accounts, principal, key_id)
    entries = [_entry(event, key.key_id) for event in _events(accounts, key)]
    now = accounts.ports.clock()
    if key.expires_at is not None and key.expires_at <= now and (key.revoked_at is None or key.revoked_at > key.expires_at):
        entries.append(KeyEntry(None, "api_key.expired", key.expires_at, "callwright", {}))
        entries.sort(key=lambda entry: entry.at)
    return entries


def key_as_of(accounts: Accounts, principal: Principal, key_id: str, instant: datetime | None) -> dict[str, Any]:
    """The key as ``GET /auth/api-keys`` lists it, as it stood at ``instant`` (now when None): its
    events up to then replayed; 404 before it was issued."""
    key = owned_key(accounts, principal, key_id)
    now = instant or accounts.ports.clock()
    events = [event for event in _events(accounts, key) if event.at <= now]
    if not events:
        raise NotFoundError(f"no api key {key_id} at {iso(now)}", code="api_key_not_found")
    then = project_aggregate(None, events)  # the events read above, replayed: no second read of the store
    assert isinstance(then, ApiKey)
    used = [event.at for event in events if isinstance(event, ApiKey.RotatedKeyUsed)]
    return {
        "key_id": then.key_id, "name": then.name, "prefix": then.prefix, "scopes": _list(then.scopes),
        "number_ids": _list(then.number_ids), "status": then.status(now), "created_at": iso(then.created_at),
        "expires_at": iso(then.expires_at), "revoked_at": iso(then.revoked_at), "rotated_to": then.rotated_to,
        "rotated_from": then.rotated_from, "last_used_during_grace_at": iso(max(used)) if used else None,
    }
