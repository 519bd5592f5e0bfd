"""API key use cases: issue, rotate (24 h grace), revoke. Secrets are returned once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from application.accounts.app import Accounts
from application.errors import ConflictError, FieldError, PermissionDeniedError
from application.principal import Principal
from domain import ids
from domain.accounts import api_key as key_rules
from domain.accounts import scopes as scope_rules
from domain.accounts.api_key import ApiKey
from domain.errors import DomainError


@dataclass(frozen=True, kw_only=True)
class IssuedKey:
    aggregate: ApiKey
    secret: str

    @property
    def key_id(self) -> str:
        return self.aggregate.key_id


def new_key(
    *,
    tenant_id: str,
    user_id: str,
    name: str | None,
    scopes: tuple[str, ...] | None,
    number_ids: tuple[str, ...] | None,
    by: str,
    now: datetime,
    rotated_from: str | None = None,
) -> IssuedKey:
    secret = key_rules.generate_secret()
    aggregate = ApiKey(
        tenant_id=tenant_id,
        user_id=user_id,
        key_hash=key_rules.hash_secret(secret),
        prefix=secret[: key_rules.DISPLAY_PREFIX_LENGTH],
        name=name,
        scopes=scopes,
        number_ids=number_ids,
        issued_by=by,
        at=now,
        rotated_from=rotated_from,
    )
    return IssuedKey(aggregate=aggregate, secret=secret)


def _check_request(principal: Principal, scopes: tuple[str, ...] | None, number_ids: tuple[str, ...] | None) -> None:
    if scopes is not None:
        unknown = scope_rules.unknown_scopes(scopes)
        if unknown:
            raise FieldError(
                ["body", "scopes"],
                f"unknown scope(s) {', '.join(unknown)}; allowed: {', '.join(scope_rules.ALL_SCOPES)}",
                code="unknown_scope",
                value=list(scopes),
            )
        if not scopes:
            raise FieldError(["body", "scopes"], "give at least one scope, or null for all permissions", code="too_short", value=[])
    if principal.kind == "api_key":
        # A key may only mint keys that can do no more than itself.
        if not scope_rules.is_subset(scopes, principal.scopes):
            raise PermissionDeniedError("a key cannot grant scopes it does not have", code="scope_escalation")
        if principal.number_ids is not None and (
            number_ids is None or not set(number_ids) <= set(principal.number_ids)
        ):
            raise PermissionDeniedError("a key cannot grant numbers it does not have", code="number_escalation")


def issue_key(
    accounts: Accounts,
    principal: Principal,
    *,
    name: str | None,
    scopes: tuple[str, ...] | None,
    number_ids: tuple[str, ...] | None,
) -> IssuedKey:
    _check_request(principal, scopes, number_ids)
    issued = new_key(
        tenant_id=principal.tenant_id,
        user_id=principal.user_id,
        name=name,
        scopes=tuple(dict.fromkeys(scopes)) if scopes is not None else None,
        number_ids=tuple(dict.fromkeys(number_ids)) if number_ids is not None else None,
        by=principal.actor,
        now=accounts.ports.clock(),
    )
    accounts.commit(issued.aggregate)
    return issued


def owned_key(accounts: Accounts, principal: Principal, key_id: str) -> ApiKey:
    """The tenant's key, or ``NotFoundError`` (other tenants' keys do not exist for you)."""
    return accounts.find_owned(ApiKey, ids.API_KEY, key_id, principal.tenant_id, loc="key_id", noun="api_key")


def rotate_key(accounts: Accounts, principal: Principal, key_id: str) -> tuple[IssuedKey, ApiKey]:
    old = owned_key(accounts, principal, key_id)
    now = accounts.ports.clock()
    successor = new_key(
        tenant_id=old.tenant_id,
        user_id=old.user_id,
        name=old.name,
        scopes=old.scopes,
        number_ids=old.number_ids,
        by=principal.actor,
        now=now,
        rotated_from=old.key_id,
    )
    try:
        old.rotate(successor.key_id, by=principal.actor, now=now)
    except DomainError as exc:
        raise ConflictError(exc.message, code=exc.code) from exc
    accounts.commit(old, successor.aggregate, conflict="key_already_rotated")
    return successor, old


def revoke_key(accounts: Accounts, principal: Principal, key_id: str) -> ApiKey:
    key = owned_key(accounts, principal, key_id)
    if key.revoke(by=principal.actor, now=accounts.ports.clock()):
        accounts.commit(key)
    return key
