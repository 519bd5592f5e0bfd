"""Webhook deliveries: scheduled when a call ends, attempted under a lease, retried by request.

``schedule`` is idempotent (a delivery's id derives from the event and the endpoint), so the
scheduler may see a call's event twice. ``lease`` and ``record`` bracket one attempt: the lease
is an event, so of two dispatchers racing for one attempt only one gets to send.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from application import logs

from application.calling.app import Calling
from application.errors import ConflictError, NotFoundError
from application.principal import Principal
from application.ports import SecretBox
from application.webhooks.ports import AttemptOutcome
from domain import ids
from domain.calls.call import Call
from domain.webhooks import payload, signing
from domain.webhooks.delivery import LEASE, DeliveryStateError, WebhookDelivery
from domain.webhooks.endpoint import CALL_COMPLETED, WebhookEndpoint, WebhookEndpointIndex

log = logs.get_logger(__name__)

ENDPOINT_DELETED = "the endpoint was deleted"
ENDPOINT_DISABLED = "endpoint_disabled"  # the cancel reason of a delivery whose endpoint was disabled


def schedule(calling: Calling, tenant_id: str, load_call: Callable[[], Call],
             retry_delays: Sequence[float] | None = None) -> list[WebhookDelivery]:
    """One delivery of ``call.completed`` per active endpoint of the call's tenant, saved together;
    ``retry_delays`` (seconds after each failure) defaults to the spec's schedule. Seeing the same
    call event again saves nothing new (the deliveries' ids derive from it). The call is loaded
    only when the tenant has an active endpoint (most calls of most tenants have none)."""
    build = _builder(calling, tenant_id, load_call, retry_delays)
    fresh = build()
    try:
        calling.commit(*fresh)
        return fresh
    except ConflictError:  # this event was seen before, by this scheduler or another: keep what is new
        saved = []
        for delivery in build():
            try:
                calling.commit(delivery)
            except ConflictError:
                continue
            saved.append(delivery)
        return saved


def schedule_many(calling: Calling, ended: Sequence[tuple[str, Callable[[], Call]]],
                  retry_delays: Sequence[float] | None = None) -> list[WebhookDelivery]:
    """``schedule`` for each (tenant id, call loader), saved in one commit; if any was scheduled
    before (the commit conflicts), each is scheduled again alone and keeps only what is new."""
    indexes: dict[str, WebhookEndpointIndex | None] = {}  # read once per tenant in the batch
    fresh = [delivery for tenant_id, load_call in ended
             for delivery in _builder(calling, tenant_id, load_call, retry_delays, indexes)()]
    try:
        calling.commit(*fresh)
    except ConflictError:
        return [d for tenant_id, load_call in ended for d in schedule(calling, tenant_id, load_call, retry_delays)]
    return fresh


def _builder(calling: Calling, tenant_id: str, load_call: Callable[[], Call], retry_delays: Sequence[float] | None,
             indexes: dict[str, WebhookEndpointIndex | None] | None = None) -> Callable[[], list[WebhookDelivery]]:
    """Makes the call's deliveries afresh at each call (a failed commit leaves its aggregates spent)."""
    if indexes is not None and tenant_id in indexes:
        index = indexes[tenant_id]
    else:
        index = calling.find(WebhookEndpointIndex, WebhookEndpointIndex.create_id(tenant_id))
        if indexes is not None:
            indexes[tenant_id] = index
    if index is None or not index.active_ids:
        return lambda: []
    call = load_call()
    event = payload.call_completed(call)
    body = payload.encode(event)
    now = calling.ports.clock()
    targets = [i for i in index.active_ids if CALL_COMPLETED in _events_of(calling, index, i)]
    return lambda: [WebhookDelivery(tenant_id=call.tenant_id, endpoint_id=endpoint_id, call_id=call.call_id,
                                    event_id=event["id"], event_type=CALL_COMPLETED, body=body, at=now,
                                    retry_delays=list(retry_delays) if retry_delays is not None else None)
                    for endpoint_id in targets]


def _events_of(calling: Calling, index: WebhookEndpointIndex, endpoint_id: str) -> tuple[str, ...]:
    """An endpoint's event names, remembered while the tenant's index stands at the same version
    (a change of an endpoint's events is saved with the index)."""
    remembered = calling.lookups.get(("webhook-events", endpoint_id), index.version)
    if remembered is None:
        endpoint = calling.find(WebhookEndpoint, WebhookEndpoint.id_of(endpoint_id))
        remembered = tuple(endpoint.events) if endpoint is not None else ()
        calling.lookups.put(("webhook-events", endpoint_id), index.version, remembered)
    return remembered


@dataclass(frozen=True)
class Attempt:
    delivery: WebhookDelivery
    number: int
    url: str
    secrets: tuple[str, ...]  # the current secret, then the previous one while its grace lasts

    def headers(self, timestamp: int) -> dict[str, str]:
        body = self.delivery.body.encode()
        return signing.headers(list(self.secrets), timestamp, body, event_type=self.delivery.event_type,
                               delivery_uuid=self.delivery.delivery_uuid)


def lease(calling: Calling, box: SecretBox, delivery_uuid: uuid.UUID, owner: str, now: datetime,
          duration: timedelta = LEASE, known: WebhookDelivery | None = None) -> Attempt | None:
    """The delivery's next attempt for ``owner``, or None: nothing due, someone else has it, or
    the endpoint is deleted or disabled (the delivery is then cancelled). ``known``: the delivery as just saved
    by its scheduler (saves a read; if it is stale, the lease conflicts and nothing is sent)."""
    delivery = known if known is not None else calling.find(WebhookDelivery, delivery_uuid)
    if delivery is None:
        return None
    endpoint = calling.find(WebhookEndpoint, WebhookEndpoint.id_of(delivery.endpoint_id))
    if endpoint is None or not endpoint.active:
        delivery.cancel(ENDPOINT_DISABLED if endpoint is not None and endpoint.disabled else ENDPOINT_DELETED, now)
        _commit_quietly(calling, delivery)
        return None
    number = delivery.lease(owner, now, duration)
    if not _commit_quietly(calling, delivery) or number is None:
        return None  # lost the race, or only a lost attempt was written down
    return attempt_of(box, delivery, number, endpoint, now)


def attempt_of(box: SecretBox, delivery: WebhookDelivery, number: int, endpoint: WebhookEndpoint,
               now: datetime) -> Attempt:
    """The attempt ``number`` of a leased delivery, with the endpoint's secrets opened to sign it."""
    secrets = tuple(box.open(sealed) for sealed in endpoint.sealed_secrets(now))
    return Attempt(delivery=delivery, number=number, url=endpoint.url, secrets=secrets)


def record(calling: Calling, attempt: Attempt, outcome: AttemptOutcome, now: datetime) -> WebhookDelivery | None:
    """Write down the attempt's result; None if its lease was taken over meanwhile. An attempt the
    URL policy refused (``refused_code``) also disables the endpoint and cancels this delivery:
    retrying a URL the policy refuses can never succeed."""
    delivery = attempt.delivery
    refused = outcome.refused_code
    try:
        delivery.record_attempt(attempt.number, status=outcome.status, body=outcome.body,
                                latency_ms=outcome.latency_ms, error=outcome.error, address=outcome.address, now=now)
        calling.commit(delivery)
    except (ConflictError, DeliveryStateError):
        return None
    if refused is not None:
        disable_refused(calling, delivery, refused, outcome.error or refused, now)
    return delivery


def disable_refused(calling: Calling, delivery: WebhookDelivery, code: str, reason: str, now: datetime) -> None:
    def attempt() -> None:
        endpoint = calling.find(WebhookEndpoint, WebhookEndpoint.id_of(delivery.endpoint_id))
        if endpoint is None or not endpoint.disable(code, reason, "webhook_dispatcher", now):
            return
        index = calling.find(WebhookEndpointIndex, WebhookEndpointIndex.create_id(endpoint.tenant_id))
        if index is not None:
            index.deactivate(endpoint.endpoint_id)
        calling.commit(*(a for a in (endpoint, index) if a is not None))
        log.warning("webhooks.endpoint_disabled", endpoint_id=endpoint.endpoint_id, tenant_id=endpoint.tenant_id,
                    delivery_id=delivery.delivery_id, call_id=delivery.call_id, reason_code=code, reason=reason)

    calling.retry_on_conflict(attempt)
    delivery.cancel(ENDPOINT_DISABLED, now)
    _commit_quietly(calling, delivery)


def _commit_quietly(calling: Calling, delivery: WebhookDelivery) -> bool:
    try:
        calling.commit(delivery)
    except ConflictError:
        return False
    return True


def owned_delivery(calling: Calling, tenant_id: str, endpoint_id: str, delivery_id: str) -> WebhookDelivery:
    delivery = calling.find_owned(WebhookDelivery, ids.DELIVERY, delivery_id, tenant_id, loc="delivery_id",
                                  noun="delivery")
    if delivery.endpoint_id != endpoint_id:
        raise NotFoundError(f"no delivery {delivery_id}", code="delivery_not_found")
    return delivery


def request_retry(calling: Calling, principal: Principal, endpoint_id: str, delivery_id: str) -> WebhookDelivery:
    """Ask for one more attempt with the original payload (a fresh timestamp and signature)."""
    def change(delivery: WebhookDelivery) -> None:
        try:
            delivery.request_retry(calling.ports.clock())
        except DeliveryStateError as exc:
            raise ConflictError(exc.message, code=exc.code) from exc

    delivery = owned_delivery(calling, principal.tenant_id, endpoint_id, delivery_id)
    endpoint = calling.find(WebhookEndpoint, WebhookEndpoint.id_of(endpoint_id))
    if endpoint is None or endpoint.deleted:
        raise ConflictError("the endpoint was deleted; nothing is sent to it any more", code="webhook_deleted")
    if endpoint.disabled:
        raise ConflictError(f"the endpoint is disabled ({endpoint.disabled_code}); re-enable it with PATCH "
                            "active=true first", code="webhook_disabled")
    change(delivery)
    calling.commit(delivery)
    return delivery
