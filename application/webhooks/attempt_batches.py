"""Leases and results of many attempts in one commit each (docs/decisions.md 45).

``lease_many`` and ``record_many`` do what ``deliveries.lease`` and ``deliveries.record`` do for one
attempt, for a batch: each endpoint is read once, and the batch's events are saved in one commit.
A batch is one command, so when any of its deliveries was changed meanwhile (another dispatcher
took it, a manual retry, its endpoint deleted) the whole save conflicts; each one is then done
again alone from the stored state, exactly as the single-attempt functions do it, and only the
changed ones come back empty. Every guarantee of one attempt therefore holds for each in a batch:
a lease is saved before anything is sent, and a result is written only for the attempt it leased.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from application.calling.app import Calling
from application.errors import ConflictError
from application.ports import SecretBox
from application.webhooks.deliveries import (
    ENDPOINT_DELETED,
    ENDPOINT_DISABLED,
    Attempt,
    attempt_of,
    disable_refused,
    lease,
    record,
)
from application.webhooks.ports import AttemptOutcome
from domain.webhooks.delivery import LEASE, DeliveryStateError, WebhookDelivery
from domain.webhooks.endpoint import WebhookEndpoint

Wanted = tuple[uuid.UUID, WebhookDelivery | None]  # a delivery's id, and the delivery as just saved when known


def lease_many(calling: Calling, box: SecretBox, wanted: Sequence[Wanted], owner: str, now: datetime,
               duration: timedelta = LEASE) -> list[Attempt | None]:
    """``deliveries.lease`` for each of ``wanted``, in order, saved in one commit."""
    endpoints: dict[str, WebhookEndpoint | None] = {}
    changed: list[WebhookDelivery] = []
    leased: list[tuple[WebhookDelivery, int, WebhookEndpoint] | None] = []
    for delivery_uuid, known in wanted:
        delivery = known if known is not None else calling.find(WebhookDelivery, delivery_uuid)
        if delivery is None:
            leased.append(None)
            continue
        if delivery.endpoint_id not in endpoints:
            endpoints[delivery.endpoint_id] = calling.find(WebhookEndpoint, WebhookEndpoint.id_of(delivery.endpoint_id))
        endpoint = endpoints[delivery.endpoint_id]
        if endpoint is None or not endpoint.active:
            delivery.cancel(ENDPOINT_DISABLED if endpoint is not None and endpoint.disabled else ENDPOINT_DELETED, now)
            number = None
        else:
            number = delivery.lease(owner, now, duration)
        if delivery.pending_events:
            changed.append(delivery)
        leased.append(None if number is None or endpoint is None else (delivery, number, endpoint))
    try:
        calling.commit(*changed)
    except ConflictError:  # one of them changed meanwhile: each alone, from what is stored
        return [lease(calling, box, delivery_uuid, owner, now, duration) for delivery_uuid, _ in wanted]
    return [None if item is None else attempt_of(box, *item, now) for item in leased]


def record_many(calling: Calling, results: Sequence[tuple[Attempt, AttemptOutcome]],
                now: datetime) -> list[WebhookDelivery | None]:
    """``deliveries.record`` for each (attempt, outcome), in order, saved in one commit; None for an
    attempt whose lease was taken over meanwhile."""
    recorded: list[WebhookDelivery | None] = []
    for attempt, outcome in results:
        delivery = attempt.delivery
        try:
            delivery.record_attempt(attempt.number, status=outcome.status, body=outcome.body,
                                    latency_ms=outcome.latency_ms, error=outcome.error, address=outcome.address,
                                    now=now)
        except DeliveryStateError:
            recorded.append(None)
            continue
        recorded.append(delivery)
    try:
        calling.commit(*(d for d in recorded if d is not None))
    except ConflictError:  # each alone, on the delivery as stored now
        return [_record_again(calling, attempt, outcome, now) for attempt, outcome in results]
    for (attempt, outcome), delivery in zip(results, recorded):
        if delivery is not None and outcome.refused_code is not None:
            disable_refused(calling, delivery, outcome.refused_code, outcome.error or outcome.refused_code, now)
    return recorded


def _record_again(calling: Calling, attempt: Attempt, outcome: AttemptOutcome, now: datetime) -> WebhookDelivery | None:
    stored = calling.find(WebhookDelivery, attempt.delivery.id)
    if stored is None:
        return None
    return record(calling, dataclasses.replace(attempt, delivery=stored), outcome, now)
