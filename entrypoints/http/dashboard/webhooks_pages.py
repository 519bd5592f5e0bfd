"""Webhooks: the endpoints (create and rotate show the signing secret once; disable, re-enable,
delete after a confirmation) and one endpoint's deliveries with every attempt and a retry button.

Each action is a ``/v1/webhooks`` route called as the session's user: the URL rules (https, no
private address unless the server allows them) and every refusal are the API's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from litestar import Controller, Request, Response, get, post
from litestar.di import Provide

from domain.webhooks.endpoint import EMITTED
from entrypoints.http.dashboard.keys_pages import rows_of
from entrypoints.http.dashboard.render import page, redirect
from entrypoints.http.dashboard.session import Session, current_session

Page = Response[str]
DELIVERIES_PAGE = 20
EVENT_HELP = {"call.completed": "a call reached completed or failed, with its outcome"}


def _hook(endpoint_id: str) -> str:
    return f"/v1/webhooks/{quote(endpoint_id, safe='')}"


def _state(endpoint: dict[str, Any]) -> str:
    if endpoint.get("deleted_at"):
        return "deleted"
    return "active" if endpoint.get("active") else "disabled"


async def _list_page(request: Request[Any, Any, Any], session: Session, *, status: int = 200,
                     form: dict[str, Any] | None = None, problems: dict[str, str | None] | None = None,
                     **context: Any) -> Page:
    listed = await session.api.get("/v1/webhooks")
    endpoints = [{**e, "state": _state(e)} for e in rows_of(listed)]
    failure = context.pop("failure", None) or (None if listed.ok else listed.error["message"])
    return page("webhooks/list.html", session, status=status, active="webhooks", title="Webhooks",
                endpoints=endpoints, events=[(e, EVENT_HELP.get(e, "")) for e in EMITTED],
                form=form or {"url": "", "description": "", "events": list(EMITTED)}, problems=problems or {},
                failure=failure, **context)


async def _deliveries_page(request: Request[Any, Any, Any], session: Session, endpoint_id: str, *,
                           cursor: str | None = None, status_filter: str | None = None, code: int = 200,
                           **context: Any) -> Page:
    api = session.api
    endpoint = await api.get(_hook(endpoint_id))
    if not endpoint.ok:
        return page("error.html", session, status=endpoint.status, active="webhooks", title="Webhook",
                    heading="No such webhook endpoint", message=endpoint.error["message"],
                    code=endpoint.error["code"], back="/app/webhooks")
    params: dict[str, Any] = {"limit": DELIVERIES_PAGE}
    if cursor:
        params["cursor"] = cursor
    if status_filter:
        params["status"] = status_filter
    listed = await api.get(_hook(endpoint_id) + "/deliveries", params=params)
    body = listed.body if listed.ok and isinstance(listed.body, dict) else {}
    failure = context.pop("failure", None) or (None if listed.ok else listed.error["message"])
    return page("webhooks/deliveries.html", session, status=code, active="webhooks", title="Webhook deliveries",
                endpoint={**endpoint.body, "state": _state(endpoint.body)}, deliveries=rows_of(listed),
                total=body.get("total"), next_cursor=body.get("next_cursor"), paged=bool(cursor),
                status_filter=status_filter or "", failure=failure, **context)


class WebhooksPages(Controller):
    path = "/app/webhooks"
    include_in_schema = False
    dependencies = {"session": Provide(current_session)}

    @get("/")
    async def endpoints(self, request: Request[Any, Any, Any], session: Session) -> Page:
        return await _list_page(request, session)

    @post("/create")
    async def create(self, request: Request[Any, Any, Any], session: Session) -> Page:
        form = {"url": session.field("url"), "description": session.field("description"),
                "events": session.fields("events")}
        body: dict[str, Any] = {"url": form["url"], "events": form["events"]}
        if form["description"]:
            body["description"] = form["description"]
        answer = await session.api.post("/v1/webhooks", json=body)
        if not answer.ok:
            problems = {name: answer.problem_for(name) for name in ("url", "description", "events")}
            failure = None if any(problems.values()) else answer.error["message"]
            return await _list_page(request, session, status=answer.status, form=form, problems=problems,
                                    failure=failure or "The endpoint was not created: see the field marked below.")
        return await _list_page(request, session, status=201, created=answer.body,
                                notice="Endpoint created.")

    @post("/{endpoint_id:str}/rotate")
    async def rotate(self, request: Request[Any, Any, Any], session: Session, endpoint_id: str) -> Page:
        answer = await session.api.post(_hook(endpoint_id) + "/rotate-secret")
        if not answer.ok:
            return await _list_page(request, session, status=answer.status, failure=answer.error["message"])
        return await _list_page(request, session, status=201, rotated=answer.body,
                                notice="Signing secret rotated.")

    @post("/{endpoint_id:str}/active")
    async def set_active(self, request: Request[Any, Any, Any], session: Session, endpoint_id: str) -> Page:
        active = session.field("active") == "true"
        answer = await session.api.patch(_hook(endpoint_id), json={"active": active})
        if not answer.ok:
            return await _list_page(request, session, status=answer.status, failure=answer.error["message"])
        return await _list_page(request, session,
                                notice=f"Endpoint {'enabled' if active else 'disabled'}.")

    @post("/{endpoint_id:str}/delete")
    async def remove(self, request: Request[Any, Any, Any], session: Session, endpoint_id: str) -> Page:
        answer = await session.api.delete(_hook(endpoint_id))
        if not answer.ok:
            return await _list_page(request, session, status=answer.status, failure=answer.error["message"])
        return await _list_page(request, session, notice="Endpoint deleted; its delivery history stays readable.")

    @get("/{endpoint_id:str}")
    async def deliveries(self, request: Request[Any, Any, Any], session: Session, endpoint_id: str,
                         cursor: str | None = None, status: str | None = None, retried: str | None = None) -> Page:
        notice = "Retry requested: the delivery is sent again shortly." if retried else None
        return await _deliveries_page(request, session, endpoint_id, cursor=cursor, status_filter=status,
                                      notice=notice)

    @post("/{endpoint_id:str}/deliveries/{delivery_id:str}/retry")
    async def retry(self, request: Request[Any, Any, Any], session: Session, endpoint_id: str,
                    delivery_id: str) -> Page:
        retry = _hook(endpoint_id) + f"/deliveries/{quote(delivery_id, safe='')}/retry"
        answer = await session.api.post(retry)
        if not answer.ok:
            return await _deliveries_page(request, session, endpoint_id, code=answer.status,
                                          failure=answer.error["message"])
        return redirect(request, f"/app/webhooks/{quote(endpoint_id)}?retried={quote(delivery_id)}")


PAGES: list[Any] = [WebhooksPages]
