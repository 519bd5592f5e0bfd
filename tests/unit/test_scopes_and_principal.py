"""Scope rules and the principal's number restriction (SPEC.md Authentication §5–6)."""

from __future__ import annotations

import pytest

from application.errors import PermissionDeniedError
from application.principal import API_KEY, SESSION, Principal
from domain.accounts import scopes


def key_principal(granted=None, numbers=None) -> Principal:
    return Principal(kind=API_KEY, tenant_id="ten_x", user_id="usr_x", verification_status="approved",
                     tier="standard", key_id="key_x", scopes=granted, number_ids=numbers)


def test_null_scopes_mean_every_permission():
    principal = key_principal(None)
    assert all(principal.allows(scope) for scope in scopes.ALL_SCOPES)


def test_a_scoped_key_allows_only_its_scopes():
    principal = key_principal(("calls:read",))
    assert principal.allows("calls:read")
    with pytest.raises(PermissionDeniedError) as raised:
        principal.require_scope("calls:create")
    assert raised.value.code == "insufficient_scope"


def test_minting_may_not_escalate():
    assert scopes.is_subset(("calls:read",), ("calls:read", "calls:create"))
    assert not scopes.is_subset(("webhooks:write",), ("calls:read",))
    assert not scopes.is_subset(None, ("calls:read",))
    assert scopes.is_subset(None, None)


def test_unknown_scopes_are_named():
    assert scopes.unknown_scopes(["calls:read", "calls:delete"]) == ["calls:delete"]


def test_number_restriction_is_checked():
    allowed = "5f0c8a52-0d1e-4a34-9a51-7d1a2b3c4d5e"
    restricted = key_principal(numbers=(allowed,))
    assert restricted.may_use_number(allowed)
    assert restricted.may_use_number(allowed.upper())
    assert restricted.may_use_number(allowed.replace("-", ""))
    assert not restricted.may_use_number("not-a-uuid")
    with pytest.raises(PermissionDeniedError) as raised:
        restricted.require_number("0f0c8a52-0d1e-4a34-9a51-7d1a2b3c4d5e")
    assert raised.value.code == "number_not_allowed"
    assert key_principal(numbers=None).may_use_number("anything")


def test_sessions_are_not_limited_by_scopes():
    session = Principal(kind=SESSION, tenant_id="ten_x", user_id="usr_x", verification_status="approved", tier="standard")
    assert session.allows("providers:write")
    assert session.actor == "usr_x"
