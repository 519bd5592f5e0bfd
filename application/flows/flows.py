"""Flows (SPEC.md Flow; docs/flows.md): draft, edit, preview and publish a conversation graph.

Preview and publish compile the same way (``domain/flows/compiler.py``, pure and deterministic), so
what a preview shows is what a publish of the same draft freezes. A preview appends nothing.
Another tenant's flow and a made-up id read as not found (404).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from application.calling.app import Calling
from application.calling.create import CallRequest
from application.errors import ValidationFailedError
from application.principal import Principal
from domain import ids
from domain.flows.compiler import CompiledFlow, FlowProblem, compile_flow
from domain.flows.flow import FLOW, Flow

PreviewResult = tuple[CompiledFlow | None, list[FlowProblem]]


def draft_flow(calling: Calling, principal: Principal, *, name: str, graph_json: dict[str, Any]) -> Flow:
    flow = Flow.draft(tenant_id=principal.tenant_id, name=name, graph_json=graph_json, by=principal.actor,
                      at=calling.ports.clock())
    calling.commit(flow)
    return flow


def owned_flow(calling: Calling, principal: Principal, flow_id: str) -> Flow:
    return calling.find_owned(Flow, FLOW, flow_id, principal.tenant_id, loc="flow_id", noun="flow")


def edit_flow(calling: Calling, principal: Principal, flow_id: str, *, name: str | None,
              graph_json: dict[str, Any] | None) -> Flow:
    return _changed(calling, principal, flow_id, lambda flow: flow.edit(
        name=name, graph_json=graph_json, by=principal.actor, now=calling.ports.clock()))


def preview_flow(calling: Calling, principal: Principal, flow_id: str,
                 graph_json: dict[str, Any] | None = None) -> PreviewResult:
    """The draft's (or ``graph_json``'s, unsaved) compiled artifact or its problems; nothing is stored."""
    flow = owned_flow(calling, principal, flow_id)
    return compile_flow(flow.name, flow.graph_json if graph_json is None else graph_json)


def publish_flow(calling: Calling, principal: Principal, flow_id: str) -> Flow:
    """Compile the current draft and freeze it as the next version; 422 with every problem (at
    ``graph_json.nodes.<node id>``, ``ctx.node_id``) when it does not compile."""
    def publish(flow: Flow) -> None:
        compiled, problems = compile_flow(flow.name, flow.graph_json)
        if compiled is None:
            raise ValidationFailedError([_problem(p) for p in problems], [{"node_id": p.node_id} for p in problems])
        flow.publish(compiled, by=principal.actor, now=calling.ports.clock())

    return _changed(calling, principal, flow_id, publish)


def published_flow_exists(calling: Calling, tenant_id: str) -> Callable[[str], bool]:
    """Whether a flow id names a published flow of the tenant (a number's ``flow_id`` must)."""
    def exists(flow_id: str) -> bool:
        flow = _published(calling, tenant_id, flow_id)
        return flow is not None and flow.published is not None
    return exists


def flowed_request(calling: Calling, principal: Principal, request: CallRequest,
                   loc: list[str | int]) -> CallRequest:
    """``request`` running its flow's latest published version (at this instant: a later publish
    changes nothing for this call): the artifact's objective and outcome schema, and what the
    agent walks. A request without ``flow_id`` as it is."""
    if request.flow_id is None:
        return request
    given = [([*loc, name], "comes from the flow's published version: leave it out with flow_id",
              "flow_defines_outcome", getattr(request, name)) for name in ("objective", "outcome_schema")
             if getattr(request, name) is not None]
    if given:
        raise ValidationFailedError(given)
    flow = _published(calling, principal.tenant_id, request.flow_id)
    if flow is None or flow.published is None:
        raise ValidationFailedError([([*loc, "flow_id"], "names no published flow of this account", "flow_not_found",
                                      request.flow_id)])
    run = flow_run(flow)
    if not run["outcome_schema"]:
        raise ValidationFailedError([([*loc, "flow_id"], "this flow asks no question, so a call from it would have no "
                                      "outcome: add a question step and publish again", "flow_has_no_questions",
                                      request.flow_id)])
    return replace(request, objective=run["objective"], outcome_schema=run["outcome_schema"], flow=run["flow"])


def flow_run(flow: Flow) -> dict[str, Any]:
    """What a call starting now runs of a published flow: the objective and outcome schema of its
    latest version, and the payload the call keeps (``Call.flow``)."""
    assert flow.published is not None
    published = flow.published
    compiled = published["compiled"]
    return {"objective": compiled["objective"], "outcome_schema": compiled["outcome_schema"], "flow": {
        "flow_id": flow.flow_id, "version": published["version"], "graph": published["graph"],
        "system_prompt": compiled["system_prompt"], "tools": compiled["tools"]}}


def number_flow_run(calling: Calling, tenant_id: str, flow_id: str | None) -> dict[str, Any] | None:
    """The run of a number's bound flow for an inbound call starting now; None without one (or when
    it asks nothing: the number's own objective and schema then hold)."""
    flow = _published(calling, tenant_id, flow_id) if flow_id else None
    if flow is None or flow.published is None:
        return None
    run = flow_run(flow)
    return run if run["outcome_schema"] else None


def _published(calling: Calling, tenant_id: str, flow_id: str) -> Flow | None:
    try:
        flow = calling.find(Flow, ids.from_public(FLOW, flow_id))
    except ids.MalformedIdError:
        return None
    return flow if flow is not None and flow.tenant_id == tenant_id else None


def _problem(problem: FlowProblem) -> tuple[list[str | int], str, str, Any]:
    return (["graph_json", "nodes", problem.node_id], problem.message, problem.code, problem.node_id)


def _changed(calling: Calling, principal: Principal, flow_id: str, change: Callable[[Flow], object]) -> Flow:
    """``change`` applied to the flow as it is now (again on the newer one when an edit or a publish
    won the race), then saved."""
    def attempt() -> Flow:
        flow = owned_flow(calling, principal, flow_id)
        change(flow)
        calling.commit(flow)
        return flow

    return calling.retry_on_conflict(attempt, attempts=5)
