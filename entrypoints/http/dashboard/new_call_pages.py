"""New call (live, or a simulated test call) and a batch from pasted numbers.

Both forms go through the API's own routes (``POST /v1/calls``, ``POST /v1/calls/batch``) as the
session's user, each rendering with a fresh ``Idempotency-Key`` so a form sent twice makes its
calls once. A refusal brings the same form back as typed, with the API's problems beside the
fields they are about; a created call opens its page, a batch shows the per-item 207 results.
"""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import Provide

from entrypoints.http.dashboard.new_call_batch import read_numbers
from entrypoints.http.dashboard.new_call_form import CHOICES, Filled, call_body, place, read_form, shared_body
from entrypoints.http.dashboard.render import page, redirect
from entrypoints.http.dashboard.session import Session, current_session

Page = Response[str]


def _headers(filled: Filled) -> dict[str, str]:
    return {"Idempotency-Key": filled.key} if filled.key else {}


def _with_a_row(filled: Filled) -> Filled:
    if not filled.rows:  # the builder always shows a row to fill in
        filled.rows = Filled.blank().rows
    return filled


def _form_page(session: Session, filled: Filled, *, status: int = 200) -> Page:
    failure = " ".join(filled.others) or (
        "The call was not placed: see the problems marked below." if filled.wrong else None)
    filled.key = str(uuid.uuid4())  # a new rendering is a new request: it gets its own key
    return page("new_call/new_call.html", session, status=status, active="new", title="New call",
                f=_with_a_row(filled), failure=failure, **CHOICES)


def _batch_page(session: Session, filled: Filled, *, status: int = 200, result: Any = None) -> Page:
    failure = " ".join(filled.others) or (
        "The batch was not sent: see the problems marked below." if filled.wrong else None)
    filled.key = str(uuid.uuid4())
    return page("new_call/batch.html", session, status=status, active="new", title="Batch of calls",
                f=_with_a_row(filled), failure=failure, result=result, **CHOICES)


class NewCallPages(Controller):
    path = "/app"
    include_in_schema = False
    dependencies = {"session": Provide(current_session)}

    @get("/new-call")
    async def new_call_form(self, session: Session) -> Page:
        return _form_page(session, Filled.blank())

    @post("/new-call")
    async def new_call(self, request: Request[Any, Any, Any], session: Session) -> Page:
        filled = read_form(session)
        body = call_body(filled)
        if filled.wrong:  # a form-shape fault: the API is not asked
            return _form_page(session, filled, status=422)
        answer = await session.api.post("/v1/calls", json=body, headers=_headers(filled))
        if answer.ok:
            return redirect(request, f"/app/calls/{answer.body['call_id']}?placed=1")  # the call page drops the draft
        place(filled, answer)
        return _form_page(session, filled, status=answer.status)

    @get("/batch")
    async def batch_form(self, session: Session) -> Page:
        return _batch_page(session, Filled.blank())

    @post("/batch")
    async def batch(self, request: Request[Any, Any, Any], session: Session) -> Page:
        filled = read_form(session)
        pasted = read_numbers(filled.values["numbers"])
        if pasted.problem:
            filled.add("numbers", pasted.problem)
        body = {**shared_body(filled), "items": pasted.items}
        if filled.wrong:
            return _batch_page(session, filled, status=422)
        answer = await session.api.post("/v1/calls/batch", json=body, headers=_headers(filled))
        if not answer.ok:
            place(filled, answer, pasted.lines)
            return _batch_page(session, filled, status=answer.status)
        rows = [{**item, "line": line} for item, line in zip(answer.body.get("items", []), pasted.lines, strict=False)]
        result = {"accepted": answer.body.get("accepted", 0), "rejected": answer.body.get("rejected", 0), "rows": rows}
        return _batch_page(session, filled, result=result)


PAGES: list[Any] = [NewCallPages]
