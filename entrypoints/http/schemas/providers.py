"""Request and response shapes of ``/v1/providers``."""

from __future__ import annotations

from typing import Annotated

import msgspec
from pydantic import StringConstraints

from entrypoints.http.schemas.calls import Strict


class CarrierVerifyRequest(Strict):
    account_sid: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    # Printable ASCII without spaces: a token is never echoed, so the rule must not need it to be.
    auth_token: Annotated[str, StringConstraints(min_length=8, max_length=128, pattern=r"^[!-~]+$")]


class SelectNumberRequest(Strict):
    e164: Annotated[str, StringConstraints(min_length=1, max_length=64)]


class AccountNumber(msgspec.Struct, kw_only=True):
    number: str  # E.164
    friendly: str  # the carrier's display name of it


class CarrierAccount(msgspec.Struct, kw_only=True):
    """The verified carrier account: its numbers, and the caller number chosen among them."""

    status: str  # verified
    account_name: str
    phone_numbers: list[AccountNumber]
    caller_number: str | None  # null until select-number chose one


class CredentialStatus(msgspec.Struct, kw_only=True):
    status: str  # verified, or not_configured
    last4: str | None  # the last four characters of the auth token; null when not configured
