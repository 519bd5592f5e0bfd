"""Queueing an outbound call (ARCHITECTURE.md §7): the rules a new call must pass before it exists.

A mixin of the aggregate, as ``live_commands.py``: the ``Queued`` event is ``Call.__init__``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.calls import dialing_rules
from domain.calls.call_rules import OUTBOUND, SIMULATED, new_call_id, simulated_at
from domain.calls.outcome_schema import OutcomeSchema
from domain.calls.suppression import SuppressionIndex
from domain.errors import NumberSuppressedError, OutsideCallHoursError

if TYPE_CHECKING:
    from domain.calls.call import Call


class QueueCommands:
    @classmethod
    def _create(cls, event_class: Any, *, id: Any = None, **kwargs: Any) -> Any:  # noqa: A002 - the library's name
        """The ``Queued`` event is stored at the instant it names (its ``at``, the record's
        ``created_at``), not at the moment the object was built: the record, its history and
        ``as_of`` then speak of one instant."""
        if kwargs.get("timestamp") is None:
            kwargs["timestamp"] = kwargs.get("at")
        return super()._create(event_class, id=id, **kwargs)  # type: ignore[misc]

    @classmethod
    def queue(
        cls, *, tenant_id: str, mode: str, to: str, objective: str, outcome_schema: OutcomeSchema | Mapping[str, Any],
        consent_type: str | None, from_number: str | Callable[[], str], voice_engine: str | Callable[[str], str],
        created_by: str, max_duration_seconds: int, now: datetime, suppressions: SuppressionIndex | None = None,
        call_id: str | None = None, consent_record_id: str | None = None, voice_id: str | None = None,
        language: str = "en-US", metadata: dict[str, Any] | None = None, variables: dict[str, str] | None = None,
        simulation: dict[str, Any] | None = None, template_id: str | None = None, flow: dict[str, Any] | None = None,
    ) -> Call:
        """A queued outbound call, or the first rule it breaks, in the order of ARCHITECTURE.md §7:
        outcome schema, E.164, consent, suppression, call hours (a ``RequestRuleError`` whose
        ``loc`` names the field). The caller number's and the carrier's rules need the carrier
        account: a callable ``from_number`` runs them after these, and a callable
        ``voice_engine`` picks the engine for the new call id. The time-dependent rules are judged
        at a simulated call's ``simulation.at`` when it names one, else at ``now``."""
        schema = OutcomeSchema.of(outcome_schema, limits=True)  # a request's: its size limits apply
        destination = dialing_rules.parse_destination(to)
        dialing_rules.check_consent(consent_type)
        judged = simulated_at(mode, simulation) or now
        if suppressions is not None and suppressions.is_suppressed(destination.e164, judged):
            raise NumberSuppressedError("this number is on the suppression list", loc=dialing_rules.TO, input=to)
        try:
            dialing_rules.check_call_hours(destination, consent_type or "", judged)
        except OutsideCallHoursError as exc:
            raise exc.for_simulation() if mode == SIMULATED else exc
        caller = from_number() if callable(from_number) else from_number
        call_id = call_id or new_call_id()
        return cls(
            tenant_id=tenant_id, call_id=call_id, direction=OUTBOUND, mode=mode, to=destination.e164,
            from_number=caller, objective=objective, outcome_schema=schema, consent_type=consent_type or "",
            consent_record_id=consent_record_id, voice_id=voice_id,
            voice_engine=voice_engine(call_id) if callable(voice_engine) else voice_engine, language=language,
            metadata=metadata or {}, variables=variables or {}, simulation=simulation, created_by=created_by,
            max_duration_seconds=max_duration_seconds, at=now, template_id=template_id, flow=flow,
        )
