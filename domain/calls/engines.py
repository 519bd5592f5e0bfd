"""Voice engine profiles (ARCHITECTURE.md §8): what a ``voice_engine`` value means on a live call.

A profile names the transport that carries the conversation (``relay``: the carrier does speech to
text and text to speech and the socket carries text; ``stream``: μ-law 8 kHz audio both ways,
bridged to a speech engine), the agent model, the voice and the price per minute. The defaults
use conversation relay so that carrier and model credentials alone give a working agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

RELAY = "relay"
STREAM = "stream"
TRANSPORTS = (RELAY, STREAM)

# Accepted on a call; ``beta_think_fast`` only at number and tenant level (SPEC.md Call create request).
CALL_ENGINES = ("alpha_25", "alpha_31")
ENGINES = ("alpha_25", "alpha_31", "beta_think_fast")
DEFAULT_ENGINE = "alpha_25"


@dataclass(frozen=True, kw_only=True)
class EngineProfile:
    name: str
    transport: str
    model: str | None  # None: the deployment's default agent model
    voice: str
    price_per_minute: Decimal
    speech: str = "scripted"  # the speech engine of the ``stream`` transport

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise ValueError(f"voice profile {self.name}: transport must be one of {', '.join(TRANSPORTS)}")
        if self.price_per_minute < 0:
            raise ValueError(f"voice profile {self.name}: price_per_minute must not be negative")


DEFAULT_PROFILES: dict[str, EngineProfile] = {
    "alpha_25": EngineProfile(name="alpha_25", transport=RELAY, model=None, voice="en-US-Journey-O",
                              price_per_minute=Decimal("0.09")),
    "alpha_31": EngineProfile(name="alpha_31", transport=RELAY, model=None, voice="en-US-Journey-D",
                              price_per_minute=Decimal("0.12")),
    "beta_think_fast": EngineProfile(name="beta_think_fast", transport=RELAY, model=None, voice="en-US-Journey-F",
                                     price_per_minute=Decimal("0.15")),
}


def profiles_from(overrides: Mapping[str, Mapping[str, Any]] | None) -> dict[str, EngineProfile]:
    """The default profiles with per-field overrides, e.g. ``{"alpha_31": {"transport": "stream"}}``.
    Only the three known engine names exist."""
    profiles = dict(DEFAULT_PROFILES)
    for name, fields in (overrides or {}).items():
        if name not in profiles:
            raise ValueError(f"unknown voice engine {name!r}; known: {', '.join(ENGINES)}")
        unknown = set(fields) - {"transport", "model", "voice", "price_per_minute", "speech"}
        if unknown:
            raise ValueError(f"voice profile {name}: unknown fields {', '.join(sorted(unknown))}")
        values = dict(fields)
        if "price_per_minute" in values:
            values["price_per_minute"] = Decimal(str(values["price_per_minute"]))
        profiles[name] = replace(profiles[name], **values)
    return profiles
