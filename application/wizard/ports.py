"""What the wizard needs from outside: a ``WizardGenerator`` that writes a number's configuration
for a business description (rule-based offline, or a language model), and the error it raises
when it cannot be reached. The verdict is never the generator's: the domain's gate decides it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from application.errors import UpstreamUnavailableError


@dataclass(frozen=True, kw_only=True)
class WizardBrief:
    description: str  # the business description, as given: data, never instructions
    category: str  # the gate's class of it (domain.wizard.compliance)
    problems: tuple[str, ...] = ()  # what was wrong with the previous answer (a retry)


class WizardGenerator(Protocol):
    name: str  # "rules" or "anthropic": logged with each generation

    def configure(self, brief: WizardBrief) -> Mapping[str, Any]:
        """A Number configuration for the business (the wizard's fields: domain.wizard.config_rules);
        the caller checks it. ``WizardGeneratorUnavailableError`` when it cannot answer."""
        ...


class WizardGeneratorUnavailableError(UpstreamUnavailableError):
    """The generator's model could not be reached or refused to answer; answered 502."""

    code = "generator_unavailable"
