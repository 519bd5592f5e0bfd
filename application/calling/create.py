"""Call creation: validate in the order of ARCHITECTURE.md §7, then queue the call.

Order: outcome schema, E.164, consent, suppression, call hours (``Call.queue``'s rules), caller
number (ownership and the key's ``number_ids``), carrier. Simulated calls pass exactly the same
checks as live ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from application.calling.app import Calling
from application.calling.suppressions import NOT_REMEMBERED, index_of
from application.errors import PermissionDeniedError, ValidationFailedError
from application.numbers.lookups import tenant_number
from application.principal import Principal
from application.providers.credentials import credential_of
from domain.calls import dialing_rules
from domain.calls.call import Call
from domain.calls.outcome_schema import OutcomeSchema
from domain.calls.suppression import SuppressionIndex

LIVE = "live"
DEFAULT_LANGUAGE = "en-US"


@dataclass(frozen=True, kw_only=True)
class CallRequest:
    """A call as asked for; ``None`` fields were left out (a ``template_id``'s template fills them,
    ``application/templates/templates.py``; ``complete`` refuses what is still missing)."""

    to: str
    objective: str | None
    outcome_schema: dict[str, Any] | None
    consent_type: str | None
    consent_record_id: str | None = None
    voice_id: str | None = None
    voice_engine: str | None = None
    language: str | None = None  # None: en-US
    template_id: str | None = None
    flow_id: str | None = None  # a published flow: its artifact gives objective and outcome_schema
    flow: dict[str, Any] | None = None  # what the call runs of it (``application/flows/flows.py`` fills it)
    from_number: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    mode: str = LIVE
    simulation: dict[str, Any] | None = None


def _caller(calling: Calling, principal: Principal, request: CallRequest, loc: list[str | int]) -> str:
    """The number the call comes from: ``from_number`` when it is one of the verified carrier
    account's numbers, else the chosen caller number for live calls or the simulated caller for
    test calls. A key restricted to ``number_ids`` dials only from one of those (403 otherwise),
    the chosen caller number included: a simulated call dials no line."""
    credential = (credential_of(calling, principal.tenant_id)
                  if request.mode == LIVE or request.from_number is not None else None)
    verified = credential is not None and credential.verified
    if request.from_number is not None:
        if not verified or not credential.holds(request.from_number):  # type: ignore[union-attr]
            raise ValidationFailedError([([*loc, "from_number"], "this number is not one of your carrier account's numbers",
                                          "from_number_not_owned", request.from_number)])
        _number_allowed(calling, principal, request.from_number)
    if request.mode != LIVE:
        return request.from_number or calling.ports.simulated_from_number
    if not verified:
        raise ValidationFailedError([(
            [*loc, "mode"],
            "live calls need verified carrier credentials (POST /v1/providers/carrier/verify); "
            "use mode=simulated for a test call",
            "carrier_not_configured",
            request.mode,
        )])
    caller = request.from_number or credential.caller_number  # type: ignore[union-attr]
    if caller is None:
        raise ValidationFailedError([([*loc, "from_number"], "choose a caller number (POST /v1/providers/select-number) "
                                      "or pass from_number", "caller_number_not_selected", None)])
    if request.from_number is None:
        _number_allowed(calling, principal, caller)  # the tenant's caller number: the key's too?
    return caller


def _number_allowed(calling: Calling, principal: Principal, e164: str) -> None:
    """A key restricted to ``number_ids`` may only call from those numbers (403 otherwise)."""
    if principal.number_ids is None:
        return
    number = tenant_number(calling, principal.tenant_id, e164)
    if number is None or not principal.may_use_number(str(number.number_id)):
        raise PermissionDeniedError(f"this API key may not call from {e164}", code="number_not_allowed")


def check_shared(calling: Calling, principal: Principal, request: CallRequest) -> tuple[OutcomeSchema, str]:
    """The rules a batch's items share: schema, consent, caller number and carrier; the schema
    and the caller number."""
    schema = OutcomeSchema.compile(request.outcome_schema)  # type: ignore[arg-type] - ``complete``d
    dialing_rules.check_consent(request.consent_type)
    return schema, _caller(calling, principal, request, ["body"])


def complete(request: CallRequest, loc: list[str | int]) -> CallRequest:
    """A request whose template (if any) has filled it: ``objective`` and ``outcome_schema`` are
    required by now (422 ``missing``, both at once), ``language`` defaults to en-US."""
    missing = [([*loc, name], "is required (or give a template_id whose template has it)", "missing", None)
               for name in ("objective", "outcome_schema") if getattr(request, name) is None]
    if missing:
        raise ValidationFailedError(missing)
    return request if request.language is not None else replace(request, language=DEFAULT_LANGUAGE)


def queue_call(calling: Calling, principal: Principal, request: CallRequest, now: datetime,
               suppressions: SuppressionIndex | None, from_number: str | Callable[[], str],
               schema: OutcomeSchema | None = None) -> Call:
    """``Call.queue`` with the request's fields; an explicit engine wins, otherwise the tenant's
    settings and the system A/B weights decide from the call id (domain/calls/engine_choice.py),
    read from memory in the steady state."""
    return Call.queue(
        tenant_id=principal.tenant_id,
        mode=request.mode,
        to=request.to,
        objective=request.objective,
        outcome_schema=request.outcome_schema if schema is None else schema,
        consent_type=request.consent_type,
        from_number=from_number,
        voice_engine=request.voice_engine or (lambda call_id: calling.ports.voice_routing(principal.tenant_id)
                                               .engine_for(call_id)),
        created_by=principal.actor,
        max_duration_seconds=calling.ports.max_call_seconds,
        now=now,
        suppressions=suppressions,
        consent_record_id=request.consent_record_id,
        voice_id=request.voice_id,
        language=request.language or DEFAULT_LANGUAGE,
        metadata=request.metadata,
        variables=request.variables,
        simulation=request.simulation,
        template_id=request.template_id,
        flow=request.flow,
    )


def prepare_call(calling: Calling, principal: Principal, request: CallRequest, now: datetime,
                 suppressions: SuppressionIndex | None | object = NOT_REMEMBERED) -> Call:
    """A queued ``Call`` (not yet saved), or the first rule broken, in the order of
    ARCHITECTURE.md §7: the domain's rules (``RequestRuleError``, located in the request), then
    the caller number and the carrier (``ValidationFailedError``). ``suppressions``: the tenant's
    index when the caller has it as committed now (no database work here then), else it is read."""
    if suppressions is NOT_REMEMBERED:
        suppressions = index_of(calling, principal.tenant_id)
    return queue_call(calling, principal, request, now, suppressions,  # type: ignore[arg-type]
                      from_number=lambda: _caller(calling, principal, request, ["body"]))
