"""A tenant's push subscriptions, saved with each change of one: the listing reads it, and the
notifier reads it alone to find which devices a number's inbound call goes to."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TypeVar

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate

_V = TypeVar("_V")


@dataclass(frozen=True)
class Listing:
    """``places``: every subscription not unsubscribed, with its place in the listing (a new one
    goes last, one listed already keeps its place); ``numbers``: the numbers of each active one
    (tombstoned ones have none); ``serial``: the last place given."""

    places: dict[str, int] = field(default_factory=dict)
    numbers: dict[str, list[str]] = field(default_factory=dict)
    serial: int = 0

    @classmethod
    def after_listing(cls, listing: Listing, subscription_id: str, number_ids: list[str]) -> Listing:
        numbers = {**listing.numbers, subscription_id: number_ids}
        if subscription_id in listing.places:
            return cls(listing.places, numbers, listing.serial)
        serial = listing.serial + 1
        return cls({**listing.places, subscription_id: serial}, numbers, serial)

    @classmethod
    def after_deactivating(cls, listing: Listing, subscription_id: str) -> Listing:
        """Still listed, with no numbers."""
        return cls(listing.places, _without(listing.numbers, subscription_id), listing.serial)

    @classmethod
    def after_unlisting(cls, listing: Listing, subscription_id: str) -> Listing:
        return cls(_without(listing.places, subscription_id), _without(listing.numbers, subscription_id),
                   listing.serial)


def _without(entries: dict[str, _V], key: str) -> dict[str, _V]:
    return {k: value for k, value in entries.items() if k != key}


class PushSubscriptionIndex(TenantAggregate):
    """``listing``: the subscriptions listed and the numbers of the active ones (``Listing``)."""

    @staticmethod
    def create_id(tenant_id: str) -> uuid.UUID:
        return ids.deterministic("push-subscriptions", tenant_id)

    @event("Started")
    def __init__(self, tenant_id: str) -> None:
        self.tenant_id = tenant_id
        self.listing = Listing()

    @property
    def listed(self) -> dict[str, int]:
        """Each subscription not unsubscribed, with its place in the listing."""
        return self.listing.places

    @property
    def numbers(self) -> dict[str, list[str]]:
        """The numbers of each active subscription."""
        return self.listing.numbers

    def subscribe(self, subscription_id: str, number_ids: list[str]) -> None:
        if self.numbers.get(subscription_id) != list(number_ids) or subscription_id not in self.listed:
            self._listed(subscription_id=subscription_id, number_ids=list(number_ids))

    @event("Listed")
    def _listed(self, subscription_id: str, number_ids: list[str]) -> None:
        self.listing = Listing.after_listing(self.listing, subscription_id, number_ids)

    def deactivate(self, subscription_id: str) -> None:
        """Tombstoned: still listed, sent nothing."""
        if subscription_id in self.numbers:
            self._deactivated(subscription_id=subscription_id)

    @event("Deactivated")
    def _deactivated(self, subscription_id: str) -> None:
        self.listing = Listing.after_deactivating(self.listing, subscription_id)

    def unlist(self, subscription_id: str) -> None:
        if subscription_id in self.listed:
            self._unlisted(subscription_id=subscription_id)

    @event("Unlisted")
    def _unlisted(self, subscription_id: str) -> None:
        self.listing = Listing.after_unlisting(self.listing, subscription_id)

    def subscribed_to(self, number_id: str) -> list[str]:
        """The active subscriptions of ``number_id``, in listing order."""
        return [s for s in self.listed if number_id in self.numbers.get(s, ())]

    def page(self, after: int | None, limit: int) -> tuple[list[str], int | None]:
        """Up to ``limit`` subscription ids listed after place ``after``, and the place to go on
        from (None on the last page)."""
        rest = sorted((place, s) for s, place in self.listed.items() if after is None or place > after)
        shown = rest[:limit]
        return [s for _, s in shown], shown[-1][0] if len(rest) > limit else None
