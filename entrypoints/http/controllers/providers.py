"""``/v1/providers``: verify carrier credentials (stored sealed), choose the caller number, show
``{status, last4}``. Only the carrier (Twilio) has routes here; calls never route through others."""

from __future__ import annotations

from litestar import Controller, get, post
from litestar.status_codes import HTTP_200_OK

from application.principal import Principal
from application.providers import credentials
from domain.accounts.scopes import PROVIDERS_WRITE
from domain.providers.credential import ProviderCredential
from entrypoints.http.auth import requires_scope
from entrypoints.http.blocking import run_blocking
from entrypoints.http.dependencies import provide_providers, service_and_principal
from entrypoints.http.schemas.providers import (
    AccountNumber,
    CarrierAccount,
    CarrierVerifyRequest,
    CredentialStatus,
    SelectNumberRequest,
)
from entrypoints.http.services import ProvidersService


def verified_view(credential: ProviderCredential) -> CarrierAccount:
    return CarrierAccount(status=credential.status, account_name=credential.account_name,
                          phone_numbers=[AccountNumber(number=n["number"], friendly=n["friendly"])
                                         for n in credential.numbers],
                          caller_number=credential.caller_number)


class ProvidersController(Controller):
    path = "/v1/providers"
    tags = ["providers"]
    dependencies = service_and_principal(provide_providers)

    @post("/carrier/verify", guards=[requires_scope(PROVIDERS_WRITE)], status_code=HTTP_200_OK,
          summary="Check Twilio credentials with Twilio, then store them encrypted; lists the account's numbers")
    async def verify(self, data: CarrierVerifyRequest, service: ProvidersService, principal: Principal) -> CarrierAccount:
        credential = await run_blocking(credentials.verify, service.calling, principal, service.carrier,
                                        service.credential_box, account_sid=data.account_sid,
                                        auth_token=data.auth_token)
        return verified_view(credential)

    @post("/select-number", guards=[requires_scope(PROVIDERS_WRITE)], status_code=HTTP_200_OK, sync_to_thread=True,
          summary="Choose the caller number: one of the verified account's numbers")
    def select_number(self, data: SelectNumberRequest, service: ProvidersService, principal: Principal) -> CarrierAccount:
        return verified_view(credentials.select_number(service.calling, principal, data.e164))

    @get("/{provider:str}", guards=[requires_scope(PROVIDERS_WRITE)], sync_to_thread=True,
         summary="The stored credential: {status, last4} (last four characters of the auth token)")
    def show(self, service: ProvidersService, principal: Principal, provider: str) -> CredentialStatus:
        status, last4 = credentials.status(service.calling, principal.tenant_id, provider)
        return CredentialStatus(status=status, last4=last4)
