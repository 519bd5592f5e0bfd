"""Managed numbers (SPEC.md "What the service does" 4, docs/numbers.md "Managed numbers"): bought
on the service's own carrier sub-account for a supported use case, then configured as any number;
released there when deleted. Reaches the carrier only through ``ManagedNumbering``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from application import logs
from application.calling.app import Calling
from application.calling.idempotency import Answer, run_once
from application.errors import (
    ConflictError,
    FeatureUnavailableError,
    FieldError,
    NotFoundError,
    PermissionDeniedError,
    UpstreamUnavailableError,
)
from application.numbers import registry
from application.numbers.provisioning import ManagedNumbering
from application.principal import Principal
from application.providers.ports import CarrierRefusedError, CarrierUnreachableError
from domain.errors import NumberTakenError
from domain.numbers import use_cases
from domain.numbers.number import BYO, MANAGED, Number

log = logs.get_logger(__name__)

ENDPOINT = "POST /v1/numbers"  # the Idempotency-Key's scope
AREA_CODE = re.compile(r"[2-9][0-9]{2}")  # a North American area code (NPA)
MAX_CANDIDATES = 3  # numbers tried when the first found is sold meanwhile
SOLD_MEANWHILE = "carrier_number_unavailable"  # the adapter's code for a number no longer on sale
UNCONFIGURED = ("managed numbers are not enabled on this server: its operator sets "
                "CALLWRIGHT_MANAGED_ACCOUNT_SID and CALLWRIGHT_MANAGED_AUTH_TOKEN (the service's carrier "
                "sub-account); meanwhile bring your own number (POST /v1/numbers/byo)")
Render = Callable[[Number], dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class ManagedNumberRequest:
    area_code: str
    use_case: str


def provision(calling: Calling, numbering: ManagedNumbering | None, principal: Principal,
              request: ManagedNumberRequest, *, render: Render, key: str | None = None,
              fingerprint: str = "") -> Answer:
    """Buy a number in ``request.area_code`` and save it as the tenant's (source ``managed``), once
    per ``key``: a replay answers the first response and buys nothing. A number bought but not
    saved is released again (best effort, logged)."""
    if principal.number_ids is not None:
        raise PermissionDeniedError("this API key is restricted to some numbers and cannot create new ones",
                                    code="number_not_allowed")
    reason = use_cases.refusal(request.use_case)
    if reason is not None:
        raise FieldError(["body", "use_case"], reason, code="use_case_not_supported", value=request.use_case,
                         ctx={"allowed": list(use_cases.ALLOWED)})
    if not AREA_CODE.fullmatch(request.area_code):
        raise FieldError(["body", "area_code"], "an area code is 3 digits, the first 2 to 9", code="invalid_area_code",
                         value=request.area_code)
    if numbering is None:
        raise FeatureUnavailableError(UNCONFIGURED, code="managed_numbers_unavailable")
    bought: list[tuple[str, str]] = []  # (E.164, provider sid): bought once, whatever the save attempts

    def produce() -> tuple[list[Any], int, dict[str, Any]]:
        if not bought:
            bought.append(_buy(numbering, request.area_code))
        e164, sid = bought[0]
        now = calling.ports.clock()
        number = Number.register(tenant_id=principal.tenant_id, e164=e164, fields={}, by=principal.actor, at=now,
                                 source=MANAGED, provider_sid=sid)
        return list(registry.holding(calling, number, now)), 201, render(number)

    try:
        answer = _save_once(calling, principal, key, fingerprint, produce)
    except NumberTakenError as exc:
        _release_unsaved(numbering, bought, "taken")
        raise ConflictError(f"{bought[0][0]} is already registered as an active number; try again",
                            code=exc.code) from exc
    except BaseException as exc:
        _release_unsaved(numbering, bought, type(exc).__name__)
        raise
    if answer.replayed:  # a request with the same key won meanwhile: keep its number, not ours
        _release_unsaved(numbering, bought, "replayed")
    return answer


def release(calling: Calling, numbering: ManagedNumbering | None, principal: Principal, number_id: str) -> Number:
    """Give a managed number back to the carrier, then disconnect it (soft delete, as bring your
    own). If the carrier cannot be reached nothing changes (502): try again."""
    number = registry.owned(calling, principal, number_id)
    if number.source == BYO:
        raise ConflictError(f"{number_id} is a bring-your-own number: disconnect it with DELETE /v1/numbers/byo/"
                            f"{number_id}", code="number_not_managed")
    if not number.active:
        raise NotFoundError(f"no active managed number {number_id}", code="number_not_found")
    if numbering is None:
        raise FeatureUnavailableError(UNCONFIGURED, code="managed_numbers_unavailable")
    if number.provider_sid:
        try:
            numbering.provisioner.release(number.provider_sid)
        except CarrierUnreachableError as exc:
            raise UpstreamUnavailableError(f"the carrier could not be reached to release {number.e164} ({exc}); "
                                           "nothing was changed, try again") from None
        except CarrierRefusedError as exc:
            raise carrier_refusal(exc, "release") from None
    log.info("managed_number.released", number_id=number_id, e164=number.e164, provider_sid=number.provider_sid)
    return registry.disconnect(calling, principal, number_id, source=MANAGED)


def _save_once(calling: Calling, principal: Principal, key: str | None, fingerprint: str,
               produce: Callable[[], tuple[list[Any], int, dict[str, Any]]], attempts: int = 10) -> Answer:
    """``run_once``, again while a concurrent save of the tenant's index wins (only a plain
    ``conflict``: a reused Idempotency-Key is the client's to see)."""
    for attempt in range(attempts):
        try:
            return run_once(calling, principal, endpoint=ENDPOINT, key=key, fingerprint=fingerprint, produce=produce)
        except ConflictError as exc:
            if exc.code != "conflict" or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _buy(numbering: ManagedNumbering, area_code: str) -> tuple[str, str]:
    provisioner = numbering.provisioner
    try:
        found = provisioner.search(area_code)
    except CarrierUnreachableError as exc:
        raise UpstreamUnavailableError(f"the carrier could not be reached to search for numbers ({exc}); "
                                       "nothing was bought") from None
    except CarrierRefusedError as exc:
        raise carrier_refusal(exc, "search") from None
    for e164 in found[:MAX_CANDIDATES]:
        try:
            sid = provisioner.purchase(e164, numbering.voice_url, numbering.sms_url)
        except CarrierUnreachableError as exc:
            # The purchase may have happened: the operator finds it on the managed account.
            log.warning("managed_number.purchase_unknown", e164=e164, error=str(exc))
            raise UpstreamUnavailableError(f"the carrier did not answer the purchase of a number ({exc}); "
                                           "try again") from None
        except CarrierRefusedError as exc:
            if exc.code != SOLD_MEANWHILE:
                raise carrier_refusal(exc, "purchase") from None
            continue
        log.info("managed_number.bought", e164=e164, provider_sid=sid, area_code=area_code)
        return e164, sid
    raise FieldError(["body", "area_code"], f"no number is available in area code {area_code}; try a nearby one",
                     code="no_number_available", value=area_code)


def carrier_refusal(exc: CarrierRefusedError, step: str) -> Exception:
    """The managed account refused: its credentials are the operator's to fix (503); anything else
    is the carrier's answer (502)."""
    if exc.code in ("carrier_auth_failed", "carrier_account_not_found", "carrier_account_inactive"):
        log.error("managed_account.refused", step=step, code=exc.code,
                  hint="check CALLWRIGHT_MANAGED_ACCOUNT_SID and CALLWRIGHT_MANAGED_AUTH_TOKEN")
        return FeatureUnavailableError("managed numbers are unavailable: the carrier refused this server's managed "
                                       "account; its operator must check it", code="managed_numbers_unavailable")
    return UpstreamUnavailableError(f"the carrier refused the {step} ({exc.message})", code="carrier_refused")


def _release_unsaved(numbering: ManagedNumbering, bought: list[tuple[str, str]], why: str) -> None:
    if not bought:
        return
    e164, sid = bought[0]
    try:
        numbering.provisioner.release(sid)
    except Exception as exc:  # noqa: BLE001 - best effort: the first failure is what the client hears
        log.error("managed_number.release_failed", e164=e164, provider_sid=sid, why=why, error=type(exc).__name__,
                  hint="release it on the managed carrier account")
        return
    log.warning("managed_number.released_unsaved", e164=e164, provider_sid=sid, why=why)
