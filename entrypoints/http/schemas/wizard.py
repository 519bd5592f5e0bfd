"""Request and response shapes of ``/v1/wizard`` (SPEC.md Wizard; docs/wizard.md).

Requests are pydantic models (docs/decisions.md 1: every problem of a body at once); the
provision's ``config`` is a ``NumberPatch``, checked by the domain as ``PATCH /v1/numbers/{id}``
checks it. Answers are msgspec Structs; a generated ``config`` is typed field by field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from pydantic import AfterValidator, Field, StringConstraints

from domain.numbers import configuration
from domain.wizard import compliance
from domain.wizard.configs import config_for
from entrypoints.http.schemas.calls import Strict
from entrypoints.http.schemas.number_shapes import SmsConditionView
from entrypoints.http.schemas.numbers import NumberPatch, NumberView, TransferDestinationView
from entrypoints.http.schemas.text import safe_text

DESCRIPTION_EXAMPLE = ("Acme Dental is a family dental practice in Austin, Texas. Patients call to book, move or "
                       "cancel checkups and cleanings, and ask about opening hours.")
CONFIG_EXAMPLE = config_for("dental", DESCRIPTION_EXAMPLE)
NUMBER_EXAMPLE_ID, E164_EXAMPLE = "7c099ecf-fa26-449b-afb7-0c8248dfc735", "+15125550100"

Description = Annotated[str, StringConstraints(min_length=1, max_length=4000), AfterValidator(safe_text)]
BusinessName = Annotated[str, StringConstraints(min_length=1, max_length=200), AfterValidator(safe_text)]
Verdict = Literal["supported", "needs_review", "unsupported"]


class WizardGenerateRequest(Strict):
    business_description: Description = Field(
        description="What the business does and what its callers need, in plain words (1 to 4,000 characters)",
        examples=[DESCRIPTION_EXAMPLE])


class WizardProvisionRequest(Strict):
    business_name: BusinessName = Field(description="The business the number answers for", examples=["Acme Dental"])
    business_description: Description = Field(
        description="The description the configuration was generated from; its verdict must be supported",
        examples=[DESCRIPTION_EXAMPLE])
    area_code: Annotated[str, StringConstraints(pattern=r"^[2-9][0-9]{2}$")] = Field(
        description="A North American area code (3 digits, the first 2 to 9): the number is bought in it",
        examples=["512"])
    config: NumberPatch = Field(description="The number's settings, as PATCH /v1/numbers/{id} takes them: a "
                                            "generated config as it is, or edited (transfer destinations added)")


class WizardSmsTemplate(msgspec.Struct, kw_only=True, omit_defaults=True):
    name: str
    body: str
    condition: SmsConditionView | None = None


class WizardConfig(msgspec.Struct, kw_only=True):
    """A Number configuration that ``PATCH /v1/numbers/{id}`` and ``POST /v1/wizard/provision``
    accept as it is."""

    greeting: str | None
    persona: str | None
    objective: str
    outcome_schema: dict[str, Any]
    timezone: str | None
    hours_json: dict[str, list[list[str]]]
    overflow_action: str
    voicemail_mode: str
    voicemail_schema: dict[str, Any]
    voicemail_persona: str | None
    sms_enabled: bool
    sms_templates: list[WizardSmsTemplate]
    transfer_destinations: list[TransferDestinationView]


class WizardGeneration(msgspec.Struct, kw_only=True):
    """``config`` is null for an unsupported use case: nothing is generated for it. A
    ``needs_review`` configuration is shown, but provisioning refuses it."""

    verdict: Verdict
    reason: str
    config: WizardConfig | None


class WizardProvisioned(msgspec.Struct, kw_only=True):
    tenant_id: str
    number: NumberView


def _number_example() -> dict[str, Any]:
    """The Number a provision of ``CONFIG_EXAMPLE`` answers (what ``NumberView`` shows)."""
    settings = configuration.complete({**configuration.defaults_for(E164_EXAMPLE), **CONFIG_EXAMPLE})
    settings["sms_templates"] = [{"id": "smt_884360e246c04c55acc30e656207e1b3", **template}
                                 for template in CONFIG_EXAMPLE["sms_templates"]]
    return {"id": NUMBER_EXAMPLE_ID, "e164": E164_EXAMPLE, "source": "managed", "active": True,
            "greeting_audio_fresh": False, **settings, "created_at": "2026-03-08T14:30:00Z", "updated_at": None,
            "disconnected_at": None}


# The OpenAPI document's examples of these routes (entrypoints/http/docs_example_values.py).
REQUEST_EXAMPLES: dict[str, Any] = {
    "WizardGenerateRequest": {"business_description": DESCRIPTION_EXAMPLE},
    "WizardProvisionRequest": {"business_name": "Acme Dental", "business_description": DESCRIPTION_EXAMPLE,
                               "area_code": "512", "config": CONFIG_EXAMPLE},
}
ANSWER_EXAMPLES: dict[str, Any] = {
    "WizardGeneration.verdict": compliance.SUPPORTED,
    "WizardGeneration.reason": compliance.assess(DESCRIPTION_EXAMPLE).reason,
    "WizardGeneration.config": CONFIG_EXAMPLE,
    "WizardProvisioned.number": _number_example(),
}
