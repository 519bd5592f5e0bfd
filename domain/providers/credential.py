"""A tenant's credentials for one provider (SPEC.md Provider credential): the auth token only as
AES-GCM ciphertext, never in clear in an event; the account's numbers and the chosen caller number.
One per tenant and provider (deterministic id); re-verifying replaces the credentials."""

from __future__ import annotations

import uuid
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.errors import NumberNotInAccountError

TWILIO = "twilio"
VERIFIED = "verified"
NOT_CONFIGURED = "not_configured"


class ProviderCredential(TenantAggregate):
    @staticmethod
    def create_id(tenant_id: str, provider: str) -> uuid.UUID:
        return ids.deterministic("provider-credential", f"{tenant_id}:{provider}")

    @event("Verified")
    def __init__(self, tenant_id: str, provider: str, account_sid: str, sealed_token: str, last4: str,
                 account_name: str, numbers: list[dict[str, str]], by: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.provider = provider
        self.status = VERIFIED
        self._assign(account_sid, sealed_token, last4, account_name, numbers, by, at)
        self.caller_number: str | None = None
        self.caller_selected_by: str | None = None
        self.caller_selected_at: datetime | None = None

    def _assign(self, account_sid: str, sealed_token: str, last4: str, account_name: str,
                numbers: list[dict[str, str]], by: str, at: datetime) -> None:
        self.account_sid = account_sid
        self.sealed_token = sealed_token
        self.last4 = last4
        self.account_name = account_name
        self.numbers = [dict(n) for n in numbers]
        self.verified_by = by
        self.verified_at = at

    @property
    def verified(self) -> bool:
        return self.status == VERIFIED

    def holds(self, e164: str) -> bool:
        return any(n["number"] == e164 for n in self.numbers)

    def reverify(self, *, account_sid: str, sealed_token: str, last4: str, account_name: str,
                 numbers: list[dict[str, str]], by: str, at: datetime) -> None:
        self._reverified(account_sid=account_sid, sealed_token=sealed_token, last4=last4, account_name=account_name,
                         numbers=numbers, by=by, at=at)

    @event("Reverified")
    def _reverified(self, account_sid: str, sealed_token: str, last4: str, account_name: str,
                    numbers: list[dict[str, str]], by: str, at: datetime) -> None:
        self.status = VERIFIED
        self._assign(account_sid, sealed_token, last4, account_name, numbers, by, at)
        if self.caller_number is not None and not self.holds(self.caller_number):
            self.caller_number = None  # the new account does not hold it: choose again

    def select_number(self, e164: str, *, by: str, at: datetime) -> None:
        if not self.holds(e164):
            raise NumberNotInAccountError(f"{e164} is not one of the numbers of the verified carrier account")
        if e164 != self.caller_number:
            self._number_selected(e164=e164, by=by, at=at)

    @event("NumberSelected")
    def _number_selected(self, e164: str, by: str, at: datetime) -> None:
        self.caller_number = e164
        self.caller_selected_by = by
        self.caller_selected_at = at
