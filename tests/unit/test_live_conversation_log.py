"""A live conversation's turns go through its ``TurnLog`` (decision 43), on the in-memory event
store: the agent's turn returns before its events are saved; the saved turns keep the spoken
order; a failing store is waited out; the session's close is saved after every turn, so the
settler's extraction sees them all."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from adapters.scripted.brain import ScriptedBrain, ScriptedExtractor
from adapters.simulated.callee import SimulatedCallee
from application.calling import runner, turn_log
from application.calling.app import Calling, CallingPorts
from application.calling.conversation import LiveConversation
from tests.support.live_ports import unused_live_ports
from domain.calls.call import Call
from domain.calls.pricing import DEFAULT_PRICES
from tests.support.calls import answered_call, later

SCHEMA = {"first_name": {"type": "string"}, "city": {"type": "string"}, "pet": {"type": "string"}}
ANSWERS = ["Ada", "London", "A cat"]


@pytest.fixture(autouse=True)
def quick_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_log, "PAUSES", (0.001, 0.004))


@pytest.fixture
def calling() -> Iterator[Calling]:
    ports = CallingPorts(clock=lambda: later(30), brain=ScriptedBrain(), extractor=ScriptedExtractor(),
                         callee=SimulatedCallee, prices=DEFAULT_PRICES)
    app = Calling({"PERSISTENCE_MODULE": "eventsourcing.popo"}, ports=ports, live=unused_live_ports())
    yield app
    app.close()


def opened(calling: Calling) -> LiveConversation:
    call = answered_call(outcome_schema=SCHEMA)
    call.open_session("stream", "nonce", later(11))
    calling.commit(call)
    return LiveConversation(calling, call.call_id, "stream")


def turns(calling: Calling, conversation: LiveConversation) -> list[tuple[str, str]]:
    call = calling.find(Call, Call.create_id(conversation.call_id))
    assert call is not None
    return [(t["speaker"], t["text"]) for t in call.turns]


def converse(conversation: LiveConversation) -> list[tuple[str, str]]:
    """The whole conversation as spoken (the agent's words as the brain said them)."""
    spoken = [("agent", conversation.begin().say or "")]
    for answer in ANSWERS:
        spoken += [("callee", answer), ("agent", conversation.heard(answer).say or "")]
    return spoken


def test_the_turns_are_saved_in_the_spoken_order_and_the_settler_sees_them_all(calling: Calling) -> None:
    conversation = opened(calling)
    spoken = converse(conversation)
    assert conversation.ended  # the scripted agent said goodbye after the last field
    conversation.close("agent_ended")
    assert turns(calling, conversation) == spoken
    call = calling.find(Call, Call.create_id(conversation.call_id))
    assert call is not None and call.session_state == "closed" and call.ready_to_settle
    assert runner.settle_live(calling, conversation.call_id)
    settled = calling.find(Call, Call.create_id(conversation.call_id))
    assert settled is not None and settled.status == "completed"
    assert settled.outcome == {"first_name": "Ada", "city": "London", "pet": "A cat"}


def test_a_turn_is_spoken_before_its_events_are_saved(calling: Calling, monkeypatch: pytest.MonkeyPatch) -> None:
    conversation = opened(calling)
    release = threading.Event()
    update = calling.update

    def slow_update(*args: Any, **kwargs: Any) -> Any:
        release.wait(10)  # the event store is slow
        return update(*args, **kwargs)

    monkeypatch.setattr(calling, "update", slow_update)
    greeting = conversation.begin()
    reply = conversation.heard("Ada")
    assert greeting.say and reply.say and turns(calling, conversation) == []  # spoken, nothing saved yet
    release.set()
    assert conversation.log.flush(10)
    assert [speaker for speaker, _ in turns(calling, conversation)] == ["agent", "callee", "agent"]


def test_a_failing_store_is_waited_out_and_the_order_kept(calling: Calling, monkeypatch: pytest.MonkeyPatch) -> None:
    conversation = opened(calling)
    update, failures = calling.update, [4]

    def flaky_update(*args: Any, **kwargs: Any) -> Any:
        if failures[0]:
            failures[0] -= 1
            raise ConnectionError("the database is away")
        return update(*args, **kwargs)

    monkeypatch.setattr(calling, "update", flaky_update)
    spoken = converse(conversation)
    conversation.close("agent_ended")
    assert turns(calling, conversation) == spoken and conversation.log.retries >= 4


def test_a_log_that_gave_up_still_closes_the_session(calling: Calling, monkeypatch: pytest.MonkeyPatch) -> None:
    conversation = opened(calling)
    conversation.log.patience = 0.02
    conversation.begin()
    assert conversation.log.flush(10)
    update = calling.update
    monkeypatch.setattr(calling, "update", lambda *a, **k: (_ for _ in ()).throw(ConnectionError("away")))
    conversation.heard("Ada")
    assert not conversation.log.flush(10) and conversation.log.error is not None
    monkeypatch.setattr(calling, "update", update)  # the database is back for the close
    conversation.close("carrier_closed")
    call = calling.find(Call, Call.create_id(conversation.call_id))
    assert call is not None and call.session_state == "closed"
    assert [speaker for speaker, _ in turns(calling, conversation)] == ["agent"]  # a prefix of what was said

