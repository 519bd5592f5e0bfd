"""Which voice engine a call gets when its request names none: A/B routing (ARCHITECTURE.md §8).

An explicit ``voice_engine`` on the request always wins. Otherwise, if the tenant switched A/B
routing off (``voice_ab_disabled``), the call gets the tenant's ``voice_engine_default`` or, when
the tenant set none, the system default engine. Otherwise the engine is a weighted choice among
the system's A/B weights, made from a hash of the call id: the same call id always gets the same
engine, whatever the process or the moment. The tenant's default only applies with A/B off, so a
tenant leaves the experiment only through the kill switch, never by a side effect.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from math import isfinite

from domain.calls.engines import DEFAULT_ENGINE, ENGINES
from domain.errors import DomainError

Weights = tuple[tuple[str, float], ...]  # (engine, weight) in the order of ENGINES, every engine once

MAX_WEIGHT = 1_000_000.0
DEFAULT_WEIGHTS: Weights = (("alpha_25", 1.0), ("alpha_31", 1.0), ("beta_think_fast", 0.0))


class VoiceRoutingError(DomainError):
    """An unknown engine, or A/B weights that cannot split calls."""

    code = "voice_routing_invalid"


def check_engine(name: str) -> str:
    if name not in ENGINES:
        raise VoiceRoutingError(f"unknown voice engine {name!r}; known: {', '.join(ENGINES)}",
                                code="unknown_voice_engine")
    return name


def weights_from(raw: Mapping[str, float]) -> Weights:
    """Weights over the known engines (an engine left out weighs 0); at least one must be positive."""
    for name, weight in raw.items():
        check_engine(name)
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not isfinite(weight) \
                or not 0 <= weight <= MAX_WEIGHT:
            raise VoiceRoutingError(f"the weight of {name} must be a number from 0 to {MAX_WEIGHT:g}",
                                    code="invalid_weight")
    weights = as_weights(raw)
    if not any(weight > 0 for _, weight in weights):
        raise VoiceRoutingError("at least one engine needs a positive weight", code="no_positive_weight")
    return weights


def as_weights(raw: Mapping[str, float]) -> Weights:
    """Weights as recorded, without checks (an event body re-runs on replay and must not refuse)."""
    return tuple((name, float(raw.get(name, 0.0))) for name in ENGINES)


@dataclass(frozen=True, kw_only=True)
class VoiceDefaults:
    """The system-wide defaults an operator sets."""

    voice_engine_default: str = DEFAULT_ENGINE
    voice_ab_weights: Weights = DEFAULT_WEIGHTS

    @classmethod
    def recorded(cls, voice_engine_default: str, voice_ab_weights: Mapping[str, float]) -> VoiceDefaults:
        """The defaults an event recorded, as it recorded them (``as_weights``: no checks on replay)."""
        return cls(voice_engine_default=voice_engine_default, voice_ab_weights=as_weights(voice_ab_weights))

    def weights_dict(self) -> dict[str, float]:
        """The positive weights, as shown and stored."""
        return {name: weight for name, weight in self.voice_ab_weights if weight > 0}


@dataclass(frozen=True, kw_only=True)
class VoiceRouting:
    """Everything the choice depends on besides the call id."""

    defaults: VoiceDefaults = field(default_factory=VoiceDefaults)
    tenant_default: str | None = None
    ab_disabled: bool = False

    @property
    def default_engine(self) -> str:
        """The workspace default: the tenant's ``voice_engine_default``, else the system's."""
        return self.tenant_default or self.defaults.voice_engine_default

    def engine_for(self, call_id: str, requested: str | None = None) -> str:
        return choose_engine(call_id, self, requested)


def ab_point(call_id: str) -> float:
    """The call's point in [0, 1): 53 bits of its SHA-256, so every point is an exact double."""
    digest = hashlib.sha256(call_id.encode("utf-8")).digest()
    return (int.from_bytes(digest[:8], "big") >> 11) / float(1 << 53)


def weighted_engine(point: float, weights: Weights) -> str:
    """The engine whose share of the positive weights, laid end to end in ENGINES order, holds ``point``."""
    positive = [(name, weight) for name, weight in weights if weight > 0]
    if not positive:
        raise VoiceRoutingError("at least one engine needs a positive weight", code="no_positive_weight")
    target = point * sum(weight for _, weight in positive)
    reached = 0.0
    for name, weight in positive:
        reached += weight
        if target < reached:
            return name
    return positive[-1][0]  # rounding at the very top of the range


def choose_engine(call_id: str, routing: VoiceRouting, requested: str | None = None) -> str:
    if requested:
        return requested
    if routing.ab_disabled:
        return routing.default_engine
    return weighted_engine(ab_point(call_id), routing.defaults.voice_ab_weights)
