"""``Calling``: the event-sourced Application of calls, suppressions and idempotency records."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from application.boundary import BoundaryApplication
from application.head_cache import HeadCache
from application.calling.ports import AgentBrain, Callee, OutcomeExtractor
from application.ports import Clock
from domain.calls.pricing import PriceTable


@dataclass(frozen=True, kw_only=True)
class CallingPorts:
    clock: Clock
    brain: AgentBrain
    extractor: OutcomeExtractor
    callee: Callable[[dict[str, Any] | None, str | None], Callee]  # (facts, persona) -> callee
    prices: PriceTable
    simulated_from_number: str = "+15005550006"
    max_call_seconds: int = 600
    max_turns: int = 120


class Calling(BoundaryApplication):
    name = "Calling"

    def __init__(self, env: Mapping[str, str] | None = None, *, ports: CallingPorts) -> None:
        super().__init__(env)
        self.ports = ports
        self.lookups = HeadCache(maxsize=1_000)
