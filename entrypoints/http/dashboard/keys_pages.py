"""API keys: the list (prefixes only), create and rotate (the new secret shown once), revoke after a
confirmation, and the audit trail (``/app/keys/audit``).

Everything goes through ``/auth/api-keys`` and ``/v1/audit-events`` as the session's user, so the
scopes a key may have, the 24 h grace of a rotation and every refusal are the API's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from litestar import Controller, Request, Response, get, post
from litestar.di import Provide

from domain.accounts.scopes import ALL_SCOPES
from entrypoints.http.dashboard.api import Answer, Api
from entrypoints.http.dashboard.render import page
from entrypoints.http.dashboard.session import Session, current_session

Page = Response[str]
# What each scope opens (SPEC.md Authentication §5, and the additive scopes of domain/accounts/scopes.py).
SCOPE_HELP = {
    "calls:create": "place calls and batches",
    "calls:read": "list and read calls, CSV export",
    "webhooks:read": "list webhook endpoints and deliveries",
    "webhooks:write": "create, retry and delete webhooks",
    "numbers:write": "configure numbers, SMS preview",
    "providers:write": "verify carrier credentials, choose the caller number",
    "audit:read": "read the audit trail",
    "tenants:write": "change the account's settings",
    "templates:read": "read templates",
    "templates:write": "define and delete templates",
    "flows:read": "read and preview flows",
    "flows:write": "draft and publish flows",
    "push:read": "list push devices",
    "push:write": "subscribe and acknowledge push notifications",
}
KEY_EVENTS = ("api_key.issued", "api_key.rotated", "api_key.rotated_key_used", "api_key.revoked")
AUDIT_PAGE = 25


def rows_of(answer: Answer) -> list[dict[str, Any]]:
    if not answer.ok:
        return []
    body = answer.body
    rows = body.get("data", []) if isinstance(body, dict) else body
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []


async def _numbers(api: Api) -> list[dict[str, Any]]:
    """The tenant's numbers, to restrict a key to some of them (empty when the API refuses)."""
    return [{"id": n.get("id"), "e164": n.get("e164"), "label": n.get("friendly_name") or n.get("label") or ""}
            for n in rows_of(await api.get("/v1/numbers", params={"limit": 100}))]


def _blank_form() -> dict[str, Any]:
    return {"name": "", "access": "all", "scopes": [], "number_ids": []}


async def _list_page(request: Request[Any, Any, Any], session: Session, *, status: int = 200,
                     form: dict[str, Any] | None = None, problems: dict[str, str | None] | None = None,
                     **context: Any) -> Page:
    api = session.api
    listed = await api.get("/auth/api-keys")
    numbers = await _numbers(api)
    by_id = {n["id"]: n["e164"] for n in numbers}
    failure = context.pop("failure", None) or (None if listed.ok else listed.error["message"])
    return page("keys/list.html", session, status=status, active="keys", title="API keys", keys=rows_of(listed),
                numbers=numbers, number_names=by_id, scopes=[(s, SCOPE_HELP.get(s, "")) for s in ALL_SCOPES],
                form=form or _blank_form(), problems=problems or {}, failure=failure, **context)


class KeysPages(Controller):
    path = "/app/keys"
    include_in_schema = False
    dependencies = {"session": Provide(current_session)}

    @get("/")
    async def keys(self, request: Request[Any, Any, Any], session: Session) -> Page:
        return await _list_page(request, session)

    @post("/create")
    async def create(self, request: Request[Any, Any, Any], session: Session) -> Page:
        form = {"name": session.field("name"), "access": session.field("access") or "all",
                "scopes": session.fields("scopes"),
                "number_ids": session.fields("number_ids")}
        body: dict[str, Any] = {}
        if form["name"]:
            body["name"] = form["name"]
        if form["access"] == "chosen":
            body["scopes"] = form["scopes"]
        if form["number_ids"]:
            body["number_ids"] = form["number_ids"]
        answer = await session.api.post("/auth/api-keys", json=body)
        if not answer.ok:
            problems = {name: answer.problem_for(name) for name in ("name", "scopes", "number_ids")}
            return await _list_page(request, session, status=answer.status, form=form, problems=problems,
                                    failure=answer.error["message"])
        created = answer.body
        return await _list_page(request, session, status=201, created=created,
                                notice=f"Key {created.get('name') or created['prefix']} created.")

    @post("/{key_id:str}/rotate")
    async def rotate(self, request: Request[Any, Any, Any], session: Session, key_id: str) -> Page:
        answer = await session.api.post(f"/auth/api-keys/{quote(key_id, safe='')}/rotate")
        if not answer.ok:
            return await _list_page(request, session, status=answer.status, failure=answer.error["message"])
        return await _list_page(request, session, status=201, rotated=answer.body,
                                notice="Key rotated: use the new secret below.")

    @post("/{key_id:str}/revoke")
    async def revoke(self, request: Request[Any, Any, Any], session: Session, key_id: str) -> Page:
        answer = await session.api.delete(f"/auth/api-keys/{quote(key_id, safe='')}")
        if not answer.ok:
            return await _list_page(request, session, status=answer.status, failure=answer.error["message"])
        return await _list_page(request, session, notice="Key revoked: it no longer authenticates.")

    @get("/audit")
    async def audit(self, request: Request[Any, Any, Any], session: Session, type: str | None = None,  # noqa: A002
                    subject: str | None = None, cursor: str | None = None) -> Page:
        params: dict[str, Any] = {"limit": AUDIT_PAGE}
        chosen = {"type": (type or "").strip(), "subject": (subject or "").strip()}
        params.update({k: v for k, v in chosen.items() if v})
        if cursor:
            params["cursor"] = cursor
        answer = await session.api.get("/v1/audit-events", params=params)
        following = answer.body.get("next_cursor") if answer.ok and isinstance(answer.body, dict) else None
        return page("keys/audit.html", session, status=200 if answer.ok else answer.status, active="keys",
                    title="Audit events", events=rows_of(answer), next_cursor=following, chosen=chosen,
                    paged=bool(cursor), types=KEY_EVENTS, failure=None if answer.ok else answer.error["message"])


PAGES: list[Any] = [KeysPages]
