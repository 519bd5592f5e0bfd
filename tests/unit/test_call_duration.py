"""A call never lasts past its ``max_duration_seconds``: ``Call.end`` holds the rule for simulated
and live calls alike, and the simulated conversation is cut there, as a carrier cuts a live one."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from application.calling import runner
from application.calling.live import live_duration
from application.calling.ports import AgentTurn
from tests.support.calls import NOW, later, started_call, talking_call


@pytest.mark.parametrize(("reported", "recorded"), [(-5, 0), (0, 0), (59, 59), (60, 60), (40_015, 60)])
def test_an_ended_call_lasts_at_most_its_maximum(reported, recorded):
    call = started_call(max_duration_seconds=60)

    call.end(reported, later(2))

    assert call.duration_seconds == recorded


def test_a_live_call_whose_carrier_reports_more_than_the_maximum_is_held_to_it():
    call = talking_call(max_duration_seconds=600)
    call.carrier_duration_seconds = 7_200

    call.end(live_duration(call), later(9))

    assert call.duration_seconds == 600


class _Chatty:
    """A brain and callee that would talk forever."""

    def __init__(self) -> None:
        self.turns = 0
        self.usage: dict[str, int] = {}

    def open(self, brief):
        return self

    def respond(self, heard):
        self.turns += 1
        return AgentTurn(say="word " * 100)

    def reply(self, said):
        return "word " * 100


def test_a_simulated_conversation_stops_at_the_maximum(monkeypatch):
    chatty = _Chatty()
    settled: list[object] = []
    monkeypatch.setattr(runner, "_settle", lambda calling, call, brief: settled.append(call))
    ports = SimpleNamespace(clock=lambda: NOW, callee=lambda *_: chatty, brain=chatty, max_turns=10_000)
    call = started_call(max_duration_seconds=120)

    runner.run(SimpleNamespace(ports=ports, commit=lambda *calls: None), call)

    assert settled == [call]
    assert call.duration_seconds == 120
    assert chatty.turns <= 4  # 40 s a turn each way: cut near 120 s, not after 10,000 turns
