"""Suppression list use cases: add (or add again), remove. Checked on every call creation.

Each change saves the entry (who, when, why) and the tenant's index (what is suppressed now)
together; a concurrent change of the same tenant's index is retried.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from application.calling.app import Calling
from application.errors import FieldError, NotFoundError
from application.principal import Principal
from domain.calls import dialing_rules
from domain.calls.suppression import SuppressionEntry, SuppressionIndex
from domain.errors import DialingRuleError

def _e164(raw: str) -> str:
    try:
        return dialing_rules.parse_destination(raw).e164
    except DialingRuleError as exc:
        if exc.code == "invalid_e164":
            raise FieldError(["body", "e164"], exc.message, code=exc.code, value=raw) from exc
        return raw  # emergency, N11 or premium numbers may be suppressed all the same


NOT_REMEMBERED = object()


def index_of(calling: Calling, tenant_id: str) -> SuppressionIndex | None:
    """The tenant's index as committed now, to read (never to change: it is shared, see below)."""
    index = calling.find(SuppressionIndex, SuppressionIndex.create_id(tenant_id))
    calling.lookups.put(("suppressions", tenant_id), index.version if index is not None else None, index)
    return index


def remembered_index(calling: Calling, tenant_id: str, version: int | None) -> SuppressionIndex | None | object:
    """The index this process last read, if it is still at ``version`` (the committed version,
    ``None`` when the tenant has none); otherwise ``NOT_REMEMBERED``. Saves rebuilding a long
    index on every call creation."""
    found = calling.lookups.get(("suppressions", tenant_id), version)
    if found is not None or version is None:
        return found
    return NOT_REMEMBERED


def _change(calling: Calling, tenant_id: str, change: Callable[[SuppressionIndex], SuppressionEntry]) -> SuppressionEntry:
    def attempt() -> SuppressionEntry:
        # A private copy: a failed commit must not leave its change in the shared one.
        index = calling.find(SuppressionIndex, SuppressionIndex.create_id(tenant_id)) or SuppressionIndex(tenant_id=tenant_id)
        entry = change(index)
        calling.commit(entry, index)
        return entry

    return calling.retry_on_conflict(attempt)


def add(calling: Calling, principal: Principal, *, e164: str, reason: str | None, expires_at: datetime | None) -> SuppressionEntry:
    number = _e164(e164)
    now = calling.ports.clock()
    if expires_at is not None and expires_at <= now:
        raise FieldError(["body", "expires_at"], "expires_at must be in the future", code="value_error",
                         value=expires_at.isoformat())

    def change(index: SuppressionIndex) -> SuppressionEntry:
        entry = calling.find(SuppressionEntry, SuppressionEntry.create_id(principal.tenant_id, number))
        if entry is None:
            entry = SuppressionEntry(tenant_id=principal.tenant_id, e164=number, reason=reason,
                                     expires_at=expires_at, by=principal.actor, at=now)
        else:
            entry.add_again(reason, expires_at, principal.actor, now)
        index.list_number(number, expires_at)
        return entry

    return _change(calling, principal.tenant_id, change)


def remove(calling: Calling, principal: Principal, *, e164: str) -> SuppressionEntry:
    def change(index: SuppressionIndex) -> SuppressionEntry:
        entry = calling.find(SuppressionEntry, SuppressionEntry.create_id(principal.tenant_id, e164))
        if entry is None or entry.removed_at is not None:
            raise NotFoundError(f"{e164} is not on the suppression list", code="suppression_not_found")
        entry.remove(principal.actor, calling.ports.clock())
        index.delist_number(e164)
        return entry

    return _change(calling, principal.tenant_id, change)
