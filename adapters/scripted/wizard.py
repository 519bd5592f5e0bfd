"""The rule-based wizard generator: offline and deterministic. The configuration of the business
class the compliance gate named (``domain.wizard.configs``), with the time zone of the places the
description names (the default when no ``ANTHROPIC_API_KEY`` is configured)."""

from __future__ import annotations

from typing import Any

from application.wizard.ports import WizardBrief
from domain.wizard.configs import config_for


class RuleBasedWizardGenerator:
    name = "rules"

    def configure(self, brief: WizardBrief) -> dict[str, Any]:
        return config_for(brief.category, brief.description)
