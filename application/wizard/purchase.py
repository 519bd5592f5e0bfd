"""Buying a wizard provision's number at most once (docs/decisions.md 41), as a live call is dialled
at most once: the provision is saved before the carrier is asked, each purchase request is claimed
on it first, and the carrier keeps the provision's tag on the number it sells.

A request that finds a claim younger than the lease answers 409 ``provision_in_progress``; one that
finds an older claim (its request died, or never heard the answer) looks the tag up at the carrier
and keeps the number found there, and buys only when there is none. Reaches the carrier only
through ``NumberProvisioner``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from datetime import timedelta
from typing import TypeVar

from application import logs
from application.calling.app import Calling
from application.errors import ConflictError, FieldError, InProgressError, UpstreamUnavailableError
from application.numbers.managed import MAX_CANDIDATES, SOLD_MEANWHILE, carrier_refusal
from application.numbers.provisioning import ManagedNumbering
from application.principal import Principal
from application.providers.ports import CarrierRefusedError, CarrierUnreachableError
from domain.wizard.provisioning import Provisioning, PurchaseInFlightError

log = logs.get_logger(__name__)
T = TypeVar("T")

IN_PROGRESS = "provision_in_progress"


def open_provision(calling: Calling, principal: Principal, *, natural_key: str, fingerprint: str,
                   business_name: str, area_code: str, config: dict[str, object]) -> Provisioning:
    """The provision of a request: found again by its key (with the same body, unless it bought
    nothing: a refused request's key may be sent with another body), or saved now, before anything
    is bought. A completed one whose key's answer expired starts again."""
    now = calling.ports.clock()
    found = calling.find(Provisioning, Provisioning.create_id(principal.tenant_id, natural_key))
    if found is None:
        provision = Provisioning(tenant_id=principal.tenant_id, natural_key=natural_key, fingerprint=fingerprint,
                                 business_name=business_name, area_code=area_code, config=config,
                                 by=principal.actor, at=now)
    elif found.completed or (found.fingerprint != fingerprint and found.may_restart):
        found.restart(fingerprint, business_name, area_code, config, principal.actor, now)
        provision = found
    elif found.fingerprint != fingerprint:
        raise ConflictError("this Idempotency-Key was already used with a different request body, whose "
                            "number may have been bought; send that body again", code="idempotency_key_reused")
    else:
        return found
    _commit(calling, provision)
    log.info("wizard.provision_requested", provision=provision.public_id, area_code=area_code,
             generation=provision.generation)
    return provision


def buy(calling: Calling, numbering: ManagedNumbering, provision: Provisioning, *, lease: timedelta,
        avoid: Collection[str] = ()) -> Provisioning:
    """The provision with its number bought: the one an earlier request bought (found by its tag),
    else one bought now in its area code. ``avoid``: numbers not to buy (the configuration's
    transfer destinations)."""
    if provision.bought:
        return provision
    now = calling.ports.clock()
    _raise_if_in_flight(provision.wait_left(now, lease))
    provisioner = numbering.provisioner
    if provision.attempts:  # an earlier purchase request may have reached the carrier
        found = _carrier(lambda: provisioner.tagged(provision.tag), "look up")
        if found:
            e164, sid = found[0]
            provision.record_purchase(e164, sid, found=True, at=now)
            _commit(calling, provision)
            log.warning("wizard.purchase_found", provision=provision.public_id, e164=e164, provider_sid=sid)
            return provision
    candidates = [e164 for e164 in _carrier(lambda: provisioner.search(provision.area_code), "search")
                  if e164 not in avoid]
    for e164 in candidates[:MAX_CANDIDATES]:
        try:
            provision.claim_purchase(e164, calling.ports.clock(), lease)
        except PurchaseInFlightError as exc:
            _raise_if_in_flight(exc.retry_after)
        _commit(calling, provision)
        try:
            sid = provisioner.purchase(e164, numbering.voice_url, numbering.sms_url, tag=provision.tag)
        except CarrierUnreachableError as exc:
            # It may have been bought: the claim stays, and a retry after the lease looks for it.
            log.warning("wizard.purchase_unknown", provision=provision.public_id, e164=e164, error=str(exc))
            raise UpstreamUnavailableError(
                f"the carrier did not answer the purchase of a number ({exc}); send the request again with the "
                f"same Idempotency-Key in {math.ceil(lease.total_seconds())} s: it keeps the number if it was "
                "bought, and buys none twice") from None
        except CarrierRefusedError as exc:
            provision.purchase_failed(exc.code, calling.ports.clock())
            _commit(calling, provision)
            if exc.code != SOLD_MEANWHILE:
                raise carrier_refusal(exc, "purchase") from None
            continue
        provision.record_purchase(e164, sid, found=False, at=calling.ports.clock())
        _commit(calling, provision)
        log.info("wizard.number_bought", provision=provision.public_id, e164=e164, provider_sid=sid)
        return provision
    raise FieldError(["body", "area_code"], f"no number is available in area code {provision.area_code}; try a "
                     "nearby one", code="no_numbers_in_area_code", value=provision.area_code)


def _raise_if_in_flight(seconds: float) -> None:
    if seconds > 0:
        raise InProgressError("a request with this Idempotency-Key is buying its number; send it again after "
                              "Retry-After seconds", retry_after=max(1, math.ceil(seconds)), code=IN_PROGRESS)


def _commit(calling: Calling, provision: Provisioning) -> None:
    """Save the provision; a concurrent request of the same key that saved first holds it."""
    try:
        calling.commit(provision)
    except ConflictError as exc:
        if exc.code != "conflict":
            raise
        raise InProgressError("another request with this Idempotency-Key is being provisioned; send it again "
                              "after Retry-After seconds", retry_after=1, code=IN_PROGRESS) from exc


def _carrier(ask: Callable[[], T], step: str) -> T:
    try:
        return ask()
    except CarrierUnreachableError as exc:
        raise UpstreamUnavailableError(f"the carrier could not be reached to {step} numbers ({exc}); nothing was "
                                       "bought") from None
    except CarrierRefusedError as exc:
        raise carrier_refusal(exc, step) from None
