"""Call aggregate: a call's life from ``Queued`` to ``Completed`` or ``Failed`` (ARCHITECTURE.md §7).

Statuses shown: ``queued`` → ``in_progress`` → ``completed`` | ``failed``; a terminal call never
moves again. One class: its commands check and decide, in sections (queueing, a simulated run's
lease, the live call, the inbound call, settling, post-call SMS), and its ``@event`` methods, at
the end, only assign what the event says. The vocabulary and fixed rules are in ``call_rules.py``.
Events keep the names stored since the first release (``domain.calls.call:Call.<Name>``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.calls import dialing_rules
from domain.calls.call_rules import (
    CARRIER_FAILURES, COMPLETED, FAILED, IN_PROGRESS, LEASE, MACHINE_ANSWERS, MAX_VOICEMAIL_TEXT,
    NO_COST, OUTBOUND, QUEUED, RENEW_AFTER, SIMULATED, TERMINAL, VOICEMAIL, CallStateError,
    abandon_code, new_call_id, simulated_at,
)
from domain.calls.inbound_values import Routing, Voicemail
from domain.calls.outcome_schema import OutcomeSchema
from domain.calls.run_values import FlowRun, Simulation
from domain.calls.sms import SmsMessage
from domain.calls.suppression import SuppressionIndex
from domain.calls.transfer import FAILED as TRANSFER_FAILED
from domain.calls.transfer import Transfer
from domain.calls.usage import TokenCounts
from domain.errors import NumberSuppressedError, OutsideCallHoursError
from domain.flows import walk


class Call(TenantAggregate):
    @staticmethod
    def create_id(call_id: str) -> uuid.UUID:
        return ids.from_public(ids.CALL, call_id)

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

    @event("Queued")
    def __init__(
        self,
        tenant_id: str,
        call_id: str,
        direction: str,
        mode: str,
        to: str,
        from_number: str,
        objective: str,
        outcome_schema: OutcomeSchema | dict[str, Any],
        consent_type: str,
        consent_record_id: str | None,
        voice_id: str | None,
        voice_engine: str,
        language: str,
        metadata: dict[str, Any],
        variables: dict[str, str],
        simulation: dict[str, Any] | None,
        created_by: str,
        max_duration_seconds: int,
        at: datetime,
        template_id: str | None = None,  # stored since templates exist; older events read None
        flow: dict[str, Any] | None = None,  # {flow_id, version, graph, system_prompt, tools}: what it runs
    ) -> None:
        self.tenant_id = tenant_id
        self.call_id = call_id
        self.direction = direction
        self.mode = mode
        self.to = to
        self.from_number = from_number
        self.objective = objective
        # Events stored before the value had its transcoding hold the canonical definition.
        self.outcome_schema = OutcomeSchema.of(outcome_schema)
        self.consent_type = consent_type
        self.consent_record_id = consent_record_id
        self.voice_id = voice_id
        self.voice_engine = voice_engine
        self.language = language
        self.metadata = metadata
        self.variables = variables
        self.simulation = Simulation.of(simulation)
        self.created_by = created_by
        self.template_id, self.flow = template_id, FlowRun.of(flow)
        self.keypad_entries: dict[str, str] = {}  # a flow's keypad fields: the digits, never in the transcript
        self.max_duration_seconds = max_duration_seconds
        self.created_at = at
        self.status = QUEUED
        self.started_at: datetime | None = None
        self.lease_until: datetime | None = None  # a simulated call's runner holds it until then
        self.ended_at: datetime | None = None
        self.answered_by: str | None = None
        self.turns: list[dict[str, str]] = []
        self.outcome: dict[str, Any] | None = None
        self.partial_outcome: dict[str, Any] | None = None  # what a failed extraction did collect
        self.confidence: float | None = None
        self.usage: dict[str, int] = {}
        self.duration_seconds: int | None = None
        self.cost_voice = NO_COST
        self.cost_extraction = NO_COST
        self.cost_total = NO_COST
        self.error_code: str | None = None
        self.error_message: str | None = None
        self.recording_url: str | None = None
        # Live calls (ARCHITECTURE.md §7-§8): what the carrier and the voice session reported.
        self.dial_requested_at: datetime | None = None
        self.amd_requested = False
        self.carrier_sid: str | None = None
        self.carrier_status: str | None = None
        self.carrier_duration_seconds: int | None = None
        self.session_transport: str | None = None
        self.session_nonce: str | None = None
        self.session_opened_at: datetime | None = None
        self.session_closed_at: datetime | None = None
        self.transfer: Transfer | None = None
        self.recording_sid: str | None = None
        self.sms: dict[str, SmsMessage] = {}  # post-call messages recorded by release 0.1.0 (sms.py)
        # Inbound (the inbound section): the number's routing, persona and voicemail; the agent's tokens.
        self.routing: Routing | None = None
        self.persona: str | None = None
        self.record_inbound = False
        self.voicemail: Voicemail | None = None
        self.agent_usage: dict[str, int] = {}

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def transcript(self) -> str:
        return "\n".join(f"{turn['speaker']}: {turn['text']}" for turn in self.turns)

    def _require(self, *statuses: str) -> None:
        if self.status not in statuses:
            raise CallStateError(f"the call is {self.status}")

    # --- a simulated run: the runner's lease ------------------------------------------------------

    @property
    def lease_expires_at(self) -> datetime | None:
        """Until when the runner of a simulated call holds it. Calls started before leases
        existed count from their start."""
        lease = getattr(self, "lease_until", None)
        if lease is None and self.started_at is not None:
            return self.started_at + LEASE
        return lease

    def start(self, now: datetime) -> None:
        """Claim a queued simulated call for running; a second claim conflicts (optimistic
        concurrency). The claim is a lease of ``LEASE``."""
        self._require(QUEUED)
        self._started(at=now)
        self._leased(until=now + LEASE, at=now)

    def renew_lease(self, now: datetime) -> bool:
        """Extend the runner's lease when ``RENEW_AFTER`` has passed since it was last granted;
        whether it was extended (to be saved with the conversation's next write)."""
        self._require(IN_PROGRESS)
        expires = self.lease_expires_at
        if expires is not None and expires - now > LEASE - RENEW_AFTER:
            return False
        self._leased(until=now + LEASE, at=now)
        return True

    def abandoned(self, now: datetime) -> bool:
        """A simulated outbound call in progress whose runner's lease has run out."""
        expires = self.lease_expires_at
        return (self.status == IN_PROGRESS and self.mode == SIMULATED and self.direction == OUTBOUND
                and expires is not None and expires <= now)

    def take_over(self, now: datetime) -> None:
        """Restart an abandoned simulated call under a new lease: what the first runner recorded
        (answer, turns, end) is set aside, and the conversation runs again from its start."""
        if not self.abandoned(now):
            raise CallStateError("the call is not an abandoned simulated call")
        self._restarted(lease_until=now + LEASE, at=now)

    # --- a live call: dialing, the carrier, the voice session, transfers --------------------------

    @property
    def session_state(self) -> str:
        """``none`` (never opened), ``open`` or ``closed``."""
        if self.session_opened_at is None:
            return "none"
        return "open" if self.session_closed_at is None else "closed"

    @property
    def transfer_pending(self) -> bool:
        return self.transfer is not None and self.transfer.pending

    @property
    def transfer_fallback(self) -> dict[str, Any] | None:
        """Where the call's flow goes on after its transfer failed (SPEC.md Flow: a transfer step's
        one outgoing edge, taken when no destination answered): ``{step, answers}``, the step and
        the answers the walk had (keypad fields read from their digits, which the transfer request
        never holds); None when the transfer did not fail, or came from no flow step with such an
        edge (the failed transfer then ends the call)."""
        transfer, graph = self.transfer, self.flow.graph if self.flow is not None else None
        if transfer is None or transfer.status != TRANSFER_FAILED or transfer.step is None or not graph:
            return None
        if not any(node.get("id") == transfer.step and node.get("type") == walk.TRANSFER
                   for node in graph.get("nodes", ())):
            return None
        step = walk.next_step(graph, transfer.step, {})
        if step is None:
            return None
        answers = dict(transfer.answers or {})
        for name, digits in self.keypad_entries.items():
            try:
                value = self.outcome_schema.coerce(name, digits)
            except KeyError:
                continue
            if value is not None:
                answers[name] = value
        return {"step": step, "answers": answers}

    @property
    def resuming(self) -> bool:
        """A flow's transfer failed and has a fallback step: the agent's next voice session is to
        open there, and has not yet (while the carrier still holds the line)."""
        return (not self.is_terminal and self.route_action == "agent" and self.carrier_duration_seconds is None
                and self.transfer_fallback is not None and not self.transfer.resumed)  # type: ignore[union-attr]

    @property
    def may_open_session(self) -> bool:
        """A voice session may open: none has yet, or the call goes on after a failed transfer."""
        return not self.is_terminal and (self.session_state == "none" or self.resuming)

    @property
    def ready_to_settle(self) -> bool:
        """A live call's outcome is known and no transfer is under way: the agent's voice session
        closed; a voicemail's text arrived; a call its number routed away from the agent
        (inbound_plan.ROUTED_AWAY) is transferred, or was given its closing instructions (message,
        hangup), which end it whether or not the carrier reports the end."""
        if self.is_terminal or self.transfer_pending or self.resuming:
            return False
        action = self.route_action
        if action == "agent":
            return self.session_state == "closed"
        if action == "voicemail":
            return self.voicemail is not None and self.voicemail.text is not None
        return action != "transfer" or self.transfer is not None

    @property
    def awaiting_verdict(self) -> bool:
        """Answering-machine detection was asked for and has not answered yet."""
        return self.amd_requested and self.answered_by is None

    def request_dial(self, amd: bool, now: datetime) -> None:
        """Claim a live call for dialing; saved before the carrier is asked (at most one dial)."""
        self._require(QUEUED)
        self._dial_requested(amd=amd, at=now)

    def dialed(self, carrier_sid: str, now: datetime) -> None:
        self._require(IN_PROGRESS)
        if self.carrier_sid is not None:
            if self.carrier_sid != carrier_sid:
                raise CallStateError("the call was already dialed under another carrier id")
            return
        self._dialed(carrier_sid=carrier_sid, at=now)

    def inbound_answered(self, carrier_sid: str, now: datetime) -> None:
        """An inbound call is taken by the agent: it runs at once (no dial, no machine detection)."""
        self._require(QUEUED)
        self._inbound_answered(carrier_sid=carrier_sid, at=now)

    def carrier_progressed(self, carrier_status: str, now: datetime) -> bool:
        """A non-final lifecycle status (``initiated``, ``ringing``, ``in_progress``); duplicates and
        late ones change nothing."""
        if self.is_terminal or carrier_status == self.carrier_status or self.carrier_duration_seconds is not None:
            return False
        self._carrier_progressed(carrier_status=carrier_status, at=now)
        return True

    def carrier_ended(self, carrier_status: str, duration_seconds: int, now: datetime) -> bool:
        """The carrier's final status; recorded once, never on a terminal call."""
        if self.is_terminal or self.carrier_duration_seconds is not None:
            return False
        self._carrier_ended(carrier_status=carrier_status, duration_seconds=max(0, int(duration_seconds)), at=now)
        return True

    def open_session(self, transport: str, nonce: str, now: datetime) -> None:
        """A voice socket presented this call's token: the first one wins, every later one is refused,
        but for one more after a flow's transfer that nobody answered (``resuming``), with a new token."""
        self._require(IN_PROGRESS)
        resumes = self.resuming
        if self.session_opened_at is not None and not resumes:
            raise CallStateError("a voice session was already opened for this call")
        if nonce == self.session_nonce:
            raise CallStateError("this voice token was already used")
        self._session_opened(transport=transport, nonce=nonce, at=now, resumes=resumes)

    def close_session(self, reason: str, now: datetime, nonce: str | None = None) -> None:
        """The voice session ended; ``nonce`` (its token's) leaves a later session, opened since, open."""
        if self.session_state != "open" or (nonce is not None and nonce != self.session_nonce):
            return
        self._session_closed(reason=reason, at=now)

    def request_transfer(self, destinations: list[dict[str, str]], max_attempts: int, brief: str,
                         now: datetime, *, step: str | None = None, answers: Mapping[str, Any] | None = None) -> None:
        """Hand the call over; ``step``: the flow's transfer step asking it (``answers``: the walk's
        answers so far, keypad digits left out: the event never holds them), where a failed
        transfer may go on. A call is transferred once, and again only after a failed flow transfer
        brought it back to the agent."""
        self._require(IN_PROGRESS)
        if self.transfer is not None and not (self.transfer.status == TRANSFER_FAILED and self.transfer.resumed):
            raise CallStateError("the call was already transferred")
        if not destinations:
            raise CallStateError("the number has no transfer destinations")
        kept = None if step is None else {name: value for name, value in (answers or {}).items()
                                          if name not in self.keypad_entries}
        self._transfer_requested(destinations=[dict(d) for d in destinations[:5]],
                                 max_attempts=max(1, min(int(max_attempts), 5)), brief=brief[:500], at=now,
                                 step=step, answers=kept)

    def next_transfer_destination(self) -> int | None:
        """Index of the destination to dial next, or None when the attempts are spent."""
        return None if self.transfer is None else self.transfer.next_destination()

    def transfer_destination(self, index: int) -> int | None:
        """``index`` when that destination may be dialled now (the transfer is pending and ``index``
        is inside its destinations and attempts), else None."""
        return None if self.transfer is None else self.transfer.destination(index)

    def transfer_leg_ended(self, index: int, dial_status: str, now: datetime) -> bool:
        """One dialled destination answered or not; duplicates of a leg change nothing."""
        if self.is_terminal or not self.transfer_pending or index != len(self.transfer.legs):  # type: ignore[union-attr]
            return False
        self._transfer_leg_ended(index=index, dial_status=dial_status, at=now)
        return True

    def attach_recording(self, url: str, recording_sid: str, now: datetime) -> bool:
        """The recording arrives after the call ends: it may attach to a terminal call (its status
        does not move); the first one is kept."""
        if self.recording_url is not None:
            return False
        self._recording_attached(url=url, recording_sid=recording_sid, at=now)
        return True

    def answer(self, answered_by: str, now: datetime) -> bool:
        """Record who answered; returns False when the spec's machine rule abandons the call."""
        self._require(IN_PROGRESS)
        self._answered(answered_by=answered_by, at=now)
        return answered_by not in MACHINE_ANSWERS

    def machine_verdict(self, answered_by: str, now: datetime) -> bool:
        """Who answered, once (a repeated or late verdict changes nothing). SPEC.md answering-machine
        rule: a machine or a fax abandons the call, no audio and no message; ``no_answer`` (silence)
        fails it. True when the agent may speak."""
        if self.is_terminal or self.answered_by is not None:
            return False
        if not self.answer(answered_by, now):
            self.fail(abandon_code(answered_by), f"answered by {answered_by}; the call was abandoned", now)
            return False
        if answered_by == "no_answer":
            # Live: the carrier's detection heard silence; simulated: the callee never picked up.
            self.fail("no_answer", "nobody answered (silence)" if self.mode == "live" else "nobody answered", now)
            return False
        return True

    def carrier_final(self, carrier_status: str, duration_seconds: int, now: datetime) -> bool:
        """The carrier's final status (``completed``, ``busy``, ``no_answer``, ``failed``, ``canceled``),
        recorded once: a failure status fails the call with its code, and a call that ended before
        its conversation started (no voice session, no transfer), or a voicemail call with no
        message, has hung up. False when it was already recorded or the call is terminal."""
        if not self.carrier_ended(carrier_status, duration_seconds, now):
            return False
        failure = CARRIER_FAILURES.get(carrier_status)
        action = self.route_action
        if failure is not None:
            self.fail(*failure, now)
        elif action == "voicemail" and not (self.voicemail and self.voicemail.recording_sid):
            self.fail("hung_up", "the caller hung up without leaving a message", now)
        elif action == "agent" and self.session_state == "none" and self.transfer is None:
            self.fail("hung_up", "the call ended before the conversation started", now)
        return True

    # --- an inbound call: routing, voicemail, the agent's tokens ----------------------------------

    @property
    def route_action(self) -> str:
        """``agent`` unless the number routed the call elsewhere (``domain/numbers/inbound_plan.py``)."""
        return self.routing.action if self.routing is not None else "agent"

    def route_inbound(self, *, action: str, reason: str, destination: str | None, persona: str | None, record: bool,
                      now: datetime, objective: str | None = None, outcome_schema: OutcomeSchema | None = None) -> bool:
        """Where the number sent the call, decided once; a voicemail or a routed call pursues its own
        ``objective`` and ``outcome_schema``. False when it was already routed."""
        self._require(IN_PROGRESS)
        if self.direction != "inbound":
            raise CallStateError("only an inbound call is routed by its number")
        if self.routing is not None:
            return False
        self._inbound_routed(action=action, reason=reason, destination=destination, persona=persona, record=record,
                             objective=objective, outcome_schema=outcome_schema, at=now)
        return True

    def voicemail_recorded(self, url: str, recording_sid: str, duration_seconds: int, now: datetime) -> bool:
        """The caller's message was recorded (its audio on the carrier); the first report is kept."""
        if self.is_terminal or self.route_action != VOICEMAIL or (self.voicemail and self.voicemail.recording_sid):
            return False
        self._voicemail_recorded(url=url, recording_sid=recording_sid, duration_seconds=max(0, int(duration_seconds)),
                                 at=now)
        return True

    def voicemail_transcribed(self, text: str, now: datetime) -> bool:
        """The message as text: the caller's turn the voicemail outcome is extracted from. Once."""
        if self.is_terminal or self.route_action != VOICEMAIL or (self.voicemail and self.voicemail.text is not None):
            return False
        self._voicemail_transcribed(text=" ".join(text.split())[:MAX_VOICEMAIL_TEXT], at=now)
        return True

    def record_agent_usage(self, usage: Mapping[str, int], now: datetime) -> None:
        """The agent's model tokens over the conversation, priced with the call's voice cost."""
        if self.is_terminal or not any(usage.values()):
            return
        self._agent_usage_recorded(usage={name: int(count) for name, count in usage.items()}, at=now)

    # --- settling: the outcome, the end, the costs ------------------------------------------------

    def record_outcome(self, outcome: dict[str, Any], confidence: float, usage: dict[str, int], now: datetime) -> None:
        self._require(IN_PROGRESS)
        if not 0.0 <= confidence <= 1.0:
            raise CallStateError("confidence must lie in [0, 1]")
        self._outcome_extracted(outcome=outcome, confidence=confidence, usage=usage, at=now)

    def record_keypad_entry(self, field: str, digits: str, now: datetime) -> None:
        """Digits a flow's keypad step collected for ``field`` (the transcript shows them masked)."""
        self._require(IN_PROGRESS)
        self._keypad_collected(field=field, digits=digits, at=now)

    def record_partial_outcome(self, partial: dict[str, Any], now: datetime) -> None:
        """The valid fields of an outcome that did not match the schema as a whole (kept, not shown
        as ``outcome``: the call fails with ``extraction_failed``)."""
        self._require(IN_PROGRESS)
        self._partial_outcome_recorded(partial_outcome=partial, at=now)

    def complete(self, cost_voice: Decimal, cost_extraction: Decimal, now: datetime) -> None:
        self._require(IN_PROGRESS)
        if self.outcome is None:
            raise CallStateError("a call completes only with an outcome")
        self._completed(cost_voice=cost_voice, cost_extraction=cost_extraction,
                        cost_total=cost_voice + cost_extraction, at=now)

    def fail(self, error_code: str, message: str, now: datetime,
             cost_voice: Decimal = NO_COST, cost_extraction: Decimal = NO_COST) -> None:
        if self.is_terminal:
            raise CallStateError(f"the call is already {self.status}")
        self._failed(error_code=error_code, message=message[:500], cost_voice=cost_voice,
                     cost_extraction=cost_extraction, cost_total=cost_voice + cost_extraction, at=now)

    # --- events: each only assigns what it says ---------------------------------------------------

    @event("Started")
    def _started(self, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at

    @event("Leased")
    def _leased(self, until: datetime, at: datetime) -> None:
        self.lease_until = until

    @event("Restarted")
    def _restarted(self, lease_until: datetime, at: datetime) -> None:
        self.started_at, self.lease_until, self.answered_by, self.turns = at, lease_until, None, []
        self.duration_seconds = self.ended_at = self.outcome = self.partial_outcome = self.confidence = None
        self.usage, self.agent_usage = {}, {}

    @event("DialRequested")
    def _dial_requested(self, amd: bool, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at
        self.dial_requested_at = at
        self.amd_requested = amd

    @event("Dialed")
    def _dialed(self, carrier_sid: str, at: datetime) -> None:
        self.carrier_sid = carrier_sid

    @event("InboundAnswered")
    def _inbound_answered(self, carrier_sid: str, at: datetime) -> None:
        self.status = IN_PROGRESS
        self.started_at = at
        self.carrier_sid = carrier_sid

    @event("CarrierProgressed")
    def _carrier_progressed(self, carrier_status: str, at: datetime) -> None:
        self.carrier_status = carrier_status

    @event("CarrierEnded")
    def _carrier_ended(self, carrier_status: str, duration_seconds: int, at: datetime) -> None:
        self.carrier_status = carrier_status
        self.carrier_duration_seconds = duration_seconds

    @event("VoiceSessionOpened")
    def _session_opened(self, transport: str, nonce: str, at: datetime, resumes: bool = False) -> None:
        self.session_transport = transport
        self.session_nonce = nonce
        self.session_closed_at = None
        # A session opens for the first time (no opening yet), or again when the agent is back after
        # a flow's transfer nobody answered (``resumes``): the first opening stays.
        self.session_opened_at = self.session_opened_at or at
        self.transfer = Transfer.after_session_opened(self.transfer, resumes)

    @event("VoiceSessionClosed")
    def _session_closed(self, reason: str, at: datetime) -> None:
        self.session_closed_at = at

    @event("TransferRequested")
    def _transfer_requested(self, destinations: list[dict[str, str]], max_attempts: int, brief: str,
                            at: datetime, step: str | None = None, answers: dict[str, Any] | None = None) -> None:
        self.transfer = Transfer.requested(destinations, max_attempts, brief, step, answers)

    @event("TransferLegEnded")
    def _transfer_leg_ended(self, index: int, dial_status: str, at: datetime) -> None:
        self.transfer = Transfer.after_leg(self.transfer, index, dial_status)  # type: ignore[arg-type]

    @event("RecordingAttached")
    def _recording_attached(self, url: str, recording_sid: str, at: datetime) -> None:
        self.recording_url = url
        self.recording_sid = recording_sid

    # Post-call SMS of release 0.1.0, recorded on the call; later messages are a CallSms (sms.py).
    @event("SmsClaimed")
    def _sms_claimed(self, template_id: str, to: str, body: str, at: datetime) -> None:
        self.sms = {**self.sms, template_id: SmsMessage(template_id=template_id, to=to, body=body)}

    @event("SmsSent")
    def _sms_sent(self, template_id: str, carrier_sid: str, at: datetime) -> None:
        self.sms = {**self.sms, template_id: SmsMessage.after_sent(self.sms[template_id], carrier_sid, at)}

    @event("SmsFailed")
    def _sms_failed(self, template_id: str, error: str, at: datetime) -> None:
        self.sms = {**self.sms, template_id: SmsMessage.after_failure(self.sms[template_id], error)}

    @event("InboundRouted")
    def _inbound_routed(self, action: str, reason: str, destination: str | None, persona: str | None, record: bool,
                        objective: str | None, outcome_schema: OutcomeSchema | dict[str, Any] | None,
                        at: datetime) -> None:
        self.routing = Routing(action=action, reason=reason, destination=destination)
        self.persona, self.record_inbound = persona, record
        # A voicemail or a routed call pursues the objective and schema the event names (both or
        # neither; an objective is never blank), else the call's own.
        self.objective = objective or self.objective
        self.outcome_schema = OutcomeSchema.of(outcome_schema or self.outcome_schema)

    @event("VoicemailRecorded")
    def _voicemail_recorded(self, url: str, recording_sid: str, duration_seconds: int, at: datetime) -> None:
        self.voicemail = Voicemail.recorded(self.voicemail, url, recording_sid, duration_seconds)

    @event("VoicemailTranscribed")
    def _voicemail_transcribed(self, text: str, at: datetime) -> None:
        self.voicemail = Voicemail.transcribed(self.voicemail, text)
        self.turns = Voicemail.heard(self.turns, text)

    @event("AgentUsageRecorded")
    def _agent_usage_recorded(self, usage: dict[str, int], at: datetime) -> None:
        self.agent_usage = TokenCounts.sum(self.agent_usage, usage)

    @event("Answered")
    def _answered(self, answered_by: str, at: datetime) -> None:
        self.answered_by = answered_by

    def record_turn(self, speaker: str, text: str, now: datetime) -> None:
        self._require(IN_PROGRESS)
        self._turn_recorded(speaker=speaker, text=text, at=now)

    @event("TurnRecorded")
    def _turn_recorded(self, speaker: str, text: str, at: datetime) -> None:
        self.turns = [*self.turns, {"speaker": speaker, "text": text}]

    def end(self, duration_seconds: int, now: datetime) -> None:
        self._require(IN_PROGRESS)  # a call never lasts past its maximum: the carrier or the runner cuts it there
        self._ended(duration_seconds=min(max(0, int(duration_seconds)), self.max_duration_seconds), at=now)

    @event("Ended")
    def _ended(self, duration_seconds: int, at: datetime) -> None:
        self.duration_seconds = duration_seconds
        self.ended_at = at

    @event("OutcomeExtracted")
    def _outcome_extracted(self, outcome: dict[str, Any], confidence: float, usage: dict[str, int], at: datetime) -> None:
        self.outcome = outcome
        self.confidence = confidence
        self.usage = usage

    @event("KeypadCollected")
    def _keypad_collected(self, field: str, digits: str, at: datetime) -> None:
        self.keypad_entries = {**self.keypad_entries, field: digits}

    @event("PartialOutcomeRecorded")
    def _partial_outcome_recorded(self, partial_outcome: dict[str, Any], at: datetime) -> None:
        self.partial_outcome = partial_outcome

    @event("Completed")
    def _completed(self, cost_voice: Decimal, cost_extraction: Decimal, cost_total: Decimal, at: datetime) -> None:
        self.status = COMPLETED
        self.cost_voice = Decimal(cost_voice)
        self.cost_extraction = Decimal(cost_extraction)
        self.cost_total = Decimal(cost_total)
        self.ended_at = self.ended_at or at

    @event("Failed")
    def _failed(self, error_code: str, message: str, cost_voice: Decimal, cost_extraction: Decimal,
                cost_total: Decimal, at: datetime) -> None:
        self.status = FAILED
        self.error_code = error_code
        self.error_message = message
        self.outcome = None
        self.cost_voice = Decimal(cost_voice)
        self.cost_extraction = Decimal(cost_extraction)
        self.cost_total = Decimal(cost_total)
        self.ended_at = self.ended_at or at
