"""One live call's conversation, whatever carries it (conversation relay text or an audio stream).

The socket handler calls these blocking methods off the event loop: ``open`` with the token the
socket presented, ``verdict`` until answering-machine detection lets the agent speak, ``begin``
for the agent's first turn, ``heard`` for every finished utterance of the other party,
``pressed`` for keypad digits, and ``close`` when the socket ends. The agent's turn returns as
soon as the brain has answered: its events go to the conversation's ``TurnLog``, which appends
them in order off the turn's path (``watch`` shows them a moment later); ``close`` goes through
the same log, after every turn, and the settler extracts the outcome after it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from application.calling import inbound, live, transfers
from application.calling.app import Calling
from application.calling.ports import AgentSession, AgentTurn
from application.calling.runner import brief_for, clean, mask_keys
from application.calling.turn_log import Change, TurnLog
from application.commit_path import beside_the_loop
from application.numbers.lookups import tenant_number
from domain.calls import stream_token
from domain.calls.call import Call
from domain.calls.call_rules import AGENT, CALLEE, CallStateError
from domain.flows import keypad
from domain.numbers.number import Number

GO = "go"
WAIT = "wait"
STOP = "stop"
# Answering-machine detection that has not answered after this long counts as ``unknown``: the
# agent speaks (the spec treats an undetermined answer as human).
VERDICT_TIMEOUT_SECONDS = 30.0
MAX_KEYPAD_DIGITS = 32  # an entry that reaches it ends there
CLOSE_FLUSH_SECONDS = 120.0  # past the log's own patience: by then it has written or stopped
TURN_WRITE_LINGER_SECONDS = 0.05  # a turn's events are written this long after it was spoken


def keypad_entry(spec: Mapping[str, Any], keys: str) -> str | None:
    """The digits of a keypad step once ``keys`` end it (a terminator, not kept; the fixed length;
    the longest entry), else None while more may come."""
    for index, key in enumerate(keys):
        if key in (spec.get("terminators") or ("#",)):
            return keys[:index]
    length = spec.get("length") if keypad.ending_mode(spec.get("ending_mode")) == keypad.FIXED_LENGTH else None
    limit = int(length) if length else MAX_KEYPAD_DIGITS
    return keys[:limit] if len(keys) >= limit else None


class LiveConversation:
    def __init__(self, calling: Calling, call_id: str, transport: str) -> None:
        self.calling = calling
        self.call_id = call_id
        self.transport = transport
        self._session: AgentSession | None = None
        self._opened = 0.0
        self._number: Number | None = None
        self._keys = ""  # digits of a flow's keypad step so far
        self._keys_at = 0.0  # when the last of them was pressed (time.monotonic())
        self._nonce: str | None = None  # the session's token: its close leaves a later session alone
        self.ended = False
        self.log = TurnLog(self._write, name=call_id, linger=TURN_WRITE_LINGER_SECONDS)

    # -- the socket's life ----------------------------------------------------------------------

    def open(self, token: object) -> bool:
        """Accept the socket only for a valid, unexpired, unused token of this call."""
        ports = self.calling.live
        now = self.calling.ports.clock()
        try:
            grant = stream_token.verify(ports.token_key, token, self.call_id, now)
        except ValueError:
            grant = None
        if grant is None:
            return False
        try:
            Call.create_id(self.call_id)
        except ValueError:
            return False
        call = live.change(self.calling, self.call_id, lambda c: c.open_session(self.transport, grant.nonce, now))
        if call is None:
            return False
        self._opened = time.monotonic()
        self._nonce = grant.nonce
        return True

    def start_recording(self) -> None:
        """Record an inbound call whose number records (a carrier request: the socket runs it
        beside the conversation, not before the agent's first words)."""
        call = self._call()
        if call is not None and not (call.transfer is not None and call.transfer.resumed):  # the first session's recording goes on
            inbound.start_recording(self.calling, call)

    def verdict(self) -> str:
        """``go`` when the agent may speak, ``wait`` while answering-machine detection runs,
        ``stop`` when the call ended meanwhile (a machine answered, it was cancelled)."""
        call = self._call()
        if call is None or call.is_terminal:
            return STOP
        if call.awaiting_verdict and time.monotonic() - self._opened < VERDICT_TIMEOUT_SECONDS:
            return WAIT
        return GO

    def begin(self) -> AgentTurn:
        call = self._call()
        assert call is not None
        profile = self.calling.live.profile(call.voice_engine)
        number = self._number_of(call)
        brief = brief_for(call, model=profile.model,
                          can_transfer=bool(number is not None and number.transfer_destinations))
        self._session = self.calling.ports.brain.open(brief)
        return self.hand_over(self._respond(None))

    @property
    def instant(self) -> bool:
        """The brain answers without I/O: ``reply`` may run on the event loop."""
        return bool(getattr(self.calling.ports.brain, "instant", False))

    def heard(self, text: str) -> AgentTurn:
        return self.hand_over(self.reply(text))

    def reply(self, text: str) -> AgentTurn:
        """``heard`` without the hand-over of a transfer: no I/O but the brain's (``hand_over``
        follows when the turn transfers)."""
        return self._respond(clean(text))

    def hand_over(self, turn: AgentTurn) -> AgentTurn:
        """Start the transfer the turn asked for (blocking: the call is read and written)."""
        if turn.transfer:
            self._transfer(turn)
        return turn

    def pressed(self, digits: str) -> AgentTurn | None:
        """Keys the other party pressed. While a flow's keypad step waits for digits they are
        collected until its ending (a terminator, or the fixed length), then recorded for its field
        and answered: the agent's next turn. Otherwise each press is recorded, masked."""
        step = getattr(self._session, "keypad_step", None)
        if step is None:
            masked, now = f"[keypad: {mask_keys(digits)}]", self.calling.ports.clock()
            self.log.append(lambda c: c.record_turn(CALLEE, masked, now))
            return None
        entry = keypad_entry(step["keypad"], self._keys + digits)
        if entry is None:
            self._keys += digits
            self._keys_at = time.monotonic()
            return None
        return self.hand_over(self._keyed(step, entry))

    def keys_wait(self) -> float | None:
        """Seconds until a flow's ``timeout`` keypad entry under way ends (its silence after the
        last key), else None. No database work: the socket asks it between messages."""
        step = getattr(self._session, "keypad_step", None)
        if step is None or not self._keys or step["keypad"].get("ending_mode") != "timeout":
            return None
        return max(0.0, self._keys_at + float(step["keypad"].get("timeout_s") or 5) - time.monotonic())

    def keys_timed_out(self) -> AgentTurn | None:
        """The agent's turn once a ``timeout`` keypad entry's silence has run out (None if it has
        not, or it ended otherwise meanwhile)."""
        wait = self.keys_wait()
        if wait is None or wait > 0:
            return None
        step = getattr(self._session, "keypad_step", None)
        assert step is not None
        return self.hand_over(self._keyed(step, self._keys))

    def _keyed(self, step: Mapping[str, Any], entry: str) -> AgentTurn:
        """A complete keypad entry: recorded for its field (masked in the transcript), then answered."""
        self._keys = ""
        shown = mask_keys(entry) if step["keypad"].get("masked", True) else entry
        now = self.calling.ports.clock()

        def record(c: Call) -> None:
            c.record_keypad_entry(step["field"], entry, now)
            c.record_turn(CALLEE, f"[keypad: {shown}]", now)

        self.log.append(record)
        return self._respond(None, entry)

    def close(self, reason: str) -> None:
        """Close the session after every turn is saved (the settler then sees them all)."""
        usage = self._session.usage if self._session is not None else {}
        now = self.calling.ports.clock()

        def closed(c: Call) -> None:
            c.record_agent_usage(usage, now)  # priced when the call settles
            c.close_session(reason, now, self._nonce)  # not the next one, after a failed flow transfer

        self.log.append(closed)
        if not self.log.flush(CLOSE_FLUSH_SECONDS):  # the log stopped (its tail is lost): the call must still settle
            live.change(self.calling, self.call_id, closed)

    def _write(self, changes: list[Change]) -> None:
        """The log's writer: the changes in order, in one commit (re-read and re-applied on a
        conflict); a change the call refuses (it ended meanwhile) is left out."""

        def apply(c: Call) -> None:
            for change in changes:
                try:
                    change(c)
                except CallStateError:
                    pass

        with beside_the_loop():  # the loop reads the media streams: the append takes none of its time
            self.calling.update(Call, Call.create_id(self.call_id), apply)

    def engine_speech(self) -> str:
        """The speech engine of the call's engine profile (``stream`` transport)."""
        call = self._call()
        engine = call.voice_engine if call is not None else ""
        return self.calling.live.profile(engine).speech

    def still_running(self) -> bool:
        call = self._call()
        return call is not None and not call.is_terminal

    # -- inside ---------------------------------------------------------------------------------

    def _call(self) -> Call | None:
        return self.calling.find(Call, Call.create_id(self.call_id))

    def _number_of(self, call: Call) -> Number | None:
        """The call's own configured number (the caller number out, the dialled number in)."""
        own = call.from_number if call.direction == "outbound" else call.to
        self._number = tenant_number(self.calling, call.tenant_id, own)
        return self._number

    def _respond(self, heard: str | None, keys: str | None = None) -> AgentTurn:
        """The agent's turn after ``heard`` (recorded as the other party's turn), or after a keypad
        entry's ``keys`` (recorded already, masked)."""
        assert self._session is not None
        turn = self._session.respond(heard if keys is None else keys)
        now = self.calling.ports.clock()
        said = clean(turn.say or "")

        def record(c: Call) -> None:
            if heard:
                c.record_turn(CALLEE, heard, now)
            if turn.press_keys:
                c.record_turn(AGENT, f"[keypad: {mask_keys(turn.press_keys)}]", now)
            if said:
                c.record_turn(AGENT, said, now)

        if heard or turn.press_keys or said:
            self.log.append(record)
        if turn.end_call or turn.transfer:
            self.ended = True
        return turn

    def _transfer(self, turn: AgentTurn) -> None:
        number = self._number
        if number is None or not number.transfer_destinations:
            return
        self.log.flush(CLOSE_FLUSH_SECONDS)  # the turns that led here come before the transfer
        destinations = [{"label": d["label"], "e164": d["e164"]} for d in number.transfer_destinations]
        named = [d for d in destinations if d["label"] == turn.transfer_to]  # a flow's step names one
        transfers.start_transfer(self.calling, self.call_id, named or destinations,
                                 1 if named else number.transfer_max_attempts, turn.transfer_brief,
                                 step=turn.transfer_step, answers=turn.flow_answers)
