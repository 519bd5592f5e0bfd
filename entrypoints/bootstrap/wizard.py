"""The wizard's generator: Anthropic when ``ANTHROPIC_API_KEY`` is set (the agent's key, base URL
and model), else the offline rule-based one (docs/wizard.md)."""

from __future__ import annotations

from adapters.scripted.wizard import RuleBasedWizardGenerator
from application.ports import Clock
from application.wizard.ports import WizardGenerator
from entrypoints.settings import Settings


def wizard_generator(settings: Settings, clock: Clock) -> WizardGenerator:
    if settings.anthropic_api_key:
        from adapters.anthropic.client import make_client
        from adapters.anthropic.wizard import AnthropicWizardGenerator

        client = make_client(settings.anthropic_api_key, base_url=settings.anthropic_base_url)
        model = {"model": settings.anthropic_model} if settings.anthropic_model else {}
        return AnthropicWizardGenerator(client, clock=clock, **model)
    return RuleBasedWizardGenerator()
