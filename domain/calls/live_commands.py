"""The live-call commands of ``Call`` (ARCHITECTURE.md §7-§8): dialing, the carrier's reports,
the voice session, transfers, recordings and the answering-machine rule.

A mixin of the aggregate: each command checks and decides here, and its ``@event`` method, which
only assigns state, stays in ``call.py`` with every other event of the call (eventsourcing names
an aggregate's events after the class that defines them, and stored events keep those names).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.calls.call_rules import CARRIER_FAILURES, IN_PROGRESS, MACHINE_ANSWERS, QUEUED, CallStateError, abandon_code
from domain.flows import walk

if TYPE_CHECKING:
    from domain.calls.call import Call

    _Base = Call
else:
    _Base = object


class LiveCallCommands(_Base):
    @property
    def session_state(self) -> str:
        """``none`` (never opened), ``open`` or ``closed``."""
        if self.session_opened_at is None:
            return "none"
        return "open" if self.session_closed_at is None else "closed"

    @property
    def transfer_pending(self) -> bool:
        return self.transfer is not None and self.transfer["status"] == "requested"

    @property
    def transfer_fallback(self) -> dict[str, Any] | None:
        """Where the call's flow goes on after its transfer failed (SPEC.md Flow: a transfer step's
        one outgoing edge, taken when no destination answered): ``{step, answers}``, the step and
        the answers the walk had (keypad fields read from their digits, which the transfer request
        never holds); None when the transfer did not fail, or came from no flow step with such an
        edge (the failed transfer then ends the call)."""
        transfer, graph = self.transfer, (self.flow or {}).get("graph")
        if transfer is None or transfer["status"] != "failed" or transfer.get("step") is None or not graph:
            return None
        if not any(node.get("id") == transfer["step"] and node.get("type") == walk.TRANSFER
                   for node in graph.get("nodes", ())):
            return None
        step = walk.next_step(graph, transfer["step"], {})
        if step is None:
            return None
        answers = dict(transfer.get("answers") or {})
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
                and self.transfer_fallback is not None and not self.transfer.get("resumed"))  # type: ignore[union-attr]

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
            return (self.voicemail or {}).get("text") is not None
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
        if self.transfer is not None and not (self.transfer["status"] == "failed" and self.transfer.get("resumed")):
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
        if not self.transfer_pending:
            return None
        tried = len(self.transfer["legs"])  # type: ignore[index]
        if tried >= min(self.transfer["max_attempts"], len(self.transfer["destinations"])):  # type: ignore[index]
            return None
        return tried

    def transfer_destination(self, index: int) -> int | None:
        """``index`` when that destination may be dialled now (the transfer is pending and ``index``
        is inside its destinations and attempts), else None."""
        if not self.transfer_pending:
            return None
        limit = min(self.transfer["max_attempts"], len(self.transfer["destinations"]))  # type: ignore[index]
        return index if 0 <= index < limit else None

    def transfer_leg_ended(self, index: int, dial_status: str, now: datetime) -> bool:
        """One dialled destination answered or not; duplicates of a leg change nothing."""
        if self.is_terminal or not self.transfer_pending or index != len(self.transfer["legs"]):  # type: ignore[index]
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
        elif action == "voicemail" and not (self.voicemail or {}).get("recording_sid"):
            self.fail("hung_up", "the caller hung up without leaving a message", now)
        elif action == "agent" and self.session_state == "none" and self.transfer is None:
            self.fail("hung_up", "the call ended before the conversation started", now)
        return True
