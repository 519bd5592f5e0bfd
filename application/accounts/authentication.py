"""API key authentication: a lookup by hash; revocation and rotation expiry checked here."""

from __future__ import annotations

from typing import TypeVar

from application.accounts.app import Accounts
from application.errors import AuthenticationError
from application.principal import API_KEY, Principal
from domain.accounts import api_key as key_rules
from domain.accounts.api_key import ApiKey
from domain.accounts.tenant import APPROVED, Tenant

INVALID_KEY = "invalid API key"
E = TypeVar("E", bound=Exception)


def _key_and_tenant(accounts: Accounts, key_hash: str) -> tuple[ApiKey, Tenant] | None:
    """The key and its tenant as of now; read-only copies, reused while nothing has changed."""
    head = accounts.head()
    cached = accounts.lookups.get(("api_key", key_hash), head)
    if cached is not None:
        return cached
    key = accounts.find(ApiKey, key_rules.key_uuid(key_hash))
    if key is None or key.key_hash != key_hash:
        return None
    tenant = accounts.find(Tenant, Tenant.create_id(key.tenant_id))
    if tenant is None:  # pragma: no cover - keys are saved with their tenant
        return None
    accounts.lookups.put(("api_key", key_hash), head, (key, tenant))
    return key, tenant


def identified(error: E, key_id: str | None, tenant_id: str | None) -> E:
    """``error`` marked with the key it refuses, when the key was recognised, so the refusal's log
    line can name the key and tenant (never the secret)."""
    error.key_id, error.tenant_id = key_id, tenant_id  # type: ignore[attr-defined]
    return error


def _principal(key: ApiKey, tenant: Tenant) -> Principal:
    return Principal(
        kind=API_KEY,
        tenant_id=key.tenant_id,
        user_id=key.user_id,
        verification_status=tenant.verification_status,
        tier=tenant.tier,
        key_id=key.key_id,
        scopes=key.scopes,
        number_ids=key.number_ids,
    )


def remembered_key(accounts: Accounts, secret: str) -> tuple[int, Principal, bool] | None:
    """Authentication from this process's memory alone: the principal of an active key of an approved
    tenant, the accounts log head it was read at, and whether ``accounts.changes`` (kept by the
    server's watcher of the accounts log) vouches that neither the key nor its tenant changed since.
    Not vouched for (no watcher, or a stalled one): the caller checks that the head has not moved
    (``head_cache``). ``None``: use ``authenticate_key``."""
    if not key_rules.looks_like_secret(secret):
        return None
    entry = accounts.lookups.peek(("api_key", key_rules.hash_secret(secret)))
    if entry is None:
        return None
    head, (key, tenant) = entry
    vouched = accounts.changes.vouching()
    if vouched and not accounts.changes.unchanged(head, key.id, tenant.id):
        return None
    if key.status(accounts.ports.clock()) != key_rules.ACTIVE:
        return None  # revoked, expired or rotated (a use to audit): the full path decides
    if tenant.verification_status != APPROVED:
        return None  # refused anyway; read afresh so that an approval elsewhere counts at once
    return head, _principal(key, tenant), vouched


def authenticate_key(accounts: Accounts, secret: str, *, method: str, path: str) -> Principal:
    if not key_rules.looks_like_secret(secret):
        raise AuthenticationError(INVALID_KEY, code="invalid_api_key")
    key_hash = key_rules.hash_secret(secret)
    found = _key_and_tenant(accounts, key_hash)
    if found is None:
        raise AuthenticationError(INVALID_KEY, code="invalid_api_key")
    key, tenant = found
    now = accounts.ports.clock()
    status = key.status(now)
    if status == key_rules.REVOKED:
        raise identified(AuthenticationError("this API key has been revoked", code="api_key_revoked"),
                         key.key_id, key.tenant_id)
    if status == key_rules.EXPIRED:
        raise identified(AuthenticationError(
            "this API key was rotated and its grace period has ended", code="api_key_expired"
        ), key.key_id, key.tenant_id)
    if status == key_rules.ROTATED:
        # SPEC.md: every use of a rotated key in its grace window is audit-logged.
        accounts.update(ApiKey, key.id, lambda k: k.record_use_during_grace(method=method, path=path[:512], now=now))
    return _principal(key, tenant)
