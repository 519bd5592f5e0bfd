"""``POST /v1/wizard/provision`` (SPEC.md Wizard; docs/wizard.md): a managed number bought in an
area code and configured in the same operation, for a use case whose verdict is ``supported``.

Checks first, nothing bought: the key may add numbers (403), the configuration passes the number
checks (422 at ``config``), the gate's verdict on the description and the configuration's texts is
``supported`` (422 with its reason), the server has a managed account (503). Then, once per
``Idempotency-Key``: the provision is saved, its number bought at most once (``purchase.py``), and
the number registered with the configuration in one save with the key's answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from application import logs
from application.calling.app import Calling
from application.calling.idempotency import Answer, run_once
from application.errors import (
    ConflictError,
    FeatureUnavailableError,
    FieldError,
    PermissionDeniedError,
    ValidationFailedError,
)
from application.flows.flows import published_flow_exists
from application.numbers import registry
from application.numbers.managed import UNCONFIGURED
from application.numbers.provisioning import ManagedNumbering
from application.principal import Principal
from application.wizard import purchase
from domain.errors import NumberTakenError
from domain.numbers.number import MANAGED, Number
from domain.wizard import compliance, config_rules
from domain.wizard.provisioning import PURCHASE_LEASE, Provisioning

log = logs.get_logger(__name__)

ENDPOINT = "POST /v1/wizard/provision"  # the Idempotency-Key's scope
SAVE_TRIES = 10  # a concurrent change of the tenant's list of numbers makes the last save try again
Render = Callable[[Number], dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class ProvisionRequest:
    business_name: str
    business_description: str
    area_code: str
    config: Mapping[str, Any]


def provision(calling: Calling, numbering: ManagedNumbering | None, principal: Principal, request: ProvisionRequest,
              *, render: Render, key: str | None = None, fingerprint: str = "",
              lease: timedelta = PURCHASE_LEASE) -> Answer:
    """``{tenant_id, number}`` (200) once per ``key``: a retry answers the first response and buys
    nothing more, whatever happened to the request before it."""
    check(calling, principal, request)
    if numbering is None:
        raise FeatureUnavailableError(UNCONFIGURED, code="managed_numbers_unavailable")
    config = dict(request.config)
    avoid = {d.get("e164") for d in config.get("transfer_destinations") or () if isinstance(d, Mapping)}
    natural_key = Provisioning.key_of(key)

    def produce() -> tuple[list[Any], int, dict[str, Any]]:
        intent = purchase.open_provision(
            calling, principal, natural_key=natural_key, fingerprint=fingerprint,
            business_name=request.business_name, area_code=request.area_code, config=config)
        intent = purchase.buy(calling, numbering, intent, lease=lease, avoid={e for e in avoid if e})
        assert intent.e164 is not None
        now = calling.ports.clock()
        number = Number.register(tenant_id=principal.tenant_id, e164=intent.e164, fields=intent.config,
                                 by=principal.actor, at=now, source=MANAGED, provider_sid=intent.provider_sid,
                                 flow_exists=published_flow_exists(calling, principal.tenant_id))
        intent.complete(number.number_id, now)
        log.info("wizard.provisioned", provision=intent.public_id, number_id=number.number_id, e164=number.e164)
        body = {"tenant_id": principal.tenant_id, "number": render(number)}
        return [*registry.holding(calling, number, now), intent], 200, body

    for attempt in range(SAVE_TRIES):
        try:
            return run_once(calling, principal, endpoint=ENDPOINT, key=key, fingerprint=fingerprint,
                            produce=produce)
        except NumberTakenError as exc:
            raise ConflictError("the number bought is registered as another active number; it stays on the "
                                "managed account for the operator", code=exc.code) from exc
        except ConflictError as exc:
            if exc.code != "conflict" or attempt == SAVE_TRIES - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def check(calling: Calling, principal: Principal, request: ProvisionRequest) -> None:
    """Everything refused before anything is saved or bought."""
    if principal.number_ids is not None:
        raise PermissionDeniedError("this API key is restricted to some numbers and cannot create new ones",
                                    code="number_not_allowed")
    problems = config_rules.settings_problems(request.config, published_flow_exists(calling, principal.tenant_id))
    if problems:
        raise ValidationFailedError([(["body", "config", *loc], message, kind, value)
                                     for loc, message, kind, value in problems])
    assessment = compliance.assess("\n".join((request.business_description, request.business_name,
                                              config_rules.spoken_texts(request.config))))
    if assessment.verdict != compliance.SUPPORTED:
        raise FieldError(["body", "business_description"], assessment.reason, code=f"use_case_{assessment.verdict}",
                         value=request.business_description[:200],
                         ctx={"verdict": assessment.verdict, "category": assessment.category})
