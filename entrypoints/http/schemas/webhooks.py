"""Request and response shapes of ``/v1/webhooks``."""

from __future__ import annotations

from typing import Annotated

import msgspec
from pydantic import AfterValidator, StringConstraints

from domain.webhooks.endpoint import MAX_DESCRIPTION
from entrypoints.http.schemas.calls import Strict
from entrypoints.http.schemas.text import safe_text

Url = Annotated[str, StringConstraints(min_length=1, max_length=2048), AfterValidator(safe_text)]
Description = Annotated[str, StringConstraints(max_length=MAX_DESCRIPTION), AfterValidator(safe_text)]
Events = Annotated[list[Annotated[str, StringConstraints(max_length=64)]], AfterValidator(list)]


class WebhookCreateRequest(Strict):
    url: Url
    description: Description | None = None
    events: Events | None = None


class WebhookPatchRequest(Strict):
    """Absent fields stay as they are (``model_fields_set``); ``description: null`` clears it.
    ``url``, ``events`` and ``active`` are not nullable."""

    url: Url = None  # type: ignore[assignment]
    description: Description | None = None
    events: Events = None  # type: ignore[assignment]
    active: bool = None  # type: ignore[assignment]


class DisabledReason(msgspec.Struct, kw_only=True, frozen=True):
    code: str
    message: str
    at: str


class WebhookEndpointResponse(msgspec.Struct, kw_only=True, frozen=True):
    id: str
    url: str
    description: str | None
    events: list[str]
    created_at: str
    active: bool
    deleted_at: str | None
    disabled: DisabledReason | None  # why nothing is sent (a refused URL, or PATCH active=false)
    rotation_grace_ends_at: str | None  # the old secret also signs until then (after a rotation)


class WebhookSecretResponse(WebhookEndpointResponse, kw_only=True, frozen=True):
    secret: str  # the new whsec_ secret, shown only in this answer


class ErrorDetail(msgspec.Struct, kw_only=True, frozen=True):
    code: str
    message: str


class ErrorBody(msgspec.Struct, kw_only=True, frozen=True):
    error: ErrorDetail


class DeliveryRetry(msgspec.Struct, kw_only=True, frozen=True):
    """A manual retry accepted: the delivery is sent again once (same delivery id)."""

    delivery_id: str  # dlv_…
    delivery_uuid: str  # the X-Service-Delivery-Id header of every attempt
    status: str  # pending until the retry is sent
    retry_requested_at: str | None
