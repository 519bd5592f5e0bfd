"""``POST /v1/wizard/generate`` (SPEC.md Wizard; docs/wizard.md): a business description becomes a
verdict, its reason and a ready Number configuration.

The domain's compliance gate decides the verdict from the description before any generator runs,
so no generator can turn an ``unsupported`` class into anything else, and nothing is generated for
one. The configuration is checked as ``PATCH /v1/numbers/{id}`` would; a generator whose answer
fails is asked once more with the problems, then the request fails (502 ``generation_invalid``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from application import logs
from application.errors import UpstreamUnavailableError
from application.wizard.ports import WizardBrief, WizardGenerator
from domain.wizard import compliance, config_rules

log = logs.get_logger(__name__)

TRIES = 2  # the first answer and one retry


@dataclass(frozen=True, kw_only=True)
class Generation:
    verdict: str
    reason: str
    category: str
    config: dict[str, Any] | None  # None for an unsupported use case: nothing is generated for it


class GenerationInvalidError(UpstreamUnavailableError):
    """The generator answered twice with a configuration that fails the number checks."""

    code = "generation_invalid"


def generate(generator: WizardGenerator, description: str) -> Generation:
    assessment = compliance.assess(description)
    if assessment.verdict == compliance.UNSUPPORTED:
        log.info("wizard.generated", verdict=assessment.verdict, category=assessment.category, generator=None)
        return Generation(verdict=assessment.verdict, reason=assessment.reason, category=assessment.category,
                          config=None)
    problems: tuple[str, ...] = ()
    for attempt in range(TRIES):
        answer = generator.configure(WizardBrief(description=description, category=assessment.category,
                                                 problems=problems))
        found = config_rules.problems(answer)
        if not found:
            log.info("wizard.generated", verdict=assessment.verdict, category=assessment.category,
                     generator=generator.name, retried=attempt > 0)
            return Generation(verdict=assessment.verdict, reason=assessment.reason, category=assessment.category,
                              config=_plain(answer))
        problems = tuple(_said(loc, message) for loc, message, _, _ in found)
        log.warning("wizard.generation_invalid", generator=generator.name, attempt=attempt + 1,
                    problems=len(found), first=problems[0])
    raise GenerationInvalidError(f"the configuration generator ({generator.name}) answered twice with a "
                                 f"configuration that fails the number checks ({problems[0]}); try again")


def _said(loc: list[str | int], message: str) -> str:
    return f"{'.'.join(str(part) for part in loc) or 'the configuration'}: {message}"


def _plain(value: Any) -> Any:
    """A copy in plain JSON types (a generator's answer may hold its own mapping types)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
