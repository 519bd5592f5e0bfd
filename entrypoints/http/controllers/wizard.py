"""``/v1/wizard``: onboarding (SPEC.md Wizard; docs/wizard.md). ``generate`` turns a business
description into a verdict and a ready Number configuration (any valid API key); ``provision``
buys a managed number in an area code and configures it in one operation (``numbers:write``).
"""

from __future__ import annotations

import msgspec
from litestar import Controller, Response, post
from litestar.openapi import ResponseSpec

from application.principal import Principal
from application.wizard import generate as generating
from application.wizard import provision as provisioning
from domain.accounts.scopes import NUMBERS_WRITE
from domain.calls.idempotency import body_fingerprint
from entrypoints.http.auth import requires_scope
from entrypoints.http.controllers.numbers import number_view
from entrypoints.http.dependencies import provide_numbering, service_and_principal
from entrypoints.http.idempotency import IdempotencyKey, answer_response, checked_key
from entrypoints.http.schemas.webhooks import ErrorBody
from entrypoints.http.schemas.wizard import (
    WizardConfig,
    WizardGenerateRequest,
    WizardGeneration,
    WizardProvisioned,
    WizardProvisionRequest,
)
from entrypoints.http.services import NumberingService

GENERATE_ERRORS = {502: ResponseSpec(ErrorBody, description=(
    "The configuration generator could not be reached (generator_unavailable), or answered twice with a "
    "configuration that fails the number checks (generation_invalid); nothing was saved, try again"))}
PROVISION_ERRORS = {
    403: ResponseSpec(ErrorBody, description="The key lacks numbers:write (insufficient_scope), or is restricted by "
                                             "number_ids (number_not_allowed)"),
    409: ResponseSpec(ErrorBody, description=(
        "idempotency_key_reused: the Idempotency-Key was used with another body; provision_in_progress: a request "
        "with this key is buying its number (send it again after Retry-After seconds); number_taken: the number "
        "bought is registered as another active number")),
    502: ResponseSpec(ErrorBody, description=(
        "The carrier could not be reached or refused (upstream_unavailable, carrier_refused); when it did not "
        "answer the purchase itself, the same Idempotency-Key later keeps the number if it was bought")),
    503: ResponseSpec(ErrorBody, description="Managed numbers are not enabled on this server, or its managed carrier "
                                             "account is refused (managed_numbers_unavailable)"),
}
PROVISION_DESCRIPTION = (
    "Refuses, before anything is bought: a config PATCH /v1/numbers/{id} would refuse (422 at body.config), a "
    "verdict other than supported on the description and the config's texts (422 use_case_needs_review or "
    "use_case_unsupported at body.business_description, with the reason), an area code with nothing on sale (422 "
    "no_numbers_in_area_code). Then buys a number in area_code on the managed carrier account and registers it "
    "with the config. With an Idempotency-Key (24 h) a retry, even after a crash mid-purchase, never buys a second "
    "number: it answers the first response, or finishes the provision with the number bought for it.")


class WizardController(Controller):
    path = "/v1/wizard"
    tags = ["wizard"]
    dependencies = service_and_principal(provide_numbering)

    @post("/generate", sync_to_thread=True, status_code=200, responses=GENERATE_ERRORS, operation_id="wizard_generate",
          summary="A verdict, its reason and a ready Number configuration for a business description",
          description=("verdict: supported, needs_review (a person reviews the use case; provisioning refuses it) or "
                       "unsupported (config is null). The verdict is the service's compliance gate on the "
                       "description, whichever generator writes the configuration."))
    def generate(self, data: WizardGenerateRequest, service: NumberingService, principal: Principal) -> WizardGeneration:
        del principal  # any valid API key
        done = generating.generate(service.wizard, data.business_description)
        config = msgspec.convert(done.config, WizardConfig) if done.config is not None else None
        return WizardGeneration(verdict=done.verdict, reason=done.reason, config=config)  # type: ignore[arg-type]

    @post("/provision", sync_to_thread=True, status_code=200, guards=[requires_scope(NUMBERS_WRITE)],
          responses=PROVISION_ERRORS, operation_id="wizard_provision",
          summary="Buy a managed number in an area code and apply a supported configuration to it",
          description=PROVISION_DESCRIPTION)
    def provision(self, data: WizardProvisionRequest, service: NumberingService, principal: Principal,
                  idempotency_key: IdempotencyKey = None) -> Response[WizardProvisioned]:
        config = data.config.given()
        request = provisioning.ProvisionRequest(business_name=data.business_name,
                                             business_description=data.business_description,
                                             area_code=data.area_code, config=config)
        fingerprint = body_fingerprint({"business_name": data.business_name, "area_code": data.area_code,
                                        "business_description": data.business_description, "config": config})
        answer = provisioning.provision(
            service.calling, service.managed, principal, request,
            render=lambda number: msgspec.to_builtins(number_view(number)), key=checked_key(idempotency_key),
            fingerprint=fingerprint, lease=service.purchase_lease)
        return answer_response(answer)
