"""Operator routes under ``/v1/admin`` (admin keys only)."""

from __future__ import annotations

from datetime import timedelta, timezone
from typing import Annotated, Any, Literal

from litestar import Controller, get, patch, post
from litestar.params import Parameter
from litestar.status_codes import HTTP_200_OK

from application.accounts import administration, voice
from application.principal import Principal
from domain.accounts.system_defaults import SystemDefaults
from domain.calls.engine_choice import VoiceDefaults
from entrypoints.http.auth import admin_only
from entrypoints.http.dependencies import provide_accounts, service_and_principal
from entrypoints.http.schemas.accounts import AdminUserResponse
from entrypoints.http.schemas.pages import VoiceModelStats
from entrypoints.http.schemas.voice import SystemDefaultsPatch, SystemDefaultsResponse
from entrypoints.http.services import AccountsService
from domain.timestamps import iso
from projections.voice_model_stats.queries import engine_stats


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


def _defaults(saved: SystemDefaults | None) -> SystemDefaultsResponse:
    current = saved.voice if saved is not None else VoiceDefaults()
    return SystemDefaultsResponse(
        voice_engine_default=current.voice_engine_default,
        voice_ab_weights=current.weights_dict(),
        updated_at=iso(saved.updated_at) if saved is not None else None,
        updated_by=saved.updated_by if saved is not None else None,
    )


class AdminController(Controller):
    path = "/v1/admin"
    tags = ["admin"]
    guards = [admin_only]
    dependencies = service_and_principal(provide_accounts)

    @get("/users/{user_id:str}", sync_to_thread=True, summary="A user and the verification status of its tenant")
    def get_user(self, service: AccountsService, user_id: str) -> AdminUserResponse:
        return _user(administration.user_view(service.accounts, user_id))

    @post("/users/{user_id:str}/approve", status_code=HTTP_200_OK, sync_to_thread=True,
          summary="Approve the user's tenant (verification gate)")
    def approve(self, service: AccountsService, principal: Principal, user_id: str) -> AdminUserResponse:
        return _user(administration.approve_user(service.accounts, user_id, by=principal.actor))

    @get("/system-defaults", sync_to_thread=True,
         summary="System defaults: the default voice engine and the A/B weights between engines")
    def get_system_defaults(self, service: AccountsService) -> SystemDefaultsResponse:
        return _defaults(voice.system_defaults(service.accounts))

    @patch("/system-defaults", sync_to_thread=True,
           summary="Change the system defaults; weights given replace all weights (an engine left out weighs 0)")
    def change_system_defaults(self, data: SystemDefaultsPatch, service: AccountsService,
                               principal: Principal) -> SystemDefaultsResponse:
        given: dict[str, Any] = {name: getattr(data, name) for name in data.model_fields_set}
        return _defaults(voice.change_system_defaults(service.accounts, principal, **given))

    @get("/voice-model-stats", summary="Per-engine statistics of the terminal calls created in the last N UTC days")
    async def voice_model_stats(
        self, service: AccountsService,
        days: Annotated[int, Parameter(ge=1, le=365)] = 30,
        mode: Literal["live", "simulated"] | None = None,
    ) -> VoiceModelStats:
        until = service.clock().astimezone(timezone.utc).date()
        since = until - timedelta(days=days - 1)
        await service.reads.caught_up()
        engines = await engine_stats(service.reads.pool, since=since, until=until, mode=mode)
        # engines: the pre-0.2 name of data, kept for one release (CHANGELOG.md)
        return VoiceModelStats(data=engines, next_cursor=None, days=days, since=since.isoformat(),
                               until=until.isoformat(), mode=mode, engines=engines)
