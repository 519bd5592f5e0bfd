"""The agent's model tokens are priced (issue 14 item 2): ``cost_voice`` is the conversation, its
minutes at the engine's price and the agent's tokens at the model's; ``cost_extraction`` stays
the extraction's tokens. Simulated and live calls alike; a routed call pays for no extraction."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

from application.calling import runner
from application.calling.ports import AgentTurn, Extraction
from domain.calls.pricing import DEFAULT_PRICES
from domain.numbers import inbound_plan
from domain.calls.outcome_schema import OutcomeSchema
from tests.support.calls import CARRIER_SID, NOW, OUTCOME, later, live_call, started_call

AGENT_TOKENS = {"input_tokens": 10_000, "output_tokens": 1_000}  # 0.03 + 0.015 at 3 / 15 per million
EXTRACTION_TOKENS = {"input_tokens": 2_000, "output_tokens": 200}  # 0.006 + 0.003


class _Agent:
    """A brain whose one turn ends the call, having spent ``AGENT_TOKENS``; an extractor spending
    ``EXTRACTION_TOKENS``; a callee with nothing to say."""

    usage = AGENT_TOKENS

    def open(self, brief):
        return self

    def respond(self, heard):
        return AgentTurn(say="Is it confirmed?", end_call=True)

    def extract(self, brief, transcript, *, problems=None):
        return Extraction(outcome=OUTCOME, confidence=1.0, usage=EXTRACTION_TOKENS)


def _calling(saved: list[object]):
    agent = _Agent()
    ports = SimpleNamespace(clock=lambda: NOW, callee=lambda *_: None, brain=agent, extractor=agent,
                            prices=DEFAULT_PRICES, max_turns=5)
    return SimpleNamespace(ports=ports, commit=lambda *calls, **_: saved.extend(calls))


def test_a_simulated_calls_agent_tokens_are_its_voice_cost():
    call = started_call()

    runner.run(_calling([]), call)

    assert (call.status, call.agent_usage) == ("completed", AGENT_TOKENS)
    assert (call.cost_voice, call.cost_extraction, call.cost_total) == (
        Decimal("0.0450"), Decimal("0.0090"), Decimal("0.0540"))


def test_a_live_calls_minutes_and_agent_tokens_add_up_in_its_voice_cost():
    call = live_call()
    call.request_dial(amd=False, now=later(1))
    call.dialed(CARRIER_SID, later(2))
    call.open_session("relay", "nonce", later(3))
    call.record_agent_usage(AGENT_TOKENS, later(60))
    call.close_session("callee", later(63))
    call.end(60, later(63))  # one minute of alpha_25
    saved: list[object] = []

    runner._settle(_calling(saved), call, runner.brief_for(call))

    minute = DEFAULT_PRICES.voice("alpha_25", 60, simulated=False)
    assert call.cost_voice == minute + Decimal("0.0450") and call.cost_extraction == Decimal("0.0090")
    assert call.cost_total == call.cost_voice + call.cost_extraction and saved == [call]


def test_a_call_routed_away_completes_with_the_routing_outcome_and_no_extraction():
    call = live_call(direction="inbound", consent_type="inbound")
    call.inbound_answered(CARRIER_SID, later(1))
    call.route_inbound(action="message", reason="closed", destination=None, persona=None, record=False,
                       now=later(1), objective="Route", outcome_schema=OutcomeSchema.compile(
                           inbound_plan.ROUTED_SCHEMA, limits=False))
    call.end(4, later(5))

    runner._settle_routed(_calling([]), call)

    assert (call.status, call.outcome, call.confidence) == ("completed", {
        "route": "message", "reason": "closed", "destination": None, "transferred": None}, 1.0)
    assert call.cost_extraction == Decimal("0.0000") and call.usage == {}
