"""Numbers by E.164, for inbound routing and for a call's caller number: the E.164's claim, then
the number it names. Two aggregate reads by id (from the aggregate cache while nothing moved),
never a scan. Plain functions: the telephony code calls them with its ``Calling``."""

from __future__ import annotations

import uuid

from application.calling.app import Calling
from domain.calls.call import Call
from domain.numbers.number import Number, NumberClaim


def number_for_e164(calling: Calling, e164: str) -> Number | None:
    """The active number, of whichever tenant, that holds ``e164``; None when none does."""
    return _holder(calling, e164, tenant_id=None)


def tenant_number(calling: Calling, tenant_id: str, e164: str) -> Number | None:
    """The tenant's active number with ``e164`` (a call's ``from_number`` must be one); None otherwise."""
    return _holder(calling, e164, tenant_id=tenant_id)


def _holder(calling: Calling, e164: str, *, tenant_id: str | None) -> Number | None:
    claim = calling.find(NumberClaim, NumberClaim.create_id(e164))
    if claim is None or claim.number_id is None or (tenant_id is not None and claim.tenant_id != tenant_id):
        return None
    number = calling.find(Number, uuid.UUID(claim.number_id))
    if number is None or not number.active or number.e164 != e164:
        return None
    return number if tenant_id is None or number.tenant_id == tenant_id else None


def number_called(calling: Calling, call: Call) -> Number | None:
    """The tenant's number an inbound call came to (its ``metadata.number_id``), disconnected or
    not; None for an outbound call or a number not the call's tenant's."""
    number_id = (call.metadata or {}).get("number_id") if call.direction == "inbound" else None
    try:
        number = calling.find(Number, uuid.UUID(str(number_id))) if number_id else None
    except ValueError:
        return None
    return number if number is not None and number.tenant_id == call.tenant_id else None

