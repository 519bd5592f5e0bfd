"""Request shapes of ``/v1/providers``."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from entrypoints.http.schemas.calls import Strict


class CarrierVerifyRequest(Strict):
    account_sid: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    # Printable ASCII without spaces: a token is never echoed, so the rule must not need it to be.
    auth_token: Annotated[str, StringConstraints(min_length=8, max_length=128, pattern=r"^[!-~]+$")]


class SelectNumberRequest(Strict):
    e164: Annotated[str, StringConstraints(min_length=1, max_length=64)]
