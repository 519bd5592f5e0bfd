"""Call creation: validate in the order of ARCHITECTURE.md §7, then queue the call.

Order: outcome schema, E.164, consent, suppression, call hours, caller number (ownership and
the key's ``number_ids``), carrier. Simulated calls pass exactly the same checks as live ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from application.calling.app import Calling
from application.calling.suppressions import NOT_REMEMBERED, index_of
from application.errors import PermissionDeniedError, ValidationFailedError
from application.numbers.lookups import tenant_number
from application.principal import Principal
from application.providers.credentials import credential_of
from domain.calls import dialing_rules
from domain.calls.call import Call, new_call_id
from domain.calls.outcome_schema import OutcomeSchema, compile_schema
from domain.calls.suppression import SuppressionIndex
from domain.errors import DialingRuleError, OutcomeSchemaError

LIVE = "live"
SIMULATED = "simulated"
OUTBOUND = "outbound"


@dataclass(frozen=True, kw_only=True)
class CallRequest:
    to: str
    objective: str
    outcome_schema: dict[str, Any]
    consent_type: str | None
    consent_record_id: str | None = None
    voice_id: str | None = None
    voice_engine: str | None = None
    language: str = "en-US"
    from_number: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    mode: str = LIVE
    simulation: dict[str, Any] | None = None


def _refuse(loc: list[str | int], error: DialingRuleError, value: Any) -> ValidationFailedError:
    return ValidationFailedError([(loc, error.message, error.code, value)])


def _compile(request: CallRequest, loc: list[str | int]) -> OutcomeSchema:
    try:
        return compile_schema(request.outcome_schema)
    except OutcomeSchemaError as exc:
        raise ValidationFailedError(
            [([*loc, "outcome_schema", *where], message, kind, None) for where, message, kind in exc.problems]
        ) from exc


def _parse(raw: str, loc: list[str | int]) -> dialing_rules.Destination:
    try:
        return dialing_rules.parse_destination(raw)
    except DialingRuleError as exc:
        raise _refuse([*loc, "to"], exc, raw) from exc


def _consent(request: CallRequest, loc: list[str | int]) -> None:
    try:
        dialing_rules.check_consent(request.consent_type)
    except DialingRuleError as exc:
        raise _refuse([*loc, "consent_type"], exc, request.consent_type) from exc


def _reachable(suppressions: SuppressionIndex | None, destination: dialing_rules.Destination, raw: str,
               consent_type: str, now: datetime, loc: list[str | int]) -> None:
    """Suppression, then call hours in the callee's local time."""
    if suppressions is not None and suppressions.is_suppressed(destination.e164, now):
        raise ValidationFailedError([([*loc, "to"], "this number is on the suppression list", "suppressed", raw)])
    try:
        dialing_rules.check_call_hours(destination, consent_type, now)
    except DialingRuleError as exc:
        raise _refuse([*loc, "to"], exc, raw) from exc


def _caller(calling: Calling, principal: Principal, request: CallRequest, loc: list[str | int]) -> str:
    """The number the call comes from: ``from_number`` when it is one of the verified carrier
    account's numbers (and, for a key restricted to ``number_ids``, one of those), else the chosen
    caller number for live calls or the simulated caller for test calls."""
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
    schema = _compile(request, ["body"])
    _consent(request, ["body"])
    return schema, _caller(calling, principal, request, ["body"])


def check_destination(suppressions: SuppressionIndex | None, raw: str, consent_type: str, now: datetime,
                      loc: list[str | int]) -> dialing_rules.Destination:
    """One batch item's rules: E.164, suppression and call hours."""
    destination = _parse(raw, loc)
    _reachable(suppressions, destination, raw, consent_type, now, loc)
    return destination


def build_call(calling: Calling, principal: Principal, request: CallRequest, schema: OutcomeSchema,
               destination: dialing_rules.Destination, now: datetime, from_number: str | None = None) -> Call:
    call_id = new_call_id()
    # An explicit engine wins; otherwise the tenant's settings and the system A/B weights decide,
    # from the call id (domain/calls/engine_choice.py), read from memory in the steady state.
    engine = request.voice_engine or calling.ports.voice_routing(principal.tenant_id).engine_for(call_id)
    return Call(
        tenant_id=principal.tenant_id,
        call_id=call_id,
        direction=OUTBOUND,
        mode=request.mode,
        to=destination.e164,
        from_number=from_number or calling.ports.simulated_from_number,
        objective=request.objective,
        outcome_schema=schema,
        consent_type=request.consent_type or "",
        consent_record_id=request.consent_record_id,
        voice_id=request.voice_id,
        voice_engine=engine,
        language=request.language,
        metadata=request.metadata,
        variables=request.variables,
        simulation=request.simulation,
        created_by=principal.actor,
        max_duration_seconds=calling.ports.max_call_seconds,
        at=now,
    )


def prepare_call(calling: Calling, principal: Principal, request: CallRequest, now: datetime,
                 suppressions: SuppressionIndex | None | object = NOT_REMEMBERED) -> Call:
    """A queued ``Call`` (not yet saved), or ``ValidationFailedError`` naming the first rule broken,
    in the order of ARCHITECTURE.md §7. ``suppressions``: the tenant's index when the caller has
    it as committed now (no database work here then), else it is read."""
    loc: list[str | int] = ["body"]
    schema = _compile(request, loc)
    destination = _parse(request.to, loc)
    _consent(request, loc)
    if suppressions is NOT_REMEMBERED:
        suppressions = index_of(calling, principal.tenant_id)
    _reachable(suppressions, destination, request.to, request.consent_type or "", now, loc)
    caller = _caller(calling, principal, request, loc)
    return build_call(calling, principal, request, schema, destination, now, from_number=caller)
