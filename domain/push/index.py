"""A tenant's push subscriptions, saved with each change of one: the listing reads it, and the
notifier reads it alone to find which devices a number's inbound call goes to."""

from __future__ import annotations

import uuid

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate


class PushSubscriptionIndex(TenantAggregate):
    """``listed``: every subscription not unsubscribed, with its place in the listing (first
    subscription first); ``numbers``: the numbers of each active one (tombstoned ones have none)."""

    @staticmethod
    def create_id(tenant_id: str) -> uuid.UUID:
        return ids.deterministic("push-subscriptions", tenant_id)

    @event("Started")
    def __init__(self, tenant_id: str) -> None:
        self.tenant_id = tenant_id
        self.listed: dict[str, int] = {}
        self.numbers: dict[str, list[str]] = {}
        self.serial = 0

    def subscribe(self, subscription_id: str, number_ids: list[str]) -> None:
        if self.numbers.get(subscription_id) != list(number_ids) or subscription_id not in self.listed:
            self._listed(subscription_id=subscription_id, number_ids=list(number_ids))

    @event("Listed")
    def _listed(self, subscription_id: str, number_ids: list[str]) -> None:
        if subscription_id not in self.listed:
            self.serial += 1
            self.listed = {**self.listed, subscription_id: self.serial}
        self.numbers = {**self.numbers, subscription_id: number_ids}

    def deactivate(self, subscription_id: str) -> None:
        """Tombstoned: still listed, sent nothing."""
        if subscription_id in self.numbers:
            self._deactivated(subscription_id=subscription_id)

    @event("Deactivated")
    def _deactivated(self, subscription_id: str) -> None:
        self.numbers = {key: value for key, value in self.numbers.items() if key != subscription_id}

    def unlist(self, subscription_id: str) -> None:
        if subscription_id in self.listed:
            self._unlisted(subscription_id=subscription_id)

    @event("Unlisted")
    def _unlisted(self, subscription_id: str) -> None:
        self.listed = {key: value for key, value in self.listed.items() if key != subscription_id}
        self.numbers = {key: value for key, value in self.numbers.items() if key != subscription_id}

    def subscribed_to(self, number_id: str) -> list[str]:
        """The active subscriptions of ``number_id``, in listing order."""
        return [s for s in self.listed if number_id in self.numbers.get(s, ())]

    def page(self, after: int | None, limit: int) -> tuple[list[str], int | None]:
        """Up to ``limit`` subscription ids listed after place ``after``, and the place to go on
        from (None on the last page)."""
        rest = sorted((place, s) for s, place in self.listed.items() if after is None or place > after)
        shown = rest[:limit]
        return [s for _, s in shown], shown[-1][0] if len(rest) > limit else None
