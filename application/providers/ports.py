"""What the provider and live-call use cases need from outside: a carrier that checks an account's
credentials, places and ends calls and looks them up (its callbacks: ``calling.carrier_reports``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True)
class CarrierAccount:
    name: str
    numbers: list[tuple[str, str]] = field(default_factory=list)  # (E.164, friendly name)


class CarrierRefusedError(Exception):
    """The carrier answered and refused: wrong credentials, unknown or inactive account.

    ``field`` is the request field to blame (``account_sid`` or ``auth_token``)."""

    def __init__(self, message: str, *, code: str, field: str = "auth_token") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field


class CarrierUnreachableError(Exception):
    """No usable answer: connection refused, timeout, or a failure on the carrier's side."""


@dataclass(frozen=True, kw_only=True)
class AccountAccess:
    """A tenant's carrier sub-account, the token unsealed for the length of one request."""

    account_sid: str
    auth_token: str = field(repr=False)


@dataclass(frozen=True, kw_only=True)
class DialRequest:
    to: str
    from_number: str
    twiml_url: str
    status_url: str
    amd_url: str | None  # asynchronous answering-machine detection reports here; None: no detection
    recording_url: str | None  # recording callback; None: not recorded
    ring_seconds: int = 30


@dataclass(frozen=True, kw_only=True)
class CarrierCall:
    """The carrier's view of a call (for reconciliation)."""

    sid: str
    status: str  # carrier_reports.PROGRESS_STATUSES or FINAL_STATUSES, ``unknown`` for anything else
    duration_seconds: int | None
    answered_by: str | None  # carrier_reports.ANSWERED_BY


class Carrier(Protocol):
    def verify(self, account_sid: str, auth_token: str) -> CarrierAccount:
        """Fetch the account and its incoming numbers with these credentials."""
        ...

    def dial(self, account: AccountAccess, request: DialRequest) -> str:
        """Place the call; its carrier id. ``CarrierRefusedError`` when the carrier said no,
        ``CarrierUnreachableError`` when the answer is unknown (the call may exist)."""
        ...

    def hang_up(self, account: AccountAccess, carrier_sid: str) -> None: ...

    def redirect(self, account: AccountAccess, carrier_sid: str, url: str) -> None:
        """Make a call in progress fetch new instructions from ``url``."""
        ...

    def start_recording(self, account: AccountAccess, carrier_sid: str, callback_url: str) -> None:
        """Record a call in progress from now on; the recording is reported to ``callback_url`` once
        the call ends. Errors as ``dial``."""
        ...

    def fetch_call(self, account: AccountAccess, carrier_sid: str) -> CarrierCall | None: ...

    def find_call(self, account: AccountAccess, to: str, from_number: str, since: datetime) -> list[CarrierCall]:
        """Calls to ``to`` from ``from_number`` created at or after ``since`` (oldest first)."""
        ...

    def send_sms(self, account: AccountAccess, *, from_number: str, to: str, body: str) -> str:
        """Send a text message; its carrier id. ``CarrierRefusedError`` when the carrier said no
        (a number that cannot receive texts), ``CarrierUnreachableError`` when its answer is unknown."""
        ...
