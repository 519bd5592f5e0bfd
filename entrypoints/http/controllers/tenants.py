"""``/v1/tenants/me``: the calling tenant's voice settings (SPEC.md Tenant), scope ``tenants:write``."""

from __future__ import annotations

from typing import Any

from litestar import Controller, get, patch

from application.accounts import voice
from application.principal import Principal
from domain.accounts.scopes import TENANTS_WRITE
from domain.accounts.tenant import Tenant
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_accounts, service_and_principal
from entrypoints.http.schemas.voice import TenantSettingsPatch, TenantSettingsResponse
from entrypoints.http.services import AccountsService


def tenant_settings(tenant: Tenant) -> TenantSettingsResponse:
    return TenantSettingsResponse(tenant_id=tenant.tenant_id, voice_engine_default=tenant.voice_engine_default,
                                  voice_ab_disabled=tenant.voice_ab_disabled)


class TenantsController(Controller):
    path = "/v1/tenants"
    tags = ["tenants"]
    dependencies = service_and_principal(provide_accounts)

    @get("/me", guards=[requires_scope(TENANTS_WRITE)], sync_to_thread=True,
         summary="The tenant's voice settings (voice_engine_default null: the system default applies)")
    def read(self, service: AccountsService, principal: Principal) -> TenantSettingsResponse:
        return tenant_settings(voice.tenant_settings(service.accounts, principal.tenant_id))

    @patch("/me", guards=[requires_scope(TENANTS_WRITE)], sync_to_thread=True,
           summary="Change the voice settings: voice_engine_default, voice_ab_disabled (A/B kill switch)")
    def change(self, data: TenantSettingsPatch, service: AccountsService, principal: Principal) -> TenantSettingsResponse:
        given: dict[str, Any] = {name: getattr(data, name) for name in data.model_fields_set}
        return tenant_settings(voice.change_tenant_settings(service.accounts, principal, **given))
