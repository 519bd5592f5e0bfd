"""Flows: conversation graphs (``/v1/flows``). The list and a create form (name and
``graph_json``); one flow's page with its graph drawn as SVG (``graph_svg``), an editor for the
draft, a preview (``POST /v1/flows/{id}/preview``, nothing stored) whose errors are drawn on their
nodes, and publishing (``POST /v1/flows/{id}/publish``) with the published version shown."""

from __future__ import annotations

import json
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import Provide

from entrypoints.http.dashboard.api import Answer, Api
from entrypoints.http.dashboard.graph_svg import draw
from entrypoints.http.dashboard.render import page, redirect
from entrypoints.http.dashboard.session import Session, current_session

EXAMPLE = {"start": "greet", "nodes": [
    {"id": "greet", "type": "message", "text": "Hello from Acme Dental."},
    {"id": "ask", "type": "question", "text": "Can you come tomorrow at 10?", "field": "confirmed",
     "field_type": "boolean"},
    {"id": "route", "type": "branch"},
    {"id": "desk", "type": "transfer", "destination": "Front desk"},
    {"id": "bye", "type": "end", "text": "See you tomorrow."}],
    "edges": [{"from": "greet", "to": "ask"}, {"from": "ask", "to": "route"},
              {"from": "route", "to": "desk", "when": {"field": "confirmed", "op": "eq", "value": False}},
              {"from": "route", "to": "bye"}]}
DONE = {"created": "Flow drafted. Preview it, then publish it.", "saved": "Draft saved.",
        "unchanged": "Nothing was changed: the editor matched the saved draft.",
        "published": "Published: calls and numbers using this flow now run this version."}


def _graph(text: str) -> tuple[Any, str | None]:
    try:
        graph = json.loads(text)
    except ValueError as exc:
        return None, f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    return (graph, None) if isinstance(graph, dict) else (None, "must be a JSON object {start, nodes, edges}")


def _posted(session: Session) -> tuple[str, str]:
    return session.field("name"), (session.form.get("graph_json") or "").replace("\r\n", "\n").strip()


def publish_errors(answer: Answer) -> list[dict[str, str]]:
    """A refused publish's problems as the preview's ``{node_id, code, message}``."""
    detail = answer.body.get("detail") if isinstance(answer.body, dict) else None
    found = []
    for problem in detail if isinstance(detail, list) else []:
        loc = [str(part) for part in problem.get("loc") or []]
        node_id = (problem.get("ctx") or {}).get("node_id") or (loc[-1] if len(loc) > 3 else "#graph")
        found.append({"node_id": str(node_id), "code": str(problem.get("type", "")), "message": str(problem.get("msg", ""))})
    return found


class FlowsPages(Controller):
    path = "/app/flows"
    include_in_schema = False
    dependencies = {"session": Provide(current_session)}

    async def _list(self, request: Request[Any, Any, Any], session: Session, *, name: str = "", graph: str = "",
                    problems: dict[str, str] | None = None, status: int = 200, failure: str | None = None,
                    cursor: str | None = None) -> Response[str]:
        answer = await session.api.get("/v1/flows", params={"limit": 50, **({"cursor": cursor} if cursor else {})})
        return page("flows/list.html", session, status=status, active="flows", title="Flows",
                    flows=answer.body["data"] if answer.ok else [],
                    next_cursor=answer.body.get("next_cursor") if answer.ok else None,
                    name=name, graph=graph or json.dumps(EXAMPLE, indent=2), problems=problems or {},
                    failure=failure or (None if answer.ok else answer.error["message"]))

    @get("/")
    async def flows(self, request: Request[Any, Any, Any], session: Session, cursor: str | None = None) -> Response[str]:
        return await self._list(request, session, cursor=cursor)

    @post("/")
    async def create(self, request: Request[Any, Any, Any], session: Session) -> Response[str]:
        name, text = _posted(session)
        graph, problem = _graph(text)
        if problem:
            return await self._list(request, session, name=name, graph=text, problems={"graph_json": problem},
                                    status=422, failure="The flow was not created: fix the graph.")
        answer = await session.api.post("/v1/flows", json={"name": name, "graph_json": graph})
        if answer.ok:
            return redirect(request, f"/app/flows/{answer.body['id']}?done=created")
        problems = {k: answer.problem_for(k) or "" for k in ("name", "graph_json")}
        return await self._list(request, session, name=name, graph=text, status=answer.status,
                                problems={k: v for k, v in problems.items() if v},
                                failure=f"The flow was not created: {answer.error['message']}")

    async def _show(self, api: Api, session: Session, flow_id: str, *, name: str | None = None,
                    graph_text: str | None = None, errors: list[dict[str, str]] | None = None,
                    preview: dict[str, Any] | None = None, problems: dict[str, str] | None = None,
                    status: int = 200, notice: str | None = None, failure: str | None = None,
                    unsaved: bool = False) -> Response[str]:
        answer = await api.get(f"/v1/flows/{flow_id}")
        if not answer.ok:
            return page("error.html", session, status=answer.status, active="flows", title="Flow",
                        heading="This flow cannot be shown", message=answer.error["message"],
                        code=answer.error["code"], back="/app/flows")
        flow = answer.body
        text = graph_text if graph_text is not None else json.dumps(flow["graph_json"], indent=2)
        shown, _ = _graph(text)
        errors = errors or []
        on_nodes: dict[str, list[str]] = {}
        for error in errors:
            on_nodes.setdefault(error["node_id"], []).append(error["message"])
        svg = draw(shown if shown is not None else flow["graph_json"], on_nodes, title=f"The graph of {flow['name']}")
        return page("flows/show.html", session, status=status, active="flows", title=flow["name"], flow=flow,
                    name=name if name is not None else flow["name"], graph=text, svg=svg, errors=errors,
                    preview=preview, problems=problems or {}, notice=notice, failure=failure, unsaved=unsaved)

    @get("/{flow_id:str}")
    async def show(self, request: Request[Any, Any, Any], session: Session, flow_id: str,
                   done: str | None = None) -> Response[str]:
        return await self._show(session.api, session, flow_id, notice=DONE.get(done or ""))

    @post("/{flow_id:str}")
    async def save(self, request: Request[Any, Any, Any], session: Session, flow_id: str) -> Response[str]:
        api = session.api
        name, text = _posted(session)
        graph, problem = _graph(text)
        if problem:
            return await self._show(api, session, flow_id, name=name, graph_text=text, status=422,
                                    problems={"graph_json": problem}, failure="Nothing was saved: fix the graph.")
        current = await api.get(f"/v1/flows/{flow_id}")
        changed: dict[str, Any] = {}
        if current.ok and name != current.body["name"]:
            changed["name"] = name
        if current.ok and graph != current.body["graph_json"]:
            changed["graph_json"] = graph
        if current.ok and not changed:
            return redirect(request, f"/app/flows/{flow_id}?done=unchanged")
        answer = await api.patch(f"/v1/flows/{flow_id}", json=changed)
        if answer.ok:
            return redirect(request, f"/app/flows/{flow_id}?done=saved")
        problems = {k: answer.problem_for(k) or "" for k in ("name", "graph_json")}
        return await self._show(api, session, flow_id, name=name, graph_text=text, status=answer.status,
                                problems={k: v for k, v in problems.items() if v},
                                failure=f"Nothing was saved: {answer.error['message']}")

    @post("/{flow_id:str}/preview")
    async def preview(self, request: Request[Any, Any, Any], session: Session, flow_id: str) -> Response[str]:
        api = session.api
        name, text = _posted(session)
        graph, problem = _graph(text)
        if problem:
            return await self._show(api, session, flow_id, name=name, graph_text=text, status=422,
                                    problems={"graph_json": problem}, failure="The graph could not be previewed.")
        answer = await api.post(f"/v1/flows/{flow_id}/preview", json={"graph_json": graph})
        if not answer.ok:
            return await self._show(api, session, flow_id, name=name, graph_text=text, status=answer.status,
                                    problems={"graph_json": answer.problem_for("graph_json") or ""},
                                    failure=f"The graph could not be previewed: {answer.error['message']}")
        return await self._show(api, session, flow_id, name=name, graph_text=text, errors=answer.body["errors"],
                                preview=answer.body, unsaved=True)

    @post("/{flow_id:str}/publish")
    async def publish(self, request: Request[Any, Any, Any], session: Session, flow_id: str) -> Response[str]:
        api = session.api
        answer = await api.post(f"/v1/flows/{flow_id}/publish")
        if answer.ok:
            return redirect(request, f"/app/flows/{flow_id}?done=published")
        errors = publish_errors(answer) if answer.status == 422 else []
        return await self._show(api, session, flow_id, errors=errors, status=answer.status,
                                failure="Not published: " + ("the saved draft does not compile; the problems are "
                                                              "marked on the graph." if errors else answer.error["message"]))


PAGES: list[Any] = [FlowsPages]
