"""The calls pages: the list with every filter of ``GET /v1/calls`` and its live updates, and the call
page (facts, status timeline, transcript, typed outcome, costs, recording, SMS, webhook deliveries
with a retry button). Everything is read through the API's own routes as the session (``Api``)."""

from __future__ import annotations

import time
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import Provide

from entrypoints.http.dashboard import calls_live
from entrypoints.http.dashboard.api import Answer
from entrypoints.http.dashboard.calls_detail import call_context, call_deliveries, deliveries_context
from entrypoints.http.dashboard.calls_filters import (
    MAIN, MORE, chosen, digest, duration, outcome_summary, query_string, without_paging,
)
from entrypoints.http.dashboard.render import fragment, is_htmx, page, redirect
from entrypoints.http.dashboard.session import Session, current_session

Page = Response[str]
AnyRequest = Request[Any, Any, Any]
WATCH_SECONDS = 60  # how long the deliveries section looks for the attempt a retry asked for


async def _listing(request: AnyRequest, session: Session) -> tuple[Answer, dict[str, Any]]:
    values = chosen(request.query_params)
    answer = await session.api.get("/v1/calls", params=values)
    plain = without_paging(values)
    body = answer.body if answer.ok else {}
    following = body.get("next_cursor")
    onward = {k: v for k, v in plain.items() if k != "offset"}  # the cursor carries the offset
    refused_more = not answer.ok and any(answer.problem_for(f.name) for f in MORE)
    context = {
        "main": MAIN, "more": MORE, "values": values, "more_open": refused_more or any(f.name in values for f in MORE),
        "rows": body.get("data", []), "total": body.get("total"),
        "problem": answer.problem_for if not answer.ok else (lambda _name: None),
        "refused": None if answer.ok else answer.error["message"],
        "older": f"/app/calls?{query_string(onward, cursor=following)}" if following else None,
        "newest": f"/app/calls?{query_string(plain)}" if "cursor" in values else None,
        "live": f"/app/calls/live?{query_string(values, seen=digest(body))}",
        "refresh": f"/app/calls/rows?{query_string(values)}",
        "summary": outcome_summary, "duration": duration,
    }
    return answer, context


def _listing_refused(answer: Answer) -> str:
    """A 422 is about the filters; any other refusal (pending review, rate limit) is said as it is."""
    if answer.status == 422:
        return f"The filters were refused: {answer.error['message']}"
    return f"The calls could not be listed: {answer.error['message']}"


class CallsPages(Controller):
    path = "/app/calls"
    include_in_schema = False
    dependencies = {"session": Provide(current_session)}

    @get("/")
    async def calls(self, request: AnyRequest, session: Session) -> Page:
        answer, context = await _listing(request, session)
        status = 200 if answer.ok else answer.status
        return page("calls/list.html", session, status=status, active="calls", title="Calls",
                    failure=None if answer.ok else _listing_refused(answer), **context)

    @get("/rows")
    async def rows(self, request: AnyRequest, session: Session) -> Page:
        _answer, context = await _listing(request, session)
        return fragment("calls/_rows.html", session, **context)

    @get("/live", media_type="text/event-stream")
    async def live(self, request: AnyRequest, session: Session) -> Any:
        values = chosen(request.query_params)
        first = await session.api.get("/v1/calls", params=values)
        if first.status in (400, 422):  # filters the API refuses will never list anything
            return calls_live.ended()
        seen = request.query_params.get("seen")
        probe = calls_live.list_probe(session.api, values)
        return calls_live.stream(request, session, probe, seen if isinstance(seen, str) else None)

    @get("/{call_id:str}")
    async def call(self, request: AnyRequest, session: Session, call_id: str) -> Page:
        answer, context = await call_context(session.api, call_id)
        if not answer.ok:
            return _refused(session, answer)
        notice = "A retry was requested; its attempt is listed below in a moment." \
            if request.query_params.get("retried") else None
        live = f"/app/calls/{call_id}/live?seen={calls_live.call_digest(context['call'])}"
        return page("calls/call.html", session, active="calls", title=f"Call {call_id}", notice=notice, live=live,
                    placed=bool(request.query_params.get("placed")), **context)

    @get("/{call_id:str}/body")
    async def body(self, request: AnyRequest, session: Session, call_id: str) -> Page:
        answer, context = await call_context(session.api, call_id)
        if not answer.ok:
            return fragment("calls/_refused.html", session, status=answer.status, message=answer.error["message"])
        return fragment("calls/_body.html", session, **context)

    @get("/{call_id:str}/live", media_type="text/event-stream")
    async def call_live(self, request: AnyRequest, session: Session, call_id: str) -> Any:
        api = session.api
        first = await api.get(f"/v1/calls/{call_id}")
        asked = request.query_params.get("seen")
        seen = asked if isinstance(asked, str) else calls_live.call_digest(first.body) if first.ok else None
        # A call already final ends the stream at once, unless it changed after the page was drawn
        # (it ended between the render and this connection): then the stream says so first.
        if not first.ok or (first.body.get("status") in ("completed", "failed")
                            and calls_live.call_digest(first.body) == seen):
            return calls_live.ended()
        return calls_live.stream(request, session, calls_live.call_probe(api, call_id), seen)

    @get("/{call_id:str}/deliveries")
    async def deliveries(self, request: AnyRequest, session: Session, call_id: str) -> Page:
        watch = request.query_params.get("watch")
        return await _deliveries(request, session, call_id, watch if isinstance(watch, str) else "")

    @post("/{call_id:str}/deliveries/{endpoint_id:str}/{delivery_id:str}/retry", status_code=200)
    async def retry(self, request: AnyRequest, session: Session, call_id: str, endpoint_id: str,
                    delivery_id: str) -> Page:
        api = session.api
        before, _ = await call_deliveries(api, call_id, None) if is_htmx(request) else ([], None)
        answer = await api.post(f"/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}/retry")
        if not is_htmx(request):
            if answer.ok:
                return redirect(request, f"/app/calls/{call_id}?retried={delivery_id}#deliveries")
            refused, context = await call_context(api, call_id)
            if not refused.ok:
                return _refused(session, refused)
            return page("calls/call.html", session, status=answer.status, active="calls", title=f"Call {call_id}",
                        failure=f"The retry was refused: {answer.error['message']}",
                        live=f"/app/calls/{call_id}/live", **context)
        attempts = next((len(d.get("attempts", [])) for d in before if d.get("delivery_id") == delivery_id), 0)
        watch = f"{delivery_id}:{attempts}:{int(time.time()) + WATCH_SECONDS}" if answer.ok else ""
        notice = f"Retry of {delivery_id} requested: its new attempt is listed below within seconds." if answer.ok else None
        failure = None if answer.ok else f"The retry was refused: {answer.error['message']}"
        return await _deliveries(request, session, call_id, watch, notice=notice, failure=failure)


async def _deliveries(request: AnyRequest, session: Session, call_id: str, watch: str, *,
                      notice: str | None = None, failure: str | None = None) -> Page:
    api = session.api
    record = await api.get(f"/v1/calls/{call_id}")
    if not record.ok:
        return fragment("calls/_refused.html", session, status=record.status, message=record.error["message"])
    found, error = await call_deliveries(api, call_id, record.body.get("created_at"))
    return fragment("calls/_deliveries.html", session, notice=notice, failure=failure,
                    **deliveries_context(record.body, found, error, _still_watching(watch, found)))


def _still_watching(watch: str, found: list[dict[str, Any]]) -> str:
    """``delivery_id:attempts:deadline``: kept until that delivery has a new attempt, or the deadline."""
    delivery_id, _, rest = watch.partition(":")
    attempts, _, deadline = rest.partition(":")
    if not (attempts.isdigit() and deadline.isdigit()) or time.time() > int(deadline):
        return ""
    now = next((len(d.get("attempts", [])) for d in found if d.get("delivery_id") == delivery_id), 0)
    busy = any(d.get("delivery_id") == delivery_id and d.get("status") == "pending" for d in found)
    return watch if now <= int(attempts) or busy else ""


def _refused(session: Session, answer: Answer) -> Page:
    """The API's refusal of ``GET /v1/calls/{id}`` as a page: a 404 (or a malformed id) is "no such call"."""
    missing = answer.status in (404, 422)
    return page("error.html", session, status=404 if missing else answer.status, active="calls",
                title="Call not found" if missing else "Call unavailable",
                heading="No such call (404)" if missing else f"This call cannot be shown ({answer.status})",
                message=(f"There is no call with this id in your account. The API said: {answer.error['message']}"
                         if missing else answer.error["message"]),
                code=answer.error["code"], back="/app/calls")


PAGES: list[Any] = [CallsPages]
