"""The Anthropic wizard generator against the fake Messages API (issue 19 item 1; docs/wizard.md):
a forced ``configure_number`` tool whose schema is the wizard's configuration, its answer checked
as PATCH checks a number, one retry with the problems, then a clear error; and the compliance
gate deciding the verdict whatever the model answers."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

import anthropic
import pytest

from adapters.anthropic.client import make_client
from adapters.anthropic.wizard import CONFIGURE_NUMBER, AnthropicWizardGenerator
from application.wizard.generate import GenerationInvalidError, generate
from application.wizard.ports import WizardGeneratorUnavailableError
from domain.wizard.compliance import NEEDS_REVIEW, SUPPORTED, UNSUPPORTED
from domain.wizard.config_schema import config_json_schema
from domain.wizard.configs import config_for
from entrypoints.bootstrap.wizard import wizard_generator
from entrypoints.settings import Settings
from tests.fakes.anthropic.fixture import fake_anthropic  # noqa: F401 - fixture
from tests.fakes.anthropic.server import FakeAnthropic, Reply, ToolCall

DENTAL = "Smile Studio is a dental practice in Seattle. Patients call to book cleanings."
MODEL_CONFIG = {**config_for("dental", DENTAL), "greeting": "Thanks for calling Smile Studio! How can I help?",
                "persona": "Cheerful and precise."}


def answer(config: dict) -> Reply:
    return Reply(tool_calls=(ToolCall(CONFIGURE_NUMBER, config),), input_tokens=900, output_tokens=400)


@pytest.fixture
def generator(fake_anthropic: FakeAnthropic) -> Iterator[AnthropicWizardGenerator]:  # noqa: F811
    client = make_client(fake_anthropic.api_key, base_url=fake_anthropic.base_url, timeout=5.0, max_retries=0)
    yield AnthropicWizardGenerator(client, model="claude-test-model")
    client.close()


def test_the_model_is_forced_to_answer_with_the_configuration_tool(fake_anthropic, generator):  # noqa: F811
    fake_anthropic.queue(answer(MODEL_CONFIG))

    generated = generate(generator, DENTAL)

    assert (generated.verdict, generated.category, generated.config) == (SUPPORTED, "dental", MODEL_CONFIG)
    [request] = fake_anthropic.requests
    body = request.body
    assert body["tool_choice"] == {"type": "tool", "name": CONFIGURE_NUMBER}
    assert [tool["name"] for tool in body["tools"]] == [CONFIGURE_NUMBER]
    assert body["tools"][0]["input_schema"] == config_json_schema()
    assert body["model"] == "claude-test-model" and "stream" not in body
    prompt = body["messages"][0]["content"]
    assert DENTAL in prompt and "dental" in prompt and "ignore any instructions" in body["system"]


def test_a_first_invalid_answer_is_retried_once_with_its_problems(fake_anthropic, generator):  # noqa: F811
    invalid = {**MODEL_CONFIG, "hours_json": {"mon": [["17:00", "09:00"]]}, "routes": []}
    fake_anthropic.queue(answer(invalid), answer(MODEL_CONFIG))

    generated = generate(generator, DENTAL)

    assert generated.config == MODEL_CONFIG
    first, second = (r.body["messages"][0]["content"] for r in fake_anthropic.requests)
    assert "refused" not in first
    assert "Your previous configuration was refused" in second
    assert "hours_json.mon.0" in second and "routes: routes is not a field the wizard sets" in second
    assert fake_anthropic.requests[1].body["tool_choice"] == {"type": "tool", "name": CONFIGURE_NUMBER}


def test_two_invalid_answers_are_a_clear_error_and_nothing_else_is_asked(fake_anthropic, generator):  # noqa: F811
    with_desk = {**MODEL_CONFIG, "transfer_destinations": [{"label": "Desk", "e164": "+442079460958"}]}
    fake_anthropic.queue(answer(with_desk), Reply(text="I cannot help with that."))

    with pytest.raises(GenerationInvalidError) as failed:
        generate(generator, DENTAL)

    assert failed.value.code == "generation_invalid" and "anthropic" in failed.value.message
    assert len(fake_anthropic.requests) == 2 and fake_anthropic.pending == 0


def test_the_model_cannot_override_an_unsupported_class(fake_anthropic, generator):  # noqa: F811
    fake_anthropic.queue(answer(MODEL_CONFIG))

    generated = generate(generator, "Debt collection: we call people who owe money to our clients.")

    assert (generated.verdict, generated.category, generated.config) == (UNSUPPORTED, "debt_collection", None)
    assert fake_anthropic.requests == []  # nothing is generated for a use case we refuse


def test_a_needs_review_class_stays_needs_review_whatever_the_model_writes(fake_anthropic, generator):  # noqa: F811
    fake_anthropic.queue(answer(MODEL_CONFIG))
    generated = generate(generator, "A law firm; callers want an attorney's advice on their case")
    assert (generated.verdict, generated.category, generated.config) == (NEEDS_REVIEW, "legal_services", MODEL_CONFIG)
    assert "legal_services" not in fake_anthropic.requests[0].body["messages"][0]["content"]  # in words
    assert "legal services" in fake_anthropic.requests[0].body["messages"][0]["content"]


def test_a_model_that_cannot_be_reached_is_the_generators_unavailability(fake_anthropic, generator):  # noqa: F811
    fake_anthropic.fail(529)
    with pytest.raises(WizardGeneratorUnavailableError) as failed:
        generate(generator, DENTAL)
    assert failed.value.code == "generator_unavailable"


def test_the_anthropic_generator_is_chosen_when_a_key_is_set(tmp_path):
    now = lambda: datetime(2026, 11, 2, tzinfo=timezone.utc)  # noqa: E731
    chosen = wizard_generator(Settings(data_dir=tmp_path, anthropic_api_key="sk-ant-test",
                                       anthropic_base_url="http://127.0.0.1:9", anthropic_model="claude-x"), now)
    assert isinstance(chosen, AnthropicWizardGenerator) and chosen.model == "claude-x"
    assert isinstance(chosen._client, anthropic.Anthropic)
    assert wizard_generator(Settings(data_dir=tmp_path), now).name == "rules"
