"""Webhook endpoints: create (the secret shown once, kept sealed), list, soft-delete.

The URL's syntax and addresses are checked by the caller before ``create`` (an async resolution,
``WebhookPoster.check``) and again before every attempt.
"""

from __future__ import annotations

from collections.abc import Sequence

from application.calling.app import Calling
from application.errors import FieldError, NotFoundError
from application.principal import Principal
from application.ports import SecretBox
from domain import ids
from domain.webhooks import signing
from domain.webhooks.endpoint import EMITTED, NOT_YET_EMITTED, WebhookEndpoint, WebhookEndpointIndex


def check_events(events: Sequence[str] | None) -> list[str]:
    if events is None:
        return list(EMITTED)
    unknown = [e for e in events if e not in EMITTED]
    if unknown or not events:
        later = [e for e in unknown if e in NOT_YET_EMITTED]
        detail = f"; {', '.join(later)} will come later" if later else ""
        raise FieldError(["body", "events"], f"events must be a non-empty list of: {', '.join(EMITTED)}{detail}",
                         code="unknown_event", value=list(events))
    return list(dict.fromkeys(events))


def create(calling: Calling, principal: Principal, box: SecretBox, *, url: str, description: str | None,
           events: list[str]) -> tuple[WebhookEndpoint, str]:
    """The new endpoint and its secret (in clear only in this answer)."""
    secret = signing.new_secret()
    sealed = box.seal(secret)

    def attempt() -> WebhookEndpoint:
        # Built afresh on every attempt: a failed commit has already taken the events of the last one.
        endpoint = WebhookEndpoint(tenant_id=principal.tenant_id, url=url, description=description, events=events,
                                   sealed_secret=sealed, by=principal.actor, at=calling.ports.clock())
        index = (calling.find(WebhookEndpointIndex, WebhookEndpointIndex.create_id(principal.tenant_id))
                 or WebhookEndpointIndex(tenant_id=principal.tenant_id))
        index.add(endpoint.endpoint_id)
        calling.commit(endpoint, index)
        return endpoint

    return calling.retry_on_conflict(attempt), secret


def listing(calling: Calling, tenant_id: str) -> list[WebhookEndpoint]:
    index = calling.find(WebhookEndpointIndex, WebhookEndpointIndex.create_id(tenant_id))
    if index is None:
        return []
    found = (calling.find(WebhookEndpoint, WebhookEndpoint.id_of(i)) for i in index.endpoint_ids)
    return [endpoint for endpoint in found if endpoint is not None]


def owned(calling: Calling, tenant_id: str, endpoint_id: str) -> WebhookEndpoint:
    return calling.find_owned(WebhookEndpoint, ids.WEBHOOK, endpoint_id, tenant_id, loc="id", noun="webhook")


def delete(calling: Calling, principal: Principal, endpoint_id: str) -> WebhookEndpoint:
    def attempt() -> WebhookEndpoint:
        endpoint = owned(calling, principal.tenant_id, endpoint_id)
        if not endpoint.delete(principal.actor, calling.ports.clock()):
            raise NotFoundError(f"no webhook {endpoint_id}", code="webhook_not_found")
        index = calling.find(WebhookEndpointIndex, WebhookEndpointIndex.create_id(principal.tenant_id))
        if index is not None:
            index.deactivate(endpoint.endpoint_id)
        calling.commit(*(a for a in (endpoint, index) if a is not None))
        return endpoint

    return calling.retry_on_conflict(attempt)


def secret_of(box: SecretBox, endpoint: WebhookEndpoint) -> str:
    return box.open(endpoint.sealed_secret)
