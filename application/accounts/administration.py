"""Operator actions: approve tenants (verification gate) and look users up."""

from __future__ import annotations

from dataclasses import dataclass

from application.accounts.app import Accounts
from application.errors import FieldError, NotFoundError, PermissionDeniedError
from application.principal import Principal
from domain import ids
from domain.accounts.tenant import Tenant
from domain.accounts.user import User, normalize_email


@dataclass(frozen=True, kw_only=True)
class UserView:
    user: User
    tenant: Tenant


def require_admin(accounts: Accounts, principal: Principal) -> None:
    user = accounts.find(User, User.create_id(principal.user_id))
    if user is None or not user.is_admin:
        raise PermissionDeniedError("this route is for operators only", code="admin_required")


def user_view(accounts: Accounts, user_id: str) -> UserView:
    try:
        aggregate_id = ids.from_public(ids.USER, user_id)
    except ids.MalformedIdError as exc:
        raise FieldError(["path", "user_id"], str(exc), code="invalid_id", value=user_id) from exc
    user = accounts.find(User, aggregate_id)
    if user is None:
        raise NotFoundError(f"no user {user_id}", code="user_not_found")
    tenant = accounts.find(Tenant, Tenant.create_id(user.tenant_id))
    assert tenant is not None
    return UserView(user=user, tenant=tenant)


def approve_user(accounts: Accounts, user_id: str, *, by: str) -> UserView:
    view = user_view(accounts, user_id)
    if view.tenant.approve(by=by, now=accounts.ports.clock()):
        accounts.commit(view.tenant)
    return view


def approve_email(accounts: Accounts, email: str, *, by: str) -> UserView:
    user = accounts.user_by_email(normalize_email(email))
    if user is None:
        raise NotFoundError(f"no user with e-mail {email}", code="user_not_found")
    return approve_user(accounts, user.user_id, by=by)
