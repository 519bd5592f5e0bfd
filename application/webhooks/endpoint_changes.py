"""Changing a webhook endpoint: its fields (PATCH), its state (disabled / re-enabled) and its
secret (rotated; the previous one keeps signing for ``SECRET_GRACE``, shown once in the answer).

A URL, and the current URL when an endpoint is re-enabled, is checked by the caller before
``change`` (an async resolution, ``WebhookPoster.check``), as at creation.
"""

from __future__ import annotations

from typing import Any

from application.calling.app import Calling
from application.errors import ConflictError
from application.principal import Principal
from application.ports import SecretBox
from application.webhooks.endpoints import owned
from domain.webhooks import signing
from domain.webhooks.endpoint import DISABLED_BY_REQUEST, WebhookEndpoint, WebhookEndpointIndex


def _not_deleted(endpoint: WebhookEndpoint) -> WebhookEndpoint:
    if endpoint.deleted:
        raise ConflictError("the endpoint was deleted; it can no longer be changed", code="webhook_deleted")
    return endpoint


def change(calling: Calling, principal: Principal, endpoint_id: str, given: dict[str, Any]) -> WebhookEndpoint:
    """Apply the fields present in ``given`` (url, description, events, active); absent ones stay.
    ``active: false`` disables the endpoint (``disabled_by_request``), ``active: true`` re-enables it."""
    def attempt() -> WebhookEndpoint:
        endpoint = _not_deleted(owned(calling, principal.tenant_id, endpoint_id))
        now = calling.ports.clock()
        events_before = list(endpoint.events)
        endpoint.change({k: v for k, v in given.items() if k != "active"}, principal.actor, now)
        index = calling.find(WebhookEndpointIndex, WebhookEndpointIndex.create_id(principal.tenant_id))
        active = given.get("active")
        if active is False and endpoint.disable(DISABLED_BY_REQUEST, "disabled by request", principal.actor, now):
            if index is not None:
                index.deactivate(endpoint.endpoint_id)
        elif active is True and endpoint.enable(principal.actor, now):
            if index is not None:
                index.reactivate(endpoint.endpoint_id)
        if index is not None and endpoint.events != events_before:
            index.endpoint_changed(endpoint.endpoint_id)
        calling.commit(*(a for a in (endpoint, index) if a is not None))
        return endpoint

    return calling.retry_on_conflict(attempt)


def rotate_secret(calling: Calling, principal: Principal, box: SecretBox,
                  endpoint_id: str) -> tuple[WebhookEndpoint, str]:
    """The endpoint and its new secret (in clear only in this answer)."""
    secret = signing.new_secret()
    sealed = box.seal(secret)

    def attempt() -> WebhookEndpoint:
        endpoint = _not_deleted(owned(calling, principal.tenant_id, endpoint_id))
        endpoint.rotate_secret(sealed, principal.actor, calling.ports.clock())
        calling.commit(endpoint)
        return endpoint

    return calling.retry_on_conflict(attempt), secret
