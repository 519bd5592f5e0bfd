"""Templates: reusable call configurations (``/v1/templates``): the list, a create form, one
template's page and its deletion. The API has no update, so "edit" opens the create form filled
from a template: the changed copy is saved as a new template (the old one can then be deleted)."""

from __future__ import annotations

import json
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import Provide

from entrypoints.http.dashboard.render import page, redirect
from entrypoints.http.dashboard.session import Session, current_session

TOOLS = (("end_call", "End the call"), ("press_keys", "Press keypad keys"), ("transfer_call", "Transfer the call"))
ENGINES = ("alpha_25", "alpha_31")
EXAMPLE_SCHEMA = {"caller_name": {"type": "string"},
                  "confirmed": {"type": "boolean", "description": "Whether the appointment is confirmed"}}
TEXT = ("name", "description", "objective", "context", "consent_type", "voice_engine", "language")


def _blank() -> dict[str, Any]:
    return {"name": "", "description": "", "objective": "", "context": "", "consent_type": "", "voice_engine": "",
            "language": "en-US", "tools": ["end_call"], "outcome_schema": json.dumps(EXAMPLE_SCHEMA, indent=2)}


def _from_template(template: dict[str, Any]) -> dict[str, Any]:
    values = {name: "" if template.get(name) is None else str(template[name]) for name in TEXT}
    values["name"] = f"{values['name']} (copy)"
    values["tools"] = [tool.get("name") for tool in template.get("tools") or []]
    values["outcome_schema"] = json.dumps(template.get("outcome_schema") or {}, indent=2)
    return values


def _body(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    body: dict[str, Any] = {name: values[name] for name in ("name", "objective", "language")}
    body.update({name: values[name] or None for name in ("description", "context", "consent_type", "voice_engine")})
    body["tools"] = [{"name": tool} for tool in values["tools"]]
    try:
        body["outcome_schema"] = json.loads(values["outcome_schema"])
    except ValueError as exc:
        return body, {"outcome_schema": f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"}
    return body, {}


class TemplatesPages(Controller):
    path = "/app/templates"
    include_in_schema = False
    dependencies = {"session": Provide(current_session)}

    async def _list(self, request: Request[Any, Any, Any], session: Session, *, values: dict[str, Any],
                    problems: dict[str, str] | None = None, status: int = 200, cursor: str | None = None,
                    notice: str | None = None, failure: str | None = None, clear_draft: bool = False) -> Response[str]:
        answer = await session.api.get("/v1/templates", params={"limit": 50, **({"cursor": cursor} if cursor else {})})
        if not answer.ok and failure is None:
            failure = answer.error["message"]
        return page("templates/list.html", session, status=status, active="templates", title="Templates",
                    templates=answer.body["data"] if answer.ok else [],
                    next_cursor=answer.body.get("next_cursor") if answer.ok else None, form=values,
                    problems=problems or {}, tools=TOOLS, engines=ENGINES, notice=notice, failure=failure,
                    clear_draft=clear_draft)

    @get("/")
    async def templates(self, request: Request[Any, Any, Any], session: Session, cursor: str | None = None,
                        copy: str | None = None, done: str | None = None) -> Response[str]:
        values = _blank()
        failure = None
        if copy:
            found = await session.api.get(f"/v1/templates/{copy}")
            if found.ok:
                values = _from_template(found.body)
            else:
                failure = found.error["message"]
        notice = {"created": "Template created.", "deleted": "Template deleted."}.get(done or "")
        return await self._list(request, session, values=values, cursor=cursor, notice=notice, failure=failure,
                                clear_draft=bool(done))

    @post("/")
    async def create(self, request: Request[Any, Any, Any], session: Session) -> Response[str]:
        values = {name: (session.form.get(name) or "").replace("\r\n", "\n").strip() for name in (*TEXT, "outcome_schema")}
        values["tools"] = [tool for tool in session.form.getall("tools", []) if isinstance(tool, str)]
        body, problems = _body(values)
        if problems:
            return await self._list(request, session, values=values, problems=problems, status=422,
                                    failure="The template was not created: fix the fields marked below.")
        answer = await session.api.post("/v1/templates", json=body)
        if answer.ok:
            return redirect(request, "/app/templates?done=created")
        problems = {name: answer.problem_for(name) for name in (*TEXT, "outcome_schema", "tools")}
        return await self._list(request, session, values=values, status=answer.status,
                                problems={k: v for k, v in problems.items() if v},
                                failure=f"The template was not created: {answer.error['message']}")

    @get("/{template_id:str}")
    async def show(self, request: Request[Any, Any, Any], session: Session, template_id: str) -> Response[str]:
        answer = await session.api.get(f"/v1/templates/{template_id}")
        if not answer.ok:
            return page("error.html", session, status=answer.status, active="templates", title="Template",
                        heading="This template cannot be shown", message=answer.error["message"],
                        code=answer.error["code"], back="/app/templates")
        return page("templates/show.html", session, active="templates", title=answer.body["name"], t=answer.body)

    @post("/{template_id:str}/delete")
    async def delete(self, request: Request[Any, Any, Any], session: Session, template_id: str) -> Response[str]:
        answer = await session.api.delete(f"/v1/templates/{template_id}")
        if answer.ok:
            return redirect(request, "/app/templates?done=deleted")
        return page("error.html", session, status=answer.status, active="templates", title="Template",
                    heading="The template was not deleted", message=answer.error["message"],
                    code=answer.error["code"], back=f"/app/templates/{template_id}")


PAGES: list[Any] = [TemplatesPages]
