"""What the provider use cases need from outside: a carrier that checks an account's credentials."""

from __future__ import annotations

from dataclasses import dataclass, field
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


class Carrier(Protocol):
    def verify(self, account_sid: str, auth_token: str) -> CarrierAccount:
        """Fetch the account and its incoming numbers with these credentials."""
        ...
