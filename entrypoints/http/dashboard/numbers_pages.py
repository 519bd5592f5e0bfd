"""Numbers: the tenant's lines (``GET /v1/numbers``, a bring-your-own registration) and one
number's settings form (every field ``PATCH /v1/numbers/{id}`` takes, an opening-hours editor and
an SMS template preview that saves nothing). Everything goes through the API's own routes."""

from __future__ import annotations

import zoneinfo
from functools import lru_cache
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import Provide

from entrypoints.http.dashboard import numbers_form as forms
from entrypoints.http.dashboard.api import Api
from entrypoints.http.dashboard.numbers_sms import preview
from entrypoints.http.dashboard.render import fragment, page, redirect
from entrypoints.http.dashboard.session import Session, current_session


@lru_cache(maxsize=1)
def time_zones() -> list[str]:
    return sorted(zone for zone in zoneinfo.available_timezones() if "/" in zone and not zone.startswith("Etc/"))


def _problem_finder(problems: list[tuple[str, str]]) -> Any:
    def problem(name: str, exact: bool = False) -> str:
        """Every message at (or, unless ``exact``, under) the form field ``name``, joined."""
        return "; ".join(msg for where, msg in problems
                         if where == name or (not exact and where.startswith(name + ".")))
    return problem


class NumbersPages(Controller):
    path = "/app/numbers"
    include_in_schema = False
    dependencies = {"session": Provide(current_session)}

    @get("/")
    async def numbers(self, request: Request[Any, Any, Any], session: Session,
                      cursor: str | None = None) -> Response[str]:
        answer = await session.api.get("/v1/numbers", params={"limit": 50, **({"cursor": cursor} if cursor else {})})
        return page("numbers/list.html", session, active="numbers", title="Numbers",
                    numbers=answer.body if answer.ok else [], next_cursor=answer.headers.get("x-next-cursor"),
                    failure=None if answer.ok else answer.error["message"], e164="", problem=None)

    @post("/byo")
    async def register(self, request: Request[Any, Any, Any], session: Session) -> Response[str]:
        api = session.api
        e164 = session.field("e164")
        answer = await api.post("/v1/numbers/byo", json={"e164": e164})
        if answer.ok:
            return redirect(request, f"/app/numbers/{answer.body['id']}?saved=registered")
        listed = await api.get("/v1/numbers", params={"limit": 50})
        return page("numbers/list.html", session, status=answer.status, active="numbers", title="Numbers",
                    numbers=listed.body if listed.ok else [], next_cursor=listed.headers.get("x-next-cursor"),
                    failure=f"The number was not registered: {answer.error['message']}", e164=e164,
                    problem=answer.problem_for("e164") or answer.error["message"])

    async def _form(self, api: Api, session: Session, number: dict[str, Any], state: dict[str, Any], *,
                    original: str, problems: list[tuple[str, str]] | None = None, status: int = 200,
                    notice: str | None = None, failure: str | None = None) -> Response[str]:
        flows = await api.get("/v1/flows", params={"state": "published", "limit": 200})
        choices = [(f["id"], f["name"]) for f in flows.body["data"]] if flows.ok else []
        if state["flow_id"] and state["flow_id"] not in {flow_id for flow_id, _ in choices}:
            choices.append((state["flow_id"], state["flow_id"]))
        return page("numbers/edit.html", session, status=status, active="numbers", title=f"Number {number['e164']}",
                    number=number, v=state, original=original, problems=problems or [],
                    problem=_problem_finder(problems or []), flows=choices, zones=time_zones(), days=forms.DAYS,
                    engines=forms.ENGINES, overflow_actions=forms.OVERFLOW_ACTIONS,
                    voicemail_modes=forms.VOICEMAIL_MODES, route_actions=forms.ROUTE_ACTIONS, sms_ops=forms.SMS_OPS,
                    notice=notice, failure=failure)

    @get("/{number_id:str}")
    async def edit(self, request: Request[Any, Any, Any], session: Session, number_id: str,
                   saved: str | None = None) -> Response[str]:
        api = session.api
        answer = await api.get(f"/v1/numbers/{number_id}")
        if not answer.ok:
            return page("error.html", session, status=answer.status, active="numbers", title="Number",
                        heading="This number cannot be shown", message=answer.error["message"],
                        code=answer.error["code"])
        notice = {"saved": "Saved.", "unchanged": "Nothing was changed: the form matched the saved settings.",
                  "registered": "Registered. Configure the line below."}.get(saved or "")
        return await self._form(api, session, answer.body, forms.state_from_number(answer.body),
                                original=forms.original(answer.body), notice=notice)

    @post("/{number_id:str}")
    async def save(self, request: Request[Any, Any, Any], session: Session, number_id: str) -> Response[str]:
        api = session.api
        current = await api.get(f"/v1/numbers/{number_id}")
        if not current.ok:
            return page("error.html", session, status=current.status, active="numbers", title="Number",
                        heading="This number cannot be changed", message=current.error["message"],
                        code=current.error["code"])
        state, changed, problems = forms.changes(session.form)
        original = session.form.get("original") or forms.original(current.body)
        if problems:
            return await self._form(api, session, current.body, state, original=original, problems=problems,
                                    status=422, failure="Nothing was saved: fix the fields marked below.")
        if not changed:
            return redirect(request, f"/app/numbers/{number_id}?saved=unchanged")
        answer = await api.patch(f"/v1/numbers/{number_id}", json=changed)
        if answer.ok:
            return redirect(request, f"/app/numbers/{number_id}?saved=saved")
        found = answer.problems or [("", answer.error["message"])]
        return await self._form(api, session, current.body, state, original=original, problems=found,
                                status=answer.status, failure="Nothing was saved: " + (
                                    "fix the fields marked below." if answer.problems else answer.error["message"]))

    @post("/{number_id:str}/sms-preview")
    async def sms_preview(self, request: Request[Any, Any, Any], session: Session, number_id: str) -> Response[str]:
        found = await preview(session.api, number_id, session.form)
        return fragment("numbers/sms_preview.html", session, preview=found)


PAGES: list[Any] = [NumbersPages]
