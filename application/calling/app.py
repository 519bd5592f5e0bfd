"""``Calling``: the event-sourced Application of calls, suppressions and idempotency records."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eventsourcing.persistence import JSONTranscoder, Transcoding

from application.boundary import BoundaryApplication
from application.commit_path import CommitPathFactory, direct
from application.head_cache import HeadCache
from application.calling.call_log import log_steps
from application.calling.ports import AgentBrain, Callee, OutcomeExtractor
from application.ports import Clock
from domain.calls.engine_choice import VoiceRouting
from domain.calls.outcome_schema import OutcomeSchema
from domain.calls.pricing import PriceTable

if TYPE_CHECKING:
    from application.calling.live_ports import LivePorts


def no_voice_preferences(_tenant_id: str) -> VoiceRouting:
    """Built-in defaults only: for a Calling without an Accounts to read (tests, tools)."""
    return VoiceRouting()


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
    # tenant_id -> what routes a call that names no engine (tenant settings, system A/B weights);
    # answered from memory in the steady state (application.accounts.voice.routing_for)
    voice_routing: Callable[[str], VoiceRouting] = no_voice_preferences


class OutcomeSchemaAsDefinition(Transcoding):
    """Stored as ``{"_type_": "outcome_schema", "_data_": <the canonical definition>}``: the same
    definition a ``Queued`` event held as a plain object before (docs/events.md)."""

    type = OutcomeSchema
    name = "outcome_schema"

    def encode(self, obj: OutcomeSchema) -> dict[str, dict[str, Any]]:
        return obj.to_definition()

    def decode(self, data: dict[str, dict[str, Any]]) -> OutcomeSchema:
        return OutcomeSchema.compile(data, limits=False)  # stored: what was accepted then still reads


class Calling(BoundaryApplication):
    name = "Calling"

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        transcoder.register(OutcomeSchemaAsDefinition())

    def __init__(self, env: Mapping[str, str] | None = None, *, ports: CallingPorts, live: LivePorts,
                 commits: CommitPathFactory = direct) -> None:
        super().__init__(env, commits=commits)
        self.ports = ports
        self.lookups = HeadCache(maxsize=1_000)
        self.live = live  # the carrier side of live calls: every run mode wires it

    def committed(self, events: list[Any], aggregates: tuple[Any, ...]) -> None:
        log_steps(events, aggregates)
