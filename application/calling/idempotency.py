"""``Idempotency-Key`` handling (ARCHITECTURE.md §9): the record is saved with the aggregates it
created, in one atomic save, so a request either happened once or not at all. A key is unique per
tenant (SPEC.md Limits): its claim, saved in the same save, refuses it on every other endpoint
while the window lasts, as a reuse with another body is refused."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from application.calling.app import Calling
from application.errors import ConflictError
from application.principal import Principal
from domain.calls.idempotency import IdempotencyKeyClaim, IdempotencyRecord

Produce = Callable[[], tuple[list[Aggregate], int, dict[str, Any]]]


@dataclass(frozen=True, kw_only=True)
class Answer:
    status_code: int
    body: dict[str, Any]
    replayed: bool = False


def _replay(record: IdempotencyRecord, fingerprint: str) -> Answer:
    if record.fingerprint != fingerprint:
        raise _reused("this Idempotency-Key was already used with a different request body")
    return Answer(status_code=record.status_code, body=record.response, replayed=True)


def _reused(message: str) -> ConflictError:
    return ConflictError(message, code="idempotency_key_reused")


def _check_claim(claim: IdempotencyKeyClaim | None, endpoint: str, now: datetime) -> None:
    """409 when another endpoint of the tenant holds the key in the window."""
    if claim is not None and claim.held_elsewhere(endpoint, now):
        raise _reused(f"this Idempotency-Key was already used on {claim.endpoint}; a key is unique per account "
                      "for 24 hours")


def _claim(principal: Principal, endpoint: str, key: str, now: datetime) -> IdempotencyKeyClaim:
    return IdempotencyKeyClaim(tenant_id=principal.tenant_id, key=key, endpoint=endpoint, at=now)


def _record(principal: Principal, endpoint: str, key: str, fingerprint: str, status: int, body: dict[str, Any],
            now: datetime) -> IdempotencyRecord:
    return IdempotencyRecord(tenant_id=principal.tenant_id, endpoint=endpoint, key=key, fingerprint=fingerprint,
                             status_code=status, response=body, at=now)


async def save_first_time(calling: Calling, principal: Principal, *, endpoint: str, key: str | None,
                          fingerprint: str, aggregates: list[Aggregate], status: int, body: dict[str, Any],
                          now: datetime) -> Answer | None:
    """``run_once``'s common case from the event loop, with the request already validated: a key not
    seen before. The record is saved with the aggregates, as there; if the key exists the save
    conflicts and nothing is saved, and ``None`` tells the caller to go through ``run_once``
    (replay, a body that differs, or an expired key to reuse)."""
    if key is not None:
        aggregates = [*aggregates, _record(principal, endpoint, key, fingerprint, status, body, now),
                      _claim(principal, endpoint, key, now)]
    try:
        await calling.commit_async(*aggregates)
    except ConflictError:
        if key is None:
            raise
        return None
    return Answer(status_code=status, body=body)


def run_once(calling: Calling, principal: Principal, *, endpoint: str, key: str | None, fingerprint: str,
             produce: Produce) -> Answer:
    """Run ``produce`` (validate and build aggregates) and save its result once per key.

    Validation failures raise before anything is recorded, so they are not replayed.
    """
    if key is None:
        aggregates, status, body = produce()
        calling.commit(*aggregates)
        return Answer(status_code=status, body=body)
    now = calling.ports.clock()
    record_id = IdempotencyRecord.create_id(principal.tenant_id, endpoint, key)
    claim_id = IdempotencyKeyClaim.create_id(principal.tenant_id, key)
    claim = calling.find(IdempotencyKeyClaim, claim_id)
    _check_claim(claim, endpoint, now)
    existing = calling.find(IdempotencyRecord, record_id)
    if existing is not None and existing.is_live(now):
        return _replay(existing, fingerprint)
    aggregates, status, body = produce()
    if existing is not None:
        existing.reuse(fingerprint, status, body, now)
        record = existing
    else:
        record = _record(principal, endpoint, key, fingerprint, status, body, now)
    claimed: list[Aggregate] = []  # a live claim is this endpoint's already
    if claim is None:
        claimed.append(_claim(principal, endpoint, key, now))
    elif not claim.is_live(now):
        claim.reclaim(endpoint, now)
        claimed.append(claim)
    try:
        calling.commit(*aggregates, record, *claimed)
    except ConflictError:
        _check_claim(calling.find(IdempotencyKeyClaim, claim_id), endpoint, now)  # another endpoint won it
        winner = calling.find(IdempotencyRecord, record_id)
        if winner is None:
            raise
        return _replay(winner, fingerprint)
    return Answer(status_code=status, body=body)
