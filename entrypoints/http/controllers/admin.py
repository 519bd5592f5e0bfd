"""Operator routes under ``/v1/admin`` (admin keys only)."""

from __future__ import annotations

from litestar import Controller, get, post
from litestar.di import Provide
from litestar.status_codes import HTTP_200_OK

from application.accounts import administration
from application.principal import Principal
from entrypoints.bootstrap import Container
from entrypoints.http.auth import admin_only
from entrypoints.http.dependencies import provide_principal
from entrypoints.http.schemas.accounts import AdminUserResponse
from domain.timestamps import iso


def _user(view: administration.UserView) -> AdminUserResponse:
    user, tenant = view.user, view.tenant
    return AdminUserResponse(
        user_id=user.user_id,
        tenant_id=user.tenant_id,
        email=user.email,
        name=user.name,
        is_admin=user.is_admin,
        email_verified=user.email_verified_at is not None,
        verification_status=tenant.verification_status,
        registered_at=iso(user.registered_at) or "",
        approved_at=iso(tenant.approved_at),
        approved_by=tenant.approved_by,
    )


class AdminController(Controller):
    path = "/v1/admin"
    tags = ["admin"]
    guards = [admin_only]
    dependencies = {"principal": Provide(provide_principal, sync_to_thread=False)}

    @get("/users/{user_id:str}", sync_to_thread=True, summary="A user and the verification status of its tenant")
    def get_user(self, container: Container, user_id: str) -> AdminUserResponse:
        return _user(administration.user_view(container.accounts, user_id))

    @post("/users/{user_id:str}/approve", status_code=HTTP_200_OK, sync_to_thread=True,
          summary="Approve the user's tenant (verification gate)")
    def approve(self, container: Container, principal: Principal, user_id: str) -> AdminUserResponse:
        return _user(administration.approve_user(container.accounts, user_id, by=principal.actor))
