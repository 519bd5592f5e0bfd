"""Operability: liveness, readiness (database and follower lag) and Prometheus metrics."""

from __future__ import annotations

from litestar import Response, get
from litestar.openapi.datastructures import ResponseSpec
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from entrypoints.bootstrap import Container
from entrypoints.http.readiness import readiness
from entrypoints.http.schemas.operations import Liveness, ReadinessResponse


@get("/healthz", summary="Liveness", tags=["operations"])
async def healthz() -> Liveness:
    return Liveness(status="ok")


NOT_READY = ResponseSpec(
    ReadinessResponse, description="not_ready: the database is unreachable or did not answer within its timeout"
)


@get("/readyz", summary="Readiness: ready, degraded (serving, a follower behind) or not ready",
     tags=["operations"], responses={503: NOT_READY},
     description="200 for ready and degraded (a load balancer keeps the instance), 503 only for not_ready. "
                 "Answers within a second whatever the database does.")
async def readyz(container: Container) -> Response[ReadinessResponse]:
    answer = await readiness(container)
    return Response(answer, status_code=503 if answer.status == "not_ready" else 200)


@get("/metrics", summary="Prometheus metrics", tags=["operations"], include_in_schema=False)
async def metrics(container: Container) -> Response[bytes]:
    return Response(generate_latest(container.metrics_registry), media_type=CONTENT_TYPE_LATEST)
