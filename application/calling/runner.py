"""Running a queued call: claim it, hold the conversation, extract the outcome, settle costs.

Simulated calls talk to a simulated callee; no carrier is touched. A conflicting write (a
cancel, the watchdog, a take-over) ends the run quietly: the call is already someone else's.

The claim is a lease (``domain/calls/call.py``), renewed as the conversation goes on;
a call whose runner stopped is taken over by another (``take_over``) and runs again from its
start. The conversation's own writes wait out a short database outage (``OUTAGE_PATIENCE``)
rather than fail the call.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from decimal import Decimal
from typing import Any

from application.calling.app import Calling
from application.calling.lifecycle import claim_queued
from application.calling.live import live_duration
from application.calling.ports import CallBrief, KeypadPress
from application.errors import ConflictError
from domain.calls.call import Call
from domain.calls.transfer import COMPLETED as TRANSFER_COMPLETED
from domain.calls.call_rules import AGENT, CALLEE, NO_COST, SIMULATED, CallStateError
from domain.calls.run_values import Simulation
from domain.errors import OutcomeInvalidError
from domain.numbers import inbound_plan
from domain.numbers.inbound_plan import ROUTED_AWAY

WORDS_PER_SECOND = 2.5
# Turns are saved at most this often while the call runs (a live transcript for ``watch``);
# the rest are saved with the outcome. Fewer saves: the event table is locked per save.
PROGRESS_SAVE_SECONDS = 1.0
# How long a conversation's write keeps trying while the database cannot be reached; past that
# the run stops, and the call, its lease run out, is taken over once the database is back.
OUTAGE_PATIENCE = 30.0
_SPACE = re.compile(r"\s+")


def speaking_seconds(text: str) -> float:
    return len(text.split()) / WORDS_PER_SECOND + 0.5


def clean(text: str) -> str:
    """One line per turn: the transcript is ``speaker: text`` lines."""
    return _SPACE.sub(" ", text).strip()


def mask_keys(keys: str) -> str:
    return "*" * len(keys)


def brief_for(call: Call, *, model: str | None = None, can_transfer: bool = False) -> CallBrief:
    """What the agent knows before the call (a live call adds its profile's model and whether its
    number can take a transfer)."""
    return CallBrief(objective=call.objective, schema=call.outcome_schema, variables=dict(call.variables),
                     language=call.language, model=model, can_transfer=can_transfer,
                     at=call.simulation.instant if call.simulation is not None and call.mode == SIMULATED else None,
                     inbound=call.direction == "inbound", persona=call.persona,
                     flow=call.flow.as_dict() if call.flow is not None else None, flow_resume=call.transfer_fallback)


def claim(calling: Calling, call_id: str) -> Call | None:
    """Move a queued call to ``in_progress``; None if it is not queued or another runner won."""
    return claim_queued(calling, call_id, lambda call: call.start(calling.ports.clock()))


def take_over(calling: Calling, call_id: str) -> Call | None:
    """Restart a simulated call whose runner's lease ran out; None if it is not abandoned (any
    more) or another runner's take-over won."""
    call = calling.find(Call, Call.create_id(call_id))
    if call is None or not call.abandoned(calling.ports.clock()):
        return None
    call.take_over(calling.ports.clock())
    try:
        calling.commit(call)
    except ConflictError:
        return None
    return call


def _save(calling: Calling, call: Call) -> None:
    calling.commit(call, outage_patience=OUTAGE_PATIENCE)


def run(calling: Calling, call: Call) -> None:
    try:
        _converse(calling, call)
    except (ConflictError, CallStateError):
        return  # cancelled or timed out meanwhile


def _converse(calling: Calling, call: Call) -> None:
    ports = calling.ports
    simulation = call.simulation or Simulation()
    if not call.machine_verdict(simulation.answered_by or "human", ports.clock()):
        _save(calling, call)  # abandoned by the answering-machine rule, or nobody answered
        return
    brief = brief_for(call)
    callee = ports.callee(dict(simulation.facts) if simulation.facts is not None else None, simulation.persona,
                          flow_questions(brief))
    session = ports.brain.open(brief)
    heard: str | None = None
    seconds = 0.0
    last_save = time.monotonic()
    for _ in range(ports.max_turns):
        turn = session.respond(heard)
        if turn.press_keys:
            call.record_turn(AGENT, f"[keypad: {mask_keys(turn.press_keys)}]", ports.clock())
        said = clean(turn.say or "")
        if said:
            call.record_turn(AGENT, said, ports.clock())
            seconds += speaking_seconds(said)
        if turn.end_call or seconds >= call.max_duration_seconds:
            break  # a call is cut at its maximum, as the carrier's time limit cuts a live one
        reply = callee.reply(said)
        if reply is None:
            break
        if isinstance(reply, KeypadPress):  # a flow's keypad step: the digits go to the outcome, masked here
            call.record_keypad_entry(reply.field, reply.digits, ports.clock())
            heard = reply.digits
            call.record_turn(CALLEE, f"[keypad: {mask_keys(heard) if reply.masked else heard}]", ports.clock())
        else:
            heard = clean(reply)
            call.record_turn(CALLEE, heard, ports.clock())
        seconds += speaking_seconds(heard)
        if seconds >= call.max_duration_seconds:
            break
        if call.renew_lease(ports.clock()) or time.monotonic() - last_save >= PROGRESS_SAVE_SECONDS:
            _save(calling, call)
            last_save = time.monotonic()
    if call.renew_lease(ports.clock()):
        _save(calling, call)  # the extraction may take a while
    call.end(round(seconds), ports.clock())
    call.record_agent_usage(session.usage, ports.clock())
    _settle(calling, call, brief)


def settle_live(calling: Calling, call_id: str) -> bool:
    """Extract the outcome of a live call whose conversation is over (voice session closed, no
    transfer under way); True when this settled it."""
    for _attempt in range(5):
        call = calling.find(Call, Call.create_id(call_id))
        if call is None or not call.ready_to_settle:
            return False
        call.end(live_duration(call, calling.ports.clock()), calling.ports.clock())
        brief = brief_for(call)
        try:
            if call.route_action in ROUTED_AWAY:
                _settle_routed(calling, call)
            else:
                _settle(calling, call, brief)
        except ConflictError:
            continue  # a recording or a late callback landed meanwhile: look again
        return True
    return False


def flow_questions(brief: CallBrief) -> dict[str, dict[str, Any]]:
    """A flow's question steps by what the agent says there: {text: {field, keypad}} (empty for a
    call without a flow): how a simulated callee knows which fact is asked."""
    graph = (brief.flow or {}).get("graph") or {}
    return {node["text"]: {"field": node["field"], "keypad": node.get("keypad")}
            for node in graph.get("nodes", ()) if node["type"] == "question"}


def _keyed(call: Call) -> dict[str, Any]:
    """The digits a flow's keypad steps collected, read as their fields' values (the transcript
    has them masked: the extraction cannot)."""
    keyed: dict[str, Any] = {}
    for name, digits in call.keypad_entries.items():
        try:
            keyed[name] = call.outcome_schema.coerce(name, digits)
        except KeyError:
            continue
    return keyed


def _voice_cost(calling: Calling, call: Call) -> Decimal:
    """The conversation: voice minutes at the engine's price and the agent's tokens."""
    prices = calling.ports.prices
    minutes = prices.voice(call.voice_engine, call.duration_seconds or 0, simulated=call.mode == "simulated")
    return minutes + prices.tokens(call.agent_usage)


def _settle_routed(calling: Calling, call: Call) -> None:
    """A call its number routed away from the agent (a transfer, the overflow message, a hang-up)
    completes with the routing outcome; nothing is extracted."""
    assert call.routing is not None
    transferred = call.transfer is not None and call.transfer.status == TRANSFER_COMPLETED
    outcome = call.outcome_schema.validate(inbound_plan.routed_outcome(call.routing.as_dict(), transferred))
    call.record_outcome(outcome, 1.0, {}, calling.ports.clock())
    call.complete(_voice_cost(calling, call), NO_COST, calling.ports.clock())
    _save(calling, call)


def _settle(calling: Calling, call: Call, brief: CallBrief) -> None:
    ports = calling.ports
    voice = _voice_cost(calling, call)
    usage: dict[str, int] = {}
    problems: list[str] | None = None
    partial: dict[str, Any] = {}
    for _attempt in range(2):  # one retry, then the call fails (ARCHITECTURE.md §7)
        extraction = ports.extractor.extract(brief, call.transcript, problems=problems)
        extraction = replace(extraction, outcome={**extraction.outcome, **_keyed(call)})
        partial = brief.schema.partial(extraction.outcome) or partial
        for name, count in extraction.usage.items():
            usage[name] = usage.get(name, 0) + int(count)
        try:
            outcome = brief.schema.validate(extraction.outcome)
        except OutcomeInvalidError as exc:
            problems = [f"{'.'.join(map(str, loc))}: {message}" for loc, message, _ in exc.problems]
            continue
        confidence = min(1.0, max(0.0, float(extraction.confidence)))
        call.record_outcome(outcome, confidence, usage, ports.clock())
        call.complete(voice, ports.prices.extraction(usage), ports.clock())
        _save(calling, call)
        return
    detail = "; ".join(problems or [])
    if partial:
        call.record_partial_outcome(partial, ports.clock())
    call.fail("extraction_failed", f"the outcome did not match the outcome_schema: {detail}", ports.clock(),
              cost_voice=voice, cost_extraction=ports.prices.extraction(usage))
    _save(calling, call)

