"""Analytics (issue 21 item 6): ``/app/analytics`` draws the five reports of ``/v1/analytics``
as charts with their data tables, for a range and filters, optionally beside the prior period;
``/app/analytics/<report>.csv`` hands over the API's own CSV as a download.

Everything comes from the API's routes (``Api``), so its scopes, defaults and refusals are the
page's: a refused range is shown in the API's words and the form keeps what was typed.
"""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from typing import Any
from urllib.parse import urlencode

from litestar import Controller, Request, Response, get
from litestar.di import Provide

from entrypoints.http.dashboard import analytics_reports as reports
from entrypoints.http.dashboard.api import Answer
from entrypoints.http.dashboard.render import HEADERS, page
from entrypoints.http.dashboard.session import Session, current_session

REPORTS = ("volume-by-status", "latency-percentiles", "cost-breakdown", "top-failures", "outcome-quality")
# (field, label, choices): the filters every report takes (docs/analytics.md), as the form offers them.
CHOICES = (
    ("direction", "Direction", ("outbound", "inbound")),
    ("mode", "Mode", ("live", "simulated")),
    ("voice_engine", "Voice engine", ("alpha_25", "alpha_31", "beta_think_fast")),
)
INTERVALS = ("hour", "day", "week")
FIELDS = ("start", "end", "interval", "direction", "mode", "voice_engine", "number_id", "compare")


def _form(request: Request[Any, Any, Any]) -> dict[str, str]:
    """What the form sent (GET), stripped; absent fields are empty."""
    return {name: str(request.query_params.get(name) or "").strip() for name in FIELDS}


def _instant(value: str, *, end: bool) -> str:
    """A date of the form as the API's instant: ``From`` at its 00:00 UTC, ``To`` included (the next
    day's 00:00 UTC, the API's end being exclusive). Anything else goes to the API as typed."""
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return value
    return f"{day + timedelta(days=1) if end else day}T00:00:00Z"


def api_params(form: dict[str, str], report: str) -> dict[str, str]:
    params = {name: form[name] for name in ("direction", "mode", "voice_engine", "number_id") if form[name]}
    if form["start"]:
        params["start"] = _instant(form["start"], end=False)
    if form["end"]:
        params["end"] = _instant(form["end"], end=True)
    if form["interval"] and report == "volume-by-status":
        params["interval"] = form["interval"]
    if form["compare"] == "prior":
        params["compare"] = "prior"
    return params


def _panels(answers: dict[str, Answer]) -> list[reports.Panel]:
    body = {name: answer.body for name, answer in answers.items()}
    latency = reports.split(body["latency-percentiles"])[0]
    total = latency["data"][0]["calls"] if latency["data"] else None
    return [reports.volume(body["volume-by-status"]), reports.latency(body["latency-percentiles"]),
            reports.cost(body["cost-breakdown"]), reports.failures(body["top-failures"], total),
            reports.quality(body["outcome-quality"])]


def _window(answer: Answer) -> dict[str, Any]:
    current, prior, _ = reports.split(answer.body)
    return {"start": current["start"], "end": current["end"],
            "prior_start": prior["start"] if prior else None, "prior_end": prior["end"] if prior else None}


def _show(session: Session, form: dict[str, str], answers: dict[str, Answer], *, status: int = 200) -> Response[str]:
    refused = next((answer for answer in answers.values() if not answer.ok), None)
    query = urlencode({name: value for name, value in form.items() if value})
    common: dict[str, Any] = {"form": form, "choices": CHOICES, "intervals": INTERVALS, "query": query}
    if refused is not None:
        problems = {name: refused.problem_for(name) for name in ("start", "end", "interval", "number_id")}
        return page("analytics/index.html", session, status=422 if refused.status == 422 else status,
                    active="analytics", title="Analytics", panels=[], window=None, problems=problems,
                    failure=f"The reports could not be drawn: {refused.error['message']}", **common)
    return page("analytics/index.html", session, status=status, active="analytics", title="Analytics",
                panels=_panels(answers), window=_window(answers["volume-by-status"]), problems={}, **common)


class AnalyticsPages(Controller):
    path = "/app/analytics"
    include_in_schema = False
    dependencies = {"session": Provide(current_session)}

    @get("/")
    async def analytics(self, request: Request[Any, Any, Any], session: Session) -> Response[str]:
        form = _form(request)
        api = session.api
        found = await asyncio.gather(*(api.get(f"/v1/analytics/{name}", params=api_params(form, name))
                                       for name in REPORTS))
        return _show(session, form, dict(zip(REPORTS, found)))

    @get("/{name:str}")
    async def csv(self, request: Request[Any, Any, Any], session: Session, name: str) -> Response[str]:
        """``<report>.csv``: the API's CSV of the report, as a download named after it."""
        report = name.removesuffix(".csv")
        if not name.endswith(".csv") or report not in REPORTS:
            return page("error.html", session, status=404, active="analytics", title="Not found",
                        heading="No such report", message=f"There is no report named {report}.", code="not_found",
                        back="/app/analytics")
        form = _form(request)
        answer = await session.api.get(f"/v1/analytics/{report}.csv", params=api_params(form, report))
        if not answer.ok:
            return _show(session, form, {report: answer})
        return Response(answer.body, media_type="text/csv; charset=utf-8", headers={
            **HEADERS, "Content-Disposition": f'attachment; filename="{report}.csv"'})


PAGES: list[Any] = [AnalyticsPages]
