"""``/v1/analytics/*``: the five reports over the tenant's terminal calls, each as JSON and as a
streamed CSV (SPEC.md Analytics; docs/analytics.md). Read from ``call_facts_v1`` only."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from litestar import Router, get
from litestar.handlers import HTTPRouteHandler
from litestar.di import Provide
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from litestar.response import Stream

from application.analytics import report_query
from application.principal import Principal
from domain.accounts.scopes import CALLS_READ
from domain.analytics.reports import COST, FAILURES, LATENCY, QUALITY, REPORTS, VOLUME, ReportQuery
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_calling, service_and_principal
from entrypoints.http.schemas import analytics as shapes
from entrypoints.http.schemas.webhooks import ErrorBody
from entrypoints.http.services import CallingService
from projections.call_facts import compare
from projections.call_facts.reports import run

ERRORS = {403: ResponseSpec(ErrorBody, description="The key lacks the scope (insufficient_scope)")}
Dimension = Literal["voice_engine", "direction", "mode", "number_id", "status", "error_code", "country"]
CSV_MEDIA = "text/csv; charset=utf-8"


def _query_of(report: str) -> Callable[..., Awaitable[ReportQuery]]:
    async def query(
        service: CallingService,
        principal: Principal,
        start: Annotated[datetime | None, Parameter(description="Inclusive, ISO 8601 with a zone; default end - 7 days")] = None,
        end: Annotated[datetime | None, Parameter(description="Exclusive, ISO 8601 with a zone; default now")] = None,
        interval: Annotated[Literal["hour", "day", "week"] | None, Parameter(
            description="UTC buckets (weeks from Monday); volume-by-status defaults to day, the others to none")] = None,
        group_by: Annotated[Dimension | None, Parameter(
            description="A row per value: the 8 with the most calls, the rest as Other")] = None,
        direction: Literal["outbound", "inbound"] | None = None,
        mode: Literal["live", "simulated"] | None = None,
        voice_engine: Literal["alpha_25", "alpha_31", "beta_think_fast"] | None = None,
        number_id: Annotated[str | None, Parameter(max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$",
                                                   description="A number's id (GET /v1/numbers)")] = None,
        compare: Annotated[Literal["prior"] | None, Parameter(
            description="prior: answer {current, prior, delta_pct}, prior being the window of equal length "
                        "before start")] = None,
    ) -> ReportQuery:
        built = report_query(report, principal.tenant_id, service.calling.ports.clock(), start=start, end=end,
                             interval=interval, group_by=group_by, compare=compare == "prior",
                             filters={"direction": direction, "mode": mode, "voice_engine": voice_engine,
                                      "number_id": number_id})
        await service.reads.caught_up()
        return built

    return query


async def _json(service: CallingService, report: ReportQuery) -> Any:
    current, prior = await run(service.reads.pool, report)
    return compare.compared(current, prior)


async def _csv(service: CallingService, report: ReportQuery, name: str) -> Stream:
    current, prior = await run(service.reads.pool, report)
    return Stream(compare.csv_lines(compare.columns(report), current, prior), media_type=CSV_MEDIA,
                  headers={"Content-Disposition": f'attachment; filename="{name}.csv"'})


SUMMARIES = {
    VOLUME: "Terminal calls per bucket and status (with group_by: per group too)",
    LATENCY: "Exact p50/p90/p95/p99 of call duration and of time to first agent audio",
    COST: "Voice, extraction and total cost: sums and per-call means (decimal strings)",
    FAILURES: "Failed calls by error_code (top 8, the rest as Other) with their share of all calls",
    QUALITY: "Completion rate, confidence histogram and mean, optional fields filled, extraction failures",
}
ANSWERS = {
    VOLUME: shapes.VolumeReport | shapes.VolumeComparison,
    LATENCY: shapes.LatencyReport | shapes.LatencyComparison,
    COST: shapes.CostReport | shapes.CostComparison,
    FAILURES: shapes.FailuresReport | shapes.FailuresComparison,
    QUALITY: shapes.QualityReport | shapes.QualityComparison,
}


def _handlers(report: str) -> list[HTTPRouteHandler]:
    """``/<report>`` and ``/<report>.csv``, their query parameters those of ``_query_of(report)``."""

    async def answer(service: CallingService, report_query: ReportQuery) -> Any:
        return await _json(service, report_query)

    async def as_csv(service: CallingService, report_query: ReportQuery) -> Stream:
        return await _csv(service, report_query, report)

    answer.__annotations__ = {"service": CallingService, "report_query": ReportQuery, "return": ANSWERS[report]}
    as_csv.__annotations__ = {"service": CallingService, "report_query": ReportQuery, "return": Stream}
    common: dict[str, Any] = {"guards": [requires_scope(CALLS_READ)], "responses": ERRORS,
                              "dependencies": {"report_query": Provide(_query_of(report))}}
    return [get(f"/{report}", summary=SUMMARIES[report], **common)(answer),  # ids: docs_operations.py
            get(f"/{report}.csv", summary=f"{report} as CSV (streamed)", media_type="text/csv", **common)(as_csv)]


analytics_router = Router(
    path="/v1/analytics", tags=["analytics"], route_handlers=[h for report in REPORTS for h in _handlers(report)],
    dependencies=service_and_principal(provide_calling),
)
