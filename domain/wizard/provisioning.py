"""A wizard provision (docs/wizard.md, docs/decisions.md 41): the intent to buy one managed number
and configure it, saved before the carrier is asked, as a live call's ``DialRequested`` is.

Each purchase request is claimed first (``PurchaseAttempted``; optimistic concurrency lets one
request win) and tagged at the carrier with ``tag``, so that after a crash the number it bought
can be found again instead of bought twice. Pure: the events only assign state.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.errors import DomainError

PREFIX = "wzp"
# How long a purchase request may be on its way before another request may assume it was lost and
# look for its number at the carrier: longer than the carrier request's timeout.
PURCHASE_LEASE = timedelta(seconds=30)


class PurchaseInFlightError(DomainError):
    """Another request of the same provision is talking to the carrier."""

    code = "provision_in_progress"

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"a purchase for this provision is in flight; retry in {retry_after:.0f} s")
        self.retry_after = retry_after


class Provisioning(TenantAggregate):
    @staticmethod
    def create_id(tenant_id: str, natural_key: str) -> uuid.UUID:
        return ids.deterministic("wizard-provision", f"{tenant_id}:{natural_key}")

    @staticmethod
    def key_of(idempotency_key: str | None) -> str:
        """A keyed provision is found again by its key; one without a key is new each time."""
        return f"key:{idempotency_key}" if idempotency_key is not None else f"once:{uuid.uuid4().hex}"

    @event("Requested")
    def __init__(self, tenant_id: str, natural_key: str, fingerprint: str, business_name: str, area_code: str,
                 config: dict[str, Any], by: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.natural_key = natural_key
        self.generation = 1
        self.fingerprint, self.business_name, self.area_code = fingerprint, business_name, area_code
        self.config, self.requested_by, self.requested_at = config, by, at
        self.attempts = 0
        self.attempt_e164: str | None = None
        self.attempt_at: datetime | None = None  # None: no purchase request on its way
        self.e164: str | None = None
        self.provider_sid: str | None = None
        self.number_id: str | None = None

    @property
    def public_id(self) -> str:
        return ids.to_public(PREFIX, self.id)

    @property
    def tag(self) -> str:
        """What the carrier keeps on the number bought for this provision (its friendly name)."""
        return self.public_id if self.generation == 1 else f"{self.public_id}.{self.generation}"

    @property
    def bought(self) -> bool:
        return self.e164 is not None

    @property
    def completed(self) -> bool:
        return self.number_id is not None

    @property
    def may_restart(self) -> bool:
        """Done, or certain to have bought nothing (every purchase request was refused): its key may
        start a new provision, as a key whose request was refused may be sent with another body."""
        return self.completed or (not self.bought and self.attempt_at is None)

    def wait_left(self, now: datetime, lease: timedelta = PURCHASE_LEASE) -> float:
        """Seconds until a purchase request of another process may be taken as lost (0: none is)."""
        if self.attempt_at is None or self.bought:
            return 0.0
        return max(0.0, (self.attempt_at + lease - now).total_seconds())

    def claim_purchase(self, e164: str, at: datetime, lease: timedelta = PURCHASE_LEASE) -> None:
        """Record the purchase request about to be sent; ``PurchaseInFlightError`` while another is."""
        left = self.wait_left(at, lease)
        if left > 0:
            raise PurchaseInFlightError(left)
        self._purchase_attempted(e164=e164, at=at)

    @event("PurchaseAttempted")
    def _purchase_attempted(self, e164: str, at: datetime) -> None:
        self.attempts += 1
        self.attempt_e164 = e164
        self.attempt_at = at

    def purchase_failed(self, reason: str, at: datetime) -> None:
        """The carrier answered that it bought nothing: the claim ends at once."""
        self._attempt_ended(reason=reason, at=at)

    @event("AttemptEnded")
    def _attempt_ended(self, reason: str, at: datetime) -> None:
        self.attempt_at = None

    def record_purchase(self, e164: str, provider_sid: str, found: bool, at: datetime) -> None:
        """The number bought for this provision: answered by the carrier, or ``found`` by its tag."""
        self._number_bought(e164=e164, provider_sid=provider_sid, found=found, at=at)

    @event("NumberBought")
    def _number_bought(self, e164: str, provider_sid: str, found: bool, at: datetime) -> None:
        self.e164 = e164
        self.provider_sid = provider_sid
        self.attempt_at = None

    def complete(self, number_id: str, at: datetime) -> None:
        self._completed(number_id=number_id, at=at)

    @event("Completed")
    def _completed(self, number_id: str, at: datetime) -> None:
        self.number_id = number_id

    def restart(self, fingerprint: str, business_name: str, area_code: str, config: dict[str, Any], by: str,
                at: datetime) -> None:
        """The key starts a new provision, tagged anew: its answer expired (24 h), or it bought nothing."""
        if not self.may_restart:
            raise DomainError("a provision that may have bought a number cannot start again", code="provision_open")
        self._restarted(fingerprint=fingerprint, business_name=business_name, area_code=area_code, config=config,
                        by=by, at=at)

    @event("Restarted")
    def _restarted(self, fingerprint: str, business_name: str, area_code: str, config: dict[str, Any], by: str,
                   at: datetime) -> None:
        self.generation += 1
        self.fingerprint, self.business_name, self.area_code = fingerprint, business_name, area_code
        self.config, self.requested_by, self.requested_at = config, by, at
        self.attempts, self.attempt_e164, self.attempt_at = 0, None, None
        self.e164 = self.provider_sid = self.number_id = None
