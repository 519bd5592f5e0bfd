"""What a generated wizard configuration must be (docs/wizard.md): exactly the wizard's fields,
each passing the checks of ``PATCH /v1/numbers/{id}`` (``domain.numbers.configuration``), opening
hours with their time zone, one SMS template and no transfer destinations. Also the texts of a
configuration that the compliance gate reads beside the description. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.errors import InputProblem, NumberConfigurationError
from domain.numbers import configuration

FIELDS = ("greeting", "persona", "objective", "outcome_schema", "timezone", "hours_json", "overflow_action",
          "voicemail_mode", "voicemail_schema", "voicemail_persona", "sms_enabled", "sms_templates",
          "transfer_destinations")
# The free texts an agent speaks or follows: what the compliance gate reads with the description.
SPOKEN = ("greeting", "persona", "objective", "overflow_message", "voicemail_persona")
NO_NUMBER = ""  # the number is not bought yet: no E.164 of its own to compare destinations with


def problems(config: Any) -> list[InputProblem]:
    """Every problem of a generated configuration, located within it; none: it is ready."""
    if not isinstance(config, Mapping):
        return [([], "the configuration must be an object", "dict_type", config)]
    found: list[InputProblem] = [([name], f"{name} is required", "missing", None) for name in FIELDS
                                 if name not in config]
    found += [([name], f"{name} is not a field the wizard sets", "extra_forbidden", config[name]) for name in config
              if name not in FIELDS]
    if config.get("hours_json", {}) is None:
        found.append((["hours_json"], "the wizard sets opening hours", "missing", None))
    if "transfer_destinations" in config and config["transfer_destinations"] != []:
        found.append((["transfer_destinations"], "leave transfer destinations empty: only the business knows "
                       "the numbers to transfer to", "transfer_destinations_not_empty",
                       config["transfer_destinations"]))
    templates = config.get("sms_templates")
    if isinstance(templates, list) and len(templates) != 1:
        found.append((["sms_templates"], "the wizard writes exactly one SMS template", "sms_template_count",
                       len(templates)))
    return found + settings_problems({name: value for name, value in config.items() if name in FIELDS})


def settings_problems(config: Mapping[str, Any],
                      flow_exists: configuration.FlowExists | None = None) -> list[InputProblem]:
    """The problems ``PATCH /v1/numbers/{id}`` would find in ``config`` on a new number (any of its
    settings, not only the wizard's)."""
    try:
        configuration.check(config, own_e164=NO_NUMBER, flow_exists=flow_exists)
    except NumberConfigurationError as exc:
        return list(exc.problems)
    return []


def spoken_texts(config: Mapping[str, Any]) -> str:
    """The configuration's free texts, one per line (what the gate reads with the description)."""
    texts = [config.get(name) for name in SPOKEN]
    templates = config.get("sms_templates")
    if isinstance(templates, list):
        texts += [template.get("body") for template in templates if isinstance(template, Mapping)]
    return "\n".join(text for text in texts if isinstance(text, str))
