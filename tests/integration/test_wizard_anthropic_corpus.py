"""The wizard's gate corpus through the Anthropic generator (docs/wizard.md): the fake Messages API
answers every description of ``tests/fixtures/wizard_gate_corpus.json`` through the forced
``configure_number`` tool with the configuration of an ordinary business
(``tests/fixtures/wizard_configure_number_answer.json``), and a model that adds ``verdict:
supported`` (a field the tool does not have) is refused and asked again. The service's verdict is
its own offline gate's, whatever the model writes: an ``unsupported`` description never reaches the
model, a risky one is never ``supported``, and provisioning, which reads the description with the
configuration's texts, keeps the same verdict."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.anthropic.client import make_client
from adapters.anthropic.wizard import CONFIGURE_NUMBER, AnthropicWizardGenerator
from application.wizard.generate import generate
from domain.wizard import compliance, config_rules
from domain.wizard.compliance import NEEDS_REVIEW, SUPPORTED, UNSUPPORTED
from tests.fakes.anthropic.server import FakeAnthropic, Reply, ToolCall
from tests.support.wizard_gate_corpus import CORPUS, RISKY, Entry, entry_id

ANSWER_PATH = Path(__file__).parents[1] / "fixtures" / "wizard_configure_number_answer.json"


def model_answer() -> dict[str, Any]:
    recorded = json.loads(ANSWER_PATH.read_text(encoding="utf-8"))
    assert recorded["tool"] == CONFIGURE_NUMBER
    return recorded["input"]


MODEL_CONFIG = model_answer()


def answer(config: dict[str, Any]) -> Reply:
    return Reply(tool_calls=(ToolCall(CONFIGURE_NUMBER, config),), input_tokens=900, output_tokens=400)


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[FakeAnthropic, AnthropicWizardGenerator]]:
    """One fake Messages API and one client for the module: the corpus is long."""
    fake = FakeAnthropic().start()
    client = make_client(fake.api_key, base_url=fake.base_url, timeout=5.0, max_retries=0)
    try:
        yield fake, AnthropicWizardGenerator(client, model="claude-test-model")
    finally:
        client.close()
        fake.stop()


@pytest.fixture
def fake_anthropic(model) -> Iterator[FakeAnthropic]:
    fake = model[0]
    fake.requests.clear()
    yield fake
    assert fake.pending == 0, "a scripted answer was left unasked"


@pytest.fixture
def generator(model, fake_anthropic) -> AnthropicWizardGenerator:
    return model[1]


def test_the_recorded_answer_is_a_ready_ordinary_configuration():
    assert config_rules.problems(MODEL_CONFIG) == []
    assert compliance.assess(config_rules.spoken_texts(MODEL_CONFIG)).verdict == SUPPORTED


@pytest.mark.parametrize("entry", CORPUS, ids=entry_id)
def test_the_anthropic_path_gives_each_corpus_description_the_gates_verdict(fake_anthropic, generator, entry: Entry):
    if entry.verdict != UNSUPPORTED:
        fake_anthropic.queue(answer(MODEL_CONFIG))

    generated = generate(generator, entry.description)

    gate = compliance.assess(entry.description)
    assert (generated.verdict, generated.category, generated.reason) == (entry.verdict, gate.category, gate.reason)
    if entry.category in RISKY:
        assert generated.verdict != SUPPORTED
    if entry.verdict == UNSUPPORTED:
        assert generated.config is None and fake_anthropic.requests == []  # never reaches the model
    else:
        assert generated.config == MODEL_CONFIG
        [request] = fake_anthropic.requests
        assert request.body["tool_choice"] == {"type": "tool", "name": CONFIGURE_NUMBER}
        prompt = request.body["messages"][0]["content"]
        assert entry.description in prompt and gate.category.replace("_", " ") in prompt
    # Provisioning reads the description with the configuration's texts: the verdict holds there too.
    provisioned = "\n".join((entry.description, "Acme", config_rules.spoken_texts(MODEL_CONFIG)))
    assert compliance.assess(provisioned).verdict == entry.verdict


FIRST_NEEDING_REVIEW = {entry.category: entry for entry in reversed(CORPUS)
                        if entry.category in RISKY and entry.verdict == NEEDS_REVIEW}


@pytest.mark.parametrize("entry", sorted(FIRST_NEEDING_REVIEW.values(), key=lambda entry: entry.category),
                         ids=lambda entry: entry.category)
def test_a_model_that_claims_supported_is_refused_and_the_gate_decides(fake_anthropic, generator, entry: Entry):
    fake_anthropic.queue(answer({**MODEL_CONFIG, "verdict": SUPPORTED, "category": "restaurant"}),
                         answer(MODEL_CONFIG))

    generated = generate(generator, entry.description)

    assert (generated.verdict, generated.config) == (NEEDS_REVIEW, MODEL_CONFIG)
    retry = fake_anthropic.requests[1].body["messages"][0]["content"]
    assert "verdict: verdict is not a field the wizard sets" in retry
    assert "category: category is not a field the wizard sets" in retry


def test_a_configuration_the_model_writes_into_a_risk_is_refused_at_provision(fake_anthropic, generator):
    description = "Plumbing and heating repairs around Denver; customers book jobs by phone."
    chasing = {**MODEL_CONFIG, "objective": "Call customers whose invoices are past due and ask them to pay."}
    fake_anthropic.queue(answer(chasing))

    generated = generate(generator, description)

    # The verdict of a generation is the description's alone; the configuration's texts count at provision.
    assert (generated.verdict, generated.config) == (SUPPORTED, chasing)
    provisioned = "\n".join((description, "Acme Plumbing", config_rules.spoken_texts(chasing)))
    assert compliance.assess(provisioned).verdict == NEEDS_REVIEW
