"""Replay property of the ``Call`` aggregate: whatever commands it went through, the call rebuilt
from its stored events (through the Calling application's real mapper and transcoder) equals the
live one. Commands the state refuses are skipped, as the application would refuse them."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.calls.call import Call
from domain.calls.call_rules import AGENT, CALLEE, MACHINE_ANSWERS, CallStateError
from entrypoints.bootstrap import Container
from tests.support.calls import DESTINATIONS, NOW, queued_call

SIDS = ("CA" + "1" * 32, "CA" + "2" * 32)
COSTS = st.decimals(min_value=0, max_value=10, places=4, allow_nan=False, allow_infinity=False)

COMMANDS = st.one_of(
    st.tuples(st.just("start")),
    st.tuples(st.just("request_dial"), st.booleans()),
    st.tuples(st.just("dialed"), st.sampled_from(SIDS)),
    st.tuples(st.just("inbound_answered"), st.sampled_from(SIDS)),
    st.tuples(st.just("carrier_progressed"), st.sampled_from(["initiated", "ringing", "in_progress"])),
    st.tuples(st.just("carrier_ended"), st.sampled_from(["completed", "busy", "no_answer", "failed"]),
              st.integers(-5, 600)),
    st.tuples(st.just("answer"), st.sampled_from(["human", "unknown", *MACHINE_ANSWERS])),
    st.tuples(st.just("open_session"), st.sampled_from(["relay", "stream", "simulated"])),
    st.tuples(st.just("close_session")),
    st.tuples(st.just("request_transfer"), st.integers(0, 6), st.integers(-1, 7), st.text(max_size=600)),
    st.tuples(st.just("transfer_leg_ended"), st.integers(0, 4), st.sampled_from(["completed", "busy", "no_answer"])),
    st.tuples(st.just("attach_recording"), st.sampled_from(["RE1", "RE2"])),
    st.tuples(st.just("record_turn"), st.sampled_from([AGENT, CALLEE]), st.text(max_size=40)),
    st.tuples(st.just("end"), st.integers(-5, 600)),
    st.tuples(st.just("record_outcome"), st.booleans(), st.floats(-0.5, 1.5, allow_nan=False),
              st.integers(0, 10_000)),
    st.tuples(st.just("complete"), COSTS, COSTS),
    st.tuples(st.just("fail"), st.sampled_from(["timeout", "cancelled", "machine_detected", "no_answer"]),
              st.text(max_size=600), COSTS),
    st.tuples(st.just("tick"), st.integers(1, 10**9)),
    st.tuples(st.just("renew_lease")),
    st.tuples(st.just("take_over")),
)

# Paths through the life of a call: random commands are interleaved with one of them, so that the
# generated calls reach every state rather than mostly being refused or failed early.
SPINES = [
    [("start",), ("record_turn", AGENT, "Still on?"), ("end", 4), ("record_outcome", True, 0.9, 10),
     ("complete", Decimal("0.0100"), Decimal("0.0020"))],
    [("start",), ("record_turn", AGENT, "Still on?"), ("tick", 20_000_000), ("take_over",), ("renew_lease",),
     ("tick", 6_000_000), ("renew_lease",), ("end", 4), ("record_outcome", True, 0.9, 10)],
    [("request_dial", True), ("dialed", SIDS[0]), ("carrier_progressed", "ringing"), ("answer", "human"),
     ("open_session", "relay"), ("record_turn", CALLEE, "Yes."), ("request_transfer", 3, 2, "brief"),
     ("transfer_leg_ended", 0, "busy"), ("transfer_leg_ended", 1, "completed"), ("close_session",),
     ("carrier_ended", "completed", 30), ("end", 30), ("record_outcome", False, 0.4, 99),
     ("complete", Decimal("0.0300"), Decimal("0.0010")), ("attach_recording", "RE1")],
    [("inbound_answered", SIDS[1]), ("open_session", "stream"), ("record_turn", AGENT, "Hello"),
     ("close_session",), ("end", 9), ("fail", "extraction_failed", "no outcome", Decimal("0.0050"))],
]


@st.composite
def lives(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    spine = draw(st.sampled_from(SPINES))
    commands: list[tuple[Any, ...]] = []
    for step in spine[:draw(st.integers(0, len(spine)))]:
        commands += draw(st.lists(COMMANDS, max_size=2))
        commands.append(step)
    return commands + draw(st.lists(COMMANDS, max_size=4))


CALLS = st.fixed_dictionaries({
    "direction": st.sampled_from(["outbound", "inbound"]),
    "mode": st.sampled_from(["simulated", "live"]),
    "metadata": st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=5), st.none()),
                                max_size=3),
})


def apply(call: Call, commands: list[tuple[Any, ...]]) -> Call:
    now = NOW
    for name, *args in commands:
        try:
            if name == "tick":
                now += timedelta(microseconds=args[0])
            elif name == "start":
                call.start(now)
            elif name == "renew_lease":
                call.renew_lease(now)
            elif name == "take_over":
                call.take_over(now)
            elif name == "request_dial":
                call.request_dial(amd=args[0], now=now)
            elif name == "dialed":
                call.dialed(args[0], now)
            elif name == "inbound_answered":
                call.inbound_answered(args[0], now)
            elif name == "carrier_progressed":
                call.carrier_progressed(args[0], now)
            elif name == "carrier_ended":
                call.carrier_ended(args[0], args[1], now)
            elif name == "answer":
                call.answer(args[0], now)
            elif name == "open_session":
                call.open_session(args[0], f"nonce-{now.timestamp()}", now)
            elif name == "close_session":
                call.close_session("hangup", now)
            elif name == "request_transfer":
                destinations = (DESTINATIONS * 2)[:args[0]]
                call.request_transfer(destinations, args[1], args[2], now)
            elif name == "transfer_leg_ended":
                call.transfer_leg_ended(args[0], args[1], now)
            elif name == "attach_recording":
                call.attach_recording(f"https://example.com/{args[0]}.mp3", args[0], now)
            elif name == "record_turn":
                call.record_turn(args[0], args[1], now)
            elif name == "end":
                call.end(args[0], now)
            elif name == "record_outcome":
                call.record_outcome({"confirmed": args[0]}, args[1], {"input_tokens": args[2]}, now)
            elif name == "complete":
                call.complete(args[0], args[1], now)
            elif name == "fail":
                call.fail(args[0], args[1], now, cost_voice=args[2])
        except CallStateError:
            pass  # the state refuses this command: it emits nothing
    return call


def state(call: Call) -> dict[str, Any]:
    return {k: v for k, v in vars(call).items() if k != "_pending_events"}


@given(call=CALLS, commands=st.one_of(lives(), st.lists(COMMANDS, max_size=30)))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_call_rebuilt_from_its_stored_events_equals_the_live_one(memory_container: Container,
                                                                    call: dict[str, Any],
                                                                    commands: list[tuple[Any, ...]]):
    calling = memory_container.calling
    live = apply(queued_call(**call), commands)
    emitted = len(live._pending_events)
    calling.save(live)

    rebuilt = calling.repository.get(live.id)

    assert rebuilt is not live
    assert state(rebuilt) == state(live)
    assert rebuilt.version == emitted
    assert all(event.tenant_id == live.tenant_id for event in calling.events.get(live.id))


def test_costs_survive_the_round_trip_as_decimals(memory_container: Container):
    """§7: costs are ``Decimal``; the stored form must not turn them into floats."""
    calling = memory_container.calling
    live = apply(queued_call(), [("start",), ("end", 3), ("record_outcome", True, 0.5, 7),
                                 ("complete", Decimal("0.1000"), Decimal("0.0003"))])
    calling.save(live)
    rebuilt = calling.repository.get(live.id)
    assert (rebuilt.status, rebuilt.cost_total) == ("completed", Decimal("0.1003"))
    assert isinstance(rebuilt.cost_voice, Decimal)
