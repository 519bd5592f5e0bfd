"""A tenant's numbers (SPEC.md Numbers): register a bring-your-own number of the verified carrier
account, change its settings, disconnect it (the E.164 is free again), read and list them.

A key restricted by ``number_ids`` reaches only those numbers (403 ``number_not_allowed`` for any
other, SPEC.md Errors) and cannot register new ones (a new number is outside its list).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from application.calling.app import Calling
from application.errors import ConflictError, FieldError, NotFoundError, PermissionDeniedError, ValidationFailedError
from application.flows.flows import published_flow_exists
from application.principal import Principal
from application.providers.credentials import credential_of
from domain.errors import NumberConfigurationError, NumberDisconnectedError, NumberTakenError
from domain.numbers import configuration
from domain.numbers.field_rules import E164_SHAPE
from domain.numbers.number import BYO, Number, NumberClaim, TenantNumberIndex

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
_CURSOR_PREFIX = "numbers:"


@dataclass(frozen=True, kw_only=True)
class ByoNumberRequest:
    e164: str
    settings: Mapping[str, Any] = field(default_factory=dict)  # only the fields the caller gave


@dataclass(frozen=True, kw_only=True)
class NumberPage:
    numbers: list[Number]
    next_cursor: str | None  # None: this is the last page


def register_byo(calling: Calling, principal: Principal, request: ByoNumberRequest) -> Number:
    """Checks in order: the key may add numbers, the settings (every problem at once), the E.164's
    shape, the tenant's verified carrier account holds it (422), no active number holds it (409)."""
    if principal.number_ids is not None:
        raise PermissionDeniedError("this API key is restricted to some numbers and cannot register new ones",
                                    code="number_not_allowed")
    e164 = request.e164
    problems: list[tuple[list[str | int], str, str, Any]] = []
    if not E164_SHAPE.fullmatch(e164):
        problems.append((["body", "e164"], "must be an E.164 number: '+' then 2 to 15 digits, the first not 0",
                         "invalid_e164", e164))
    flow_exists = published_flow_exists(calling, principal.tenant_id)
    try:
        settings = configuration.check(request.settings, own_e164=e164, flow_exists=flow_exists)
    except NumberConfigurationError as exc:
        problems.extend(_in_body(exc))
    if problems:
        raise ValidationFailedError(problems)
    credential = credential_of(calling, principal.tenant_id)
    if credential is None or not credential.verified:
        raise ValidationFailedError([(["body", "e164"], "verify your carrier credentials first "
                                      "(POST /v1/providers/carrier/verify); a number must be one of that account's",
                                      "carrier_not_configured", e164)])
    if not credential.holds(e164):
        raise ValidationFailedError([(["body", "e164"], f"{e164} is not one of the numbers of your verified carrier "
                                      "account", "number_not_in_carrier_account", e164)])

    def attempt() -> Number:
        now = calling.ports.clock()
        number = Number.register(tenant_id=principal.tenant_id, e164=e164, fields=settings, by=principal.actor, at=now,
                                 flow_exists=flow_exists)
        calling.commit(*holding(calling, number, now))
        return number

    try:
        return calling.retry_on_conflict(attempt)
    except NumberTakenError as exc:
        holder = calling.find(NumberClaim, NumberClaim.create_id(e164))
        message = f"{e164} is already registered as an active number"
        if holder is not None and holder.tenant_id == principal.tenant_id:
            message = f"{e164} is already your number {holder.number_id}"
        raise ConflictError(message, code=exc.code) from exc


def get(calling: Calling, principal: Principal, number_id: str) -> Number:
    """One of the tenant's numbers, disconnected ones included (``active`` false)."""
    return owned(calling, principal, number_id)


def update(calling: Calling, principal: Principal, number_id: str, fields: Mapping[str, Any]) -> Number:
    """Change the given settings (absent ones stay); a field not in ``configuration.FIELDS`` is a 422."""

    def attempt() -> Number:
        number = owned(calling, principal, number_id)
        try:
            number.update(fields, by=principal.actor, at=calling.ports.clock(),
                          flow_exists=published_flow_exists(calling, principal.tenant_id))
        except NumberDisconnectedError as exc:
            raise NotFoundError(f"number {number_id} was disconnected", code="number_not_found") from exc
        except NumberConfigurationError as exc:
            raise ValidationFailedError(_in_body(exc)) from exc
        calling.commit(number)
        return number

    return calling.retry_on_conflict(attempt)


def disconnect(calling: Calling, principal: Principal, number_id: str, *, source: str = BYO) -> Number:
    """Soft delete of a number of ``source``: it stays readable, its E.164 can be registered again
    (by any tenant)."""

    def attempt() -> Number:
        number = owned(calling, principal, number_id)
        now = calling.ports.clock()
        if number.source != source or not number.disconnect(by=principal.actor, at=now):
            kind = "bring-your-own" if source == BYO else source
            raise NotFoundError(f"no active {kind} number {number_id}", code="number_not_found")
        claim = calling.find(NumberClaim, NumberClaim.create_id(number.e164))
        if claim is not None:
            claim.release(number.number_id, at=now)
        index = _index(calling, principal.tenant_id)
        if index is not None:
            index.remove(number.number_id)
        calling.commit(*(a for a in (number, claim, index) if a is not None))
        return number

    return calling.retry_on_conflict(attempt)


def list_numbers(calling: Calling, principal: Principal, limit: int = DEFAULT_LIMIT,
                 cursor: str | None = None) -> NumberPage:
    """The tenant's active numbers the key may use, oldest first, ``limit`` per page."""
    if not 1 <= limit <= MAX_LIMIT:
        raise FieldError(["query", "limit"], f"limit must be from 1 to {MAX_LIMIT}", code="less_than_equal",
                         value=limit)
    after = _position(cursor)
    index = _index(calling, principal.tenant_id)
    if index is None:
        return NumberPage(numbers=[], next_cursor=None)
    found: list[Number] = []
    last = after
    for position, number_id in index.after(after):
        if not principal.may_use_number(number_id):
            continue
        if len(found) == limit:
            return NumberPage(numbers=found, next_cursor=_cursor(last))
        number = calling.find(Number, Number.id_of(number_id))
        if number is not None and number.active:
            found.append(number)
            last = position
    return NumberPage(numbers=found, next_cursor=None)


def holding(calling: Calling, number: Number, now: datetime) -> tuple[Number, NumberClaim, TenantNumberIndex]:
    """A new number with its E.164's claim (``NumberTakenError`` while another active number holds
    it) and its place in the tenant's list: the aggregates to save together."""
    claim = calling.find(NumberClaim, NumberClaim.create_id(number.e164))
    if claim is None:
        claim = NumberClaim(tenant_id=number.tenant_id, e164=number.e164, number_id=number.number_id, at=now)
    else:
        claim.claim(tenant_id=number.tenant_id, number_id=number.number_id, at=now)
    index = _index(calling, number.tenant_id) or TenantNumberIndex(tenant_id=number.tenant_id)
    index.add(number.number_id)
    return number, claim, index


def owned(calling: Calling, principal: Principal, number_id: str) -> Number:
    """The tenant's number named in a path: 422 when no UUID, 403 outside the key's ``number_ids``,
    404 when unknown or another tenant's."""
    try:
        aggregate_id = Number.id_of(number_id)
    except ValueError as exc:
        raise FieldError(["path", "number_id"], "a number id is a UUID", code="invalid_id", value=number_id) from exc
    principal.require_number(str(aggregate_id))
    number = calling.find(Number, aggregate_id)
    if number is None or number.tenant_id != principal.tenant_id:
        raise NotFoundError(f"no number {number_id}", code="number_not_found")
    return number


def _index(calling: Calling, tenant_id: str) -> TenantNumberIndex | None:
    return calling.find(TenantNumberIndex, TenantNumberIndex.create_id(tenant_id))


def _in_body(exc: NumberConfigurationError) -> list[tuple[list[str | int], str, str, Any]]:
    return [(["body", *loc], message, kind, value) for loc, message, kind, value in exc.problems]


def _cursor(position: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{position}".encode()).decode().rstrip("=")


def _position(cursor: str | None) -> int:
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    digits = text.removeprefix(_CURSOR_PREFIX)
    if not text.startswith(_CURSOR_PREFIX) or not digits.isdigit() or len(digits) > 18:
        raise FieldError(["query", "cursor"], "cursor must be a value returned as a next cursor", code="invalid_cursor",
                         value=cursor)
    return int(digits)
