"""Operability: liveness, readiness (database and follower lag) and Prometheus metrics."""

from __future__ import annotations

from litestar import Response, get
from litestar.datastructures import State
from litestar.openapi.datastructures import ResponseSpec
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from entrypoints.http.dependencies import provide_readiness, service_from, services_of
from entrypoints.http.readiness import readiness
from entrypoints.http.schemas.operations import Liveness, ReadinessResponse
from entrypoints.http.services import Readiness


@get("/healthz", summary="Liveness", tags=["operations"])
async def healthz() -> Liveness:
    return Liveness(status="ok")


NOT_READY = ResponseSpec(
    ReadinessResponse, description="not_ready: the database is unreachable or did not answer within its timeout"
)


@get("/readyz", summary="Readiness: ready, degraded (serving, a follower behind) or not ready",
     tags=["operations"], responses={503: NOT_READY}, dependencies=service_from(provide_readiness),
     description="200 for ready and degraded (a load balancer keeps the instance), 503 only for not_ready. "
                 "Answers within a second whatever the database does.")
async def readyz(service: Readiness) -> Response[ReadinessResponse]:
    answer = await readiness(service)
    return Response(answer, status_code=503 if answer.status == "not_ready" else 200)


@get("/metrics", summary="Prometheus metrics", tags=["operations"], include_in_schema=False)
async def metrics(state: State) -> Response[bytes]:
    return Response(generate_latest(services_of(state).metrics_registry), media_type=CONTENT_TYPE_LATEST)
