"""The Anthropic brain and extractor against a local fake of the Messages API (loopback only).

ARCHITECTURE.md §8: streaming Messages API with tools ``end_call`` and ``press_keys``;
§7: the extractor's outcome is re-validated, retried once, else ``extraction_failed``.
"""

from __future__ import annotations

import io
import json
import logging
import socket
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import anthropic
import pytest

from adapters.anthropic.brain import AnthropicBrain, AnthropicSession
from adapters.anthropic.client import make_client
from adapters.anthropic.errors import AgentUnavailableError
from adapters.anthropic.extractor import AnthropicExtractor
from adapters.simulated.callee import SimulatedCallee
from application.calling import runner
from application.calling.app import Calling, CallingPorts
from application.calling.create import CallRequest, prepare_call
from application.calling.ports import AgentTurn, CallBrief
from application.principal import Principal
from domain.calls.call import Call
from domain.calls.outcome_schema import compile_schema
from domain.calls.pricing import DEFAULT_PRICES
from tests.fakes.anthropic.fixture import fake_anthropic  # noqa: F401
from tests.fakes.anthropic.server import FakeAnthropic, Reply, ToolCall
from tests.support.live_ports import unused_live_ports

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)
SCHEMA = {
    "confirmed": {"type": "boolean", "description": "Whether the appointment stands"},
    "new_time": {"type": "datetime", "optional": True},
    "mood": {"type": "enum", "values": ["happy", "annoyed"]},
}


def brief(schema: dict[str, Any] | None = None) -> CallBrief:
    return CallBrief(objective="Confirm the dentist appointment on Thursday", schema=compile_schema(schema or SCHEMA),
                     variables={"patient_name": "Ana"}, language="en-GB")


@pytest.fixture
def client(fake_anthropic: FakeAnthropic) -> Iterator[anthropic.Anthropic]:  # noqa: F811
    built = make_client(fake_anthropic.api_key, base_url=fake_anthropic.base_url, timeout=5.0, max_retries=0)
    yield built
    built.close()


@pytest.fixture
def session(client: anthropic.Anthropic) -> AnthropicSession:
    return AnthropicBrain(client, model="claude-test-model").open(brief())


def recorded_outcome(outcome: dict[str, Any], confidence: float, input_tokens: int = 300, output_tokens: int = 40) -> Reply:
    return Reply(tool_calls=(ToolCall("record_outcome", {**outcome, "confidence": confidence}),),
                 input_tokens=input_tokens, output_tokens=output_tokens)


# -- the brain ----------------------------------------------------------------------------------

def test_brain_streams_a_text_turn(fake_anthropic: FakeAnthropic, session: AnthropicSession) -> None:  # noqa: F811
    fake_anthropic.say("Hello Ana, I am calling about your dentist appointment. Is it still confirmed?")

    turn = session.respond(None)

    assert turn == AgentTurn(say="Hello Ana, I am calling about your dentist appointment. Is it still confirmed?")
    body = fake_anthropic.requests[0].body
    assert body["stream"] is True
    assert body["model"] == "claude-test-model"
    assert {tool["name"] for tool in body["tools"]} == {"end_call", "press_keys"}
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "[The call has been answered. The callee is listening.]"}]}]


def test_system_prompt_carries_the_brief_and_the_rules_of_the_call(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                                   session: AnthropicSession) -> None:
    fake_anthropic.say("Hello.")

    session.respond(None)

    system = fake_anthropic.requests[0].body["system"]
    assert "Confirm the dentist appointment on Thursday" in system
    assert "- confirmed (yes or no): Whether the appointment stands" in system
    assert "- new_time (a date and time, optional)" in system
    assert '- mood (one of: "happy", "annoyed")' in system
    assert "- patient_name: Ana" in system
    assert "en-GB" in system
    for rule in ("phone call", "one question at a time", "Never invent", "end_call", "press_keys"):
        assert rule in system


def test_press_keys_tool_call_becomes_a_keypad_turn(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                    session: AnthropicSession) -> None:
    fake_anthropic.call_tool("press_keys", {"digits": "2#"})

    turn = session.respond("For appointments, press 2 then hash.")

    assert turn == AgentTurn(press_keys="2#")


def test_transfer_call_is_offered_only_when_the_number_can_transfer(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                                  client: anthropic.Anthropic) -> None:
    offered = AnthropicBrain(client, model="claude-test-model").open(
        CallBrief(objective="Help the caller", schema=compile_schema(SCHEMA), can_transfer=True, model="claude-profile"))
    fake_anthropic.call_tool("transfer_call", {"brief": "wants a refund"}, text="Let me put you through.")

    turn = offered.respond("I want to talk to someone about a refund.")

    assert turn == AgentTurn(say="Let me put you through.", transfer=True, transfer_brief="wants a refund")
    body = fake_anthropic.requests[0].body
    assert body["model"] == "claude-profile"  # the engine profile's model
    assert {tool["name"] for tool in body["tools"]} == {"end_call", "press_keys", "transfer_call"}


def test_a_flows_keypad_step_is_a_collect_digits_tool_and_the_digits_never_reach_the_model(
        fake_anthropic: FakeAnthropic, client: anthropic.Anthropic) -> None:  # noqa: F811
    """Issue 15 item 4: the compiled prompt and the flow's keypad fields; the model opens the keypad,
    the caller's digits are recorded by the call and the model hears only how many there were."""
    pin = {"ending_mode": "fixed_length", "length": 4, "masked": True, "terminators": ["#"], "timeout_s": 5}
    flow = {"system_prompt": "Step pin (question): Ask: Key in your PIN.",
            "tools": [{"name": "end_call"}, {"name": "collect_digits", "fields": {"pin": pin}}]}
    session = AnthropicBrain(client, model="claude-test-model").open(
        CallBrief(objective="Follow the flow", schema=compile_schema({"pin": {"type": "string"}}), flow=flow))
    fake_anthropic.call_tool("collect_digits", {"field": "pin"}, text="Please key in your PIN.")

    turn = session.respond(None)
    assert turn == AgentTurn(say="Please key in your PIN.") and session.keypad_step == {"field": "pin", "keypad": pin}
    fake_anthropic.say("Thank you.")
    session.respond("4821")

    first, second = fake_anthropic.requests[0].body, fake_anthropic.requests[1].body
    assert "Step pin (question): Ask: Key in your PIN." in first["system"]
    tool = next(t for t in first["tools"] if t["name"] == "collect_digits")
    assert tool["input_schema"]["properties"]["field"]["enum"] == ["pin"]
    assert "4821" not in json.dumps(second["messages"]) and "keyed in 4 digits for pin" in json.dumps(second["messages"])
    assert session.keypad_step is None


def test_end_call_tool_ends_the_call(fake_anthropic: FakeAnthropic, session: AnthropicSession) -> None:  # noqa: F811
    fake_anthropic.call_tool("end_call", {"reason": "callee asked to stop"}, text="Of course. Goodbye!")

    turn = session.respond("Please don't call me again.")

    assert turn == AgentTurn(say="Of course. Goodbye!", end_call=True)


def test_turn_two_sends_the_previous_assistant_content_and_its_tool_result(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                                           session: AnthropicSession) -> None:
    call = fake_anthropic.call_tool("press_keys", {"digits": "1"}, text="One moment.")
    fake_anthropic.say("Hello, is this the dental practice?")

    session.respond("Press 1 for reception.")
    session.respond("Reception, how can I help?")

    messages = fake_anthropic.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "One moment."},
        {"type": "tool_use", "id": call.id, "name": "press_keys", "input": {"digits": "1"}},
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": call.id, "content": "Pressed 1."},
        {"type": "text", "text": "Reception, how can I help?"},
    ]


def test_invalid_digits_press_nothing_and_the_model_is_told(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                            session: AnthropicSession) -> None:
    call = fake_anthropic.call_tool("press_keys", {"digits": "one"})
    fake_anthropic.say("Sorry, could you repeat that?")

    assert session.respond("Press one.") == AgentTurn()
    session.respond("...")

    result = fake_anthropic.requests[1].body["messages"][2]["content"][0]
    assert result["tool_use_id"] == call.id and result["is_error"] is True


def test_usage_accumulates_over_turns(fake_anthropic: FakeAnthropic, session: AnthropicSession) -> None:  # noqa: F811
    fake_anthropic.queue(Reply(text="Hello.", input_tokens=100, output_tokens=7),
                         Reply(text="Thanks.", input_tokens=140, output_tokens=5))

    session.respond(None)
    session.respond("Hi.")

    assert session.usage == {"input_tokens": 240, "output_tokens": 12}


def test_a_failed_turn_leaves_the_history_as_it_was(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                    session: AnthropicSession) -> None:
    fake_anthropic.say("Hello.")
    fake_anthropic.fail(529)
    fake_anthropic.say("Is the appointment confirmed?")

    session.respond(None)
    with pytest.raises(AgentUnavailableError):
        session.respond("Hi, who is this?")
    session.respond("Hi, who is this?")

    assert [m["role"] for m in fake_anthropic.requests[2].body["messages"]] == ["user", "assistant", "user"]


# -- the extractor ------------------------------------------------------------------------------

def test_extractor_forces_the_record_outcome_tool_with_the_compiled_schema(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                                           client: anthropic.Anthropic) -> None:
    fake_anthropic.queue(recorded_outcome({"confirmed": True, "mood": "happy"}, 0.9))
    call_brief = brief()

    AnthropicExtractor(client).extract(call_brief, "agent: Is it confirmed?\ncallee: Yes.")

    body = fake_anthropic.requests[0].body
    assert "stream" not in body
    assert body["tool_choice"] == {"type": "tool", "name": "record_outcome"}
    [tool] = body["tools"]
    expected = call_brief.schema.json_schema
    expected["properties"]["confidence"] = {"type": "number", "minimum": 0, "maximum": 1,
                                            "description": tool["input_schema"]["properties"]["confidence"]["description"]}
    expected["required"].append("confidence")
    assert tool["name"] == "record_outcome" and tool["input_schema"] == expected
    prompt = body["messages"][0]["content"]
    assert "Confirm the dentist appointment on Thursday" in prompt
    assert "<transcript>\nagent: Is it confirmed?\ncallee: Yes.\n</transcript>" in prompt


def test_extractor_returns_the_outcome_and_a_clamped_confidence(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                                client: anthropic.Anthropic) -> None:
    fake_anthropic.queue(recorded_outcome({"confirmed": True, "new_time": None, "mood": "happy"}, 1.7))

    extraction = AnthropicExtractor(client).extract(brief(), "agent: Hello\ncallee: Yes.")

    assert extraction.outcome == {"confirmed": True, "new_time": None, "mood": "happy"}
    assert extraction.confidence == 1.0
    assert extraction.usage == {"input_tokens": 300, "output_tokens": 40}


def test_extractor_hands_back_an_invalid_outcome_unvalidated(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                             client: anthropic.Anthropic) -> None:
    fake_anthropic.queue(recorded_outcome({"confirmed": "maybe"}, 0.4))

    extraction = AnthropicExtractor(client).extract(brief(), "agent: Hello")

    assert extraction.outcome == {"confirmed": "maybe"}
    assert extraction.confidence == 0.4


def test_extractor_puts_the_problems_of_the_first_attempt_into_the_retry(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                                         client: anthropic.Anthropic) -> None:
    fake_anthropic.queue(recorded_outcome({"confirmed": True, "mood": "happy"}, 0.8))

    AnthropicExtractor(client).extract(brief(), "agent: Hello", problems=["mood: must be one of 'happy', 'annoyed'"])

    prompt = fake_anthropic.requests[0].body["messages"][0]["content"]
    assert "refused" in prompt and "- mood: must be one of 'happy', 'annoyed'" in prompt


def test_a_field_named_confidence_keeps_its_own_value(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                      client: anthropic.Anthropic) -> None:
    fake_anthropic.queue(Reply(tool_calls=(ToolCall("record_outcome", {"confidence": "high", "_confidence": 0.6}),)))

    extraction = AnthropicExtractor(client).extract(brief({"confidence": {"type": "string"}}), "agent: Hello")

    assert extraction.outcome == {"confidence": "high"} and extraction.confidence == 0.6
    assert fake_anthropic.requests[0].body["tools"][0]["input_schema"]["required"] == ["confidence", "_confidence"]


# -- failures -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("status", "kind"), [(529, "overloaded_error"), (500, "api_error"), (429, "rate_limit_error")])
def test_an_error_answer_raises_agent_unavailable(fake_anthropic: FakeAnthropic, client: anthropic.Anthropic,  # noqa: F811
                                                  status: int, kind: str) -> None:
    fake_anthropic.fail(status, kind)
    fake_anthropic.fail(status, kind)

    with pytest.raises(AgentUnavailableError) as turn_error:
        AnthropicBrain(client).open(brief()).respond(None)
    with pytest.raises(AgentUnavailableError) as extraction_error:
        AnthropicExtractor(client).extract(brief(), "agent: Hello")

    for error in (turn_error.value, extraction_error.value):
        assert error.code == "agent_unavailable" and error.status == status and kind in error.message


def test_an_error_event_in_the_stream_raises_agent_unavailable(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                               session: AnthropicSession) -> None:
    fake_anthropic.fail(529, in_stream=True)

    with pytest.raises(AgentUnavailableError, match="overloaded_error"):
        session.respond(None)


def test_an_unreachable_api_raises_agent_unavailable() -> None:
    with socket.socket() as probe:  # a loopback port with nobody listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unreachable = make_client("sk-ant-unused", base_url=f"http://127.0.0.1:{port}", timeout=2.0, max_retries=0)

    with unreachable, pytest.raises(AgentUnavailableError, match="APIConnectionError") as error:
        AnthropicBrain(unreachable).open(brief()).respond(None)

    assert error.value.status is None


def test_the_client_retries_one_overloaded_answer(fake_anthropic: FakeAnthropic) -> None:  # noqa: F811
    patient = make_client(fake_anthropic.api_key, base_url=fake_anthropic.base_url, max_retries=1)
    fake_anthropic.fail(529)
    fake_anthropic.say("Hello.")

    try:
        assert AnthropicBrain(patient).open(brief()).respond(None) == AgentTurn(say="Hello.")
    finally:
        patient.close()
    assert len(fake_anthropic.requests) == 2


def test_the_api_key_is_sent_as_a_header_and_never_logged(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                          client: anthropic.Anthropic, service_log: io.StringIO,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    fake_anthropic.say("Hello.")
    fake_anthropic.queue(recorded_outcome({"confirmed": True, "mood": "happy"}, 0.9))
    fake_anthropic.fail(529)

    AnthropicBrain(client).open(brief()).respond(None)
    AnthropicExtractor(client).extract(brief(), "agent: Hello")
    with pytest.raises(AgentUnavailableError) as error:
        AnthropicExtractor(client).extract(brief(), "agent: Hello")

    assert {r.headers["authorization"] for r in fake_anthropic.requests} == {f"Bearer {fake_anthropic.api_key}"}
    logged = service_log.getvalue()
    assert "agent.turn" in logged and "outcome.extracted" in logged and "anthropic.failed" in logged
    for text in (logged, caplog.text, str(error.value), repr(error.value)):
        assert fake_anthropic.api_key not in text


# -- end to end with the runner -----------------------------------------------------------------

PRINCIPAL = Principal(kind="api_key", tenant_id="ten_" + "a" * 32, user_id="usr_" + "b" * 32,
                      verification_status="approved", tier="standard", key_id="key_x")
FACTS = {"confirmed": True, "mood": "happy"}


def run_simulated_call(client: anthropic.Anthropic) -> Call:
    ports = CallingPorts(clock=lambda: NOW, brain=AnthropicBrain(client), extractor=AnthropicExtractor(client),
                         callee=SimulatedCallee, prices=DEFAULT_PRICES)
    calling = Calling({"PERSISTENCE_MODULE": "eventsourcing.popo"}, ports=ports, live=unused_live_ports())
    request = CallRequest(to="+442071838750", objective="Confirm the dentist appointment", consent_type="prior_express",
                          mode="simulated", outcome_schema=SCHEMA, simulation={"facts": FACTS})
    call = prepare_call(calling, PRINCIPAL, request, NOW)
    calling.commit(call)
    claimed = runner.claim(calling, call.call_id)
    assert claimed is not None
    runner.run(calling, claimed)
    settled = calling.find(Call, call.id)
    assert settled is not None
    return settled


def script_conversation(fake: FakeAnthropic) -> None:
    fake.say("Hello, this is the dental practice. Is your appointment still confirmed?")
    fake.say("Lovely. And would you say your mood is happy or annoyed today?")
    fake.call_tool("end_call", {"reason": "all answers collected"}, text="Thank you, that is all. Goodbye!")


def test_a_simulated_call_completes_with_the_typed_outcome(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                           client: anthropic.Anthropic) -> None:
    script_conversation(fake_anthropic)
    fake_anthropic.queue(recorded_outcome({"confirmed": True, "new_time": None, "mood": "happy"}, 0.92,
                                          input_tokens=1200, output_tokens=80))

    call = run_simulated_call(client)

    assert call.status == "completed", call.error_code
    assert call.outcome == {"confirmed": True, "new_time": None, "mood": "happy"}
    assert call.confidence == 0.92
    assert call.cost_extraction == Decimal("0.0048")  # 1200 × $3/M + 80 × $15/M
    assert "callee: Yes." in call.transcript and "callee: happy" in call.transcript
    assert fake_anthropic.pending == 0
    assert "callee: happy" in fake_anthropic.requests[-1].body["messages"][0]["content"]


def test_an_outcome_invalid_twice_fails_the_call_with_extraction_failed(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                                        client: anthropic.Anthropic) -> None:
    script_conversation(fake_anthropic)
    fake_anthropic.queue(recorded_outcome({"confirmed": "maybe", "mood": "happy"}, 0.5),
                         recorded_outcome({"confirmed": "still maybe", "mood": "happy"}, 0.5))

    call = run_simulated_call(client)

    assert call.status == "failed"
    assert call.error_code == "extraction_failed"
    assert call.cost_extraction == Decimal("0.0030")  # two attempts of 300 in × $3/M + 40 out × $15/M
    retry_prompt = fake_anthropic.requests[-1].body["messages"][0]["content"]
    assert "confirmed: must be true or false" in retry_prompt


def test_the_fake_refuses_a_history_that_drops_a_tool_result(fake_anthropic: FakeAnthropic,  # noqa: F811
                                                             client: anthropic.Anthropic) -> None:
    unanswered = [
        {"role": "user", "content": "Hello?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "press_keys", "input": {"digits": "1"}}]},
        {"role": "user", "content": [{"type": "text", "text": "Reception."}]},
    ]

    with pytest.raises(anthropic.BadRequestError, match="tool_result"):
        client.messages.create(model="claude-test-model", max_tokens=50, messages=unanswered)  # type: ignore[arg-type]


def test_a_simulated_call_at_a_chosen_instant_tells_the_agent_and_the_extractor_that_instant(
        fake_anthropic: FakeAnthropic, client: anthropic.Anthropic) -> None:  # noqa: F811
    """``simulation.at`` (the brief's ``at``) is the agent's today and now, whatever the clock says."""
    at = datetime(2026, 12, 24, 9, 15, tzinfo=timezone.utc)
    clock_now = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)

    fake_anthropic.say("Hello.")
    AnthropicBrain(client, clock=lambda: clock_now).open(replace(brief(), at=at)).respond(None)
    fake_anthropic.queue(recorded_outcome({"confirmed": True, "new_time": None, "mood": "happy"}, 0.9))
    AnthropicExtractor(client, clock=lambda: clock_now).extract(replace(brief(), at=at), "agent: Hi\ncallee: Yes")

    agent, extractor = (request.body for request in fake_anthropic.requests)
    for told in (agent["system"], extractor["messages"][0]["content"]):
        assert "Today is Thursday 2026-12-24, 09:15 UTC." in told and "2026-11-02" not in told
