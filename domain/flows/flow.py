"""A flow: a conversation graph drafted, compiled and frozen at publish (SPEC.md Flow, its state
table; docs/flows.md). Its events are the state table's rows:

- ``Drafted`` (``POST /v1/flows``): state ``draft``, the graph stored as ``graph_json``, compiled
  or not (publish is where a graph that does not compile is refused).
- ``DraftEdited`` (``PATCH``): a new ``draft_version``; the state does not move, and a published
  flow keeps running what it published.
- ``Published`` (``POST …/publish``, the graph compiles): state ``published``, the whole compiled
  artifact frozen in the event, ``published_version`` one more. A preview appends nothing.

Keypad ending modes are stored and shown as SPEC.md Flow spells them (``fixed-length``, whichever
spelling came in; ``keypad.Respelled``), also for flows drafted or published before.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.flows.compiler import CompiledFlow
from domain.flows.keypad import Respelled

FLOW = "flw"
DRAFT, PUBLISHED = "draft", "published"


class Flow(TenantAggregate):
    @staticmethod
    def create_id(flow_id: str) -> uuid.UUID:
        """``MalformedIdError`` (a ``ValueError``) when ``flow_id`` is no ``flw_…`` id."""
        return ids.from_public(FLOW, flow_id)

    @staticmethod
    def public_id(aggregate_id: uuid.UUID) -> str:
        return ids.to_public(FLOW, aggregate_id)

    @classmethod
    def draft(cls, *, tenant_id: str, name: str, graph_json: dict[str, Any], by: str, at: datetime) -> Flow:
        return cls(tenant_id=tenant_id, flow_id=ids.to_public(FLOW, uuid.uuid4()), name=name,
                   graph_json=Respelled.graph(graph_json), by=by, at=at)

    @event("Drafted")
    def __init__(self, tenant_id: str, flow_id: str, name: str, graph_json: dict[str, Any], by: str,
                 at: datetime) -> None:
        self.tenant_id = tenant_id
        self.flow_id = flow_id
        self.name = name
        self.graph_json = Respelled.graph(graph_json)
        self.draft_version = 1
        self.created_by = by
        self.created_at = at
        self.updated_at = at
        self.state = DRAFT
        self.published: dict[str, Any] | None = None  # {version, draft_version, published_at, published_by, compiled, graph}

    @property
    def published_version(self) -> int | None:
        return self.published["version"] if self.published is not None else None

    def edit(self, *, name: str | None, graph_json: dict[str, Any] | None, by: str, now: datetime) -> bool:
        """A new draft (``None``: that part unchanged); False when it changes nothing."""
        name = self.name if name is None else name
        graph_json = self.graph_json if graph_json is None else Respelled.graph(graph_json)
        if name == self.name and graph_json == self.graph_json:
            return False
        self._draft_edited(name=name, graph_json=graph_json, draft_version=self.draft_version + 1, by=by, at=now)
        return True

    @event("DraftEdited")
    def _draft_edited(self, name: str, graph_json: dict[str, Any], draft_version: int, by: str, at: datetime) -> None:
        self.name, self.draft_version, self.updated_at = name, draft_version, at
        self.graph_json = Respelled.graph(graph_json)

    def publish(self, compiled: CompiledFlow, *, by: str, now: datetime) -> None:
        """Freeze ``compiled`` (the current draft's artifact) as the next published version."""
        self._published(version=(self.published_version or 0) + 1, draft_version=self.draft_version,
                        compiled=compiled.to_json(), graph=compiled.graph, by=by, at=now)

    @event("Published")
    def _published(self, version: int, draft_version: int, compiled: dict[str, Any], graph: dict[str, Any], by: str,
                   at: datetime) -> None:
        self.state = PUBLISHED
        self.updated_at = at
        self.published = {"version": version, "draft_version": draft_version, "published_at": at, "published_by": by,
                          "compiled": Respelled.compiled(compiled), "graph": Respelled.graph(graph)}
