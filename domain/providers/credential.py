"""A tenant's credentials for one provider (SPEC.md Provider credential): the auth token only as
AES-GCM ciphertext, never in clear in an event; the account's numbers and the chosen caller number.
One per tenant and provider (deterministic id); re-verifying replaces the credentials."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.errors import NumberNotInAccountError

TWILIO = "twilio"
VERIFIED = "verified"
NOT_CONFIGURED = "not_configured"


class AccountNumbers:
    """The numbers of a verified carrier account, ``{"number": e164, "friendly": name}`` each: the
    caller number is one of them, and stays chosen only while the account holds it."""

    @staticmethod
    def copied(numbers: Iterable[Mapping[str, str]]) -> list[dict[str, str]]:
        return [dict(n) for n in numbers]

    @staticmethod
    def hold(numbers: Iterable[Mapping[str, str]], e164: str) -> bool:
        return any(n["number"] == e164 for n in numbers)

    @classmethod
    def caller_kept(cls, numbers: Iterable[Mapping[str, str]], caller_number: str | None) -> str | None:
        """The caller number, or ``None`` when the account does not hold it (it is chosen again)."""
        return caller_number if caller_number is None or cls.hold(numbers, caller_number) else None


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
        self.account_sid, self.sealed_token, self.last4 = account_sid, sealed_token, last4
        self.account_name, self.numbers = account_name, AccountNumbers.copied(numbers)
        self.verified_by, self.verified_at = by, at
        self.caller_number: str | None = None
        self.caller_selected_by: str | None = None
        self.caller_selected_at: datetime | None = None

    @property
    def verified(self) -> bool:
        return self.status == VERIFIED

    def holds(self, e164: str) -> bool:
        return AccountNumbers.hold(self.numbers, e164)

    def reverify(self, *, account_sid: str, sealed_token: str, last4: str, account_name: str,
                 numbers: list[dict[str, str]], by: str, at: datetime) -> None:
        self._reverified(account_sid=account_sid, sealed_token=sealed_token, last4=last4, account_name=account_name,
                         numbers=numbers, by=by, at=at)

    @event("Reverified")
    def _reverified(self, account_sid: str, sealed_token: str, last4: str, account_name: str,
                    numbers: list[dict[str, str]], by: str, at: datetime) -> None:
        self.status = VERIFIED
        self.account_sid, self.sealed_token, self.last4 = account_sid, sealed_token, last4
        self.account_name, self.numbers = account_name, AccountNumbers.copied(numbers)
        self.verified_by, self.verified_at = by, at
        self.caller_number = AccountNumbers.caller_kept(self.numbers, self.caller_number)

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
