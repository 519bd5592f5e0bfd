"""Operability: liveness, readiness (database and projection lag) and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from entrypoints.bootstrap import Container
from entrypoints.http.blocking import run_blocking

MAX_READY_LAG = 1000


@get("/healthz", summary="Liveness", tags=["operations"])
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


def _readiness(container: Container) -> tuple[bool, dict[str, Any]]:
    checks: dict[str, Any] = {}
    ready = True
    try:
        heads = {app.name: app.head() for app in (container.accounts, container.calling)}
        checks["database"] = "ok"
    except Exception as exc:  # any driver error means not ready
        return False, {"database": f"unavailable: {type(exc).__name__}"}
    followers = {**container.projections, **container.reactors}
    for name, worker in followers.items():
        lag = max(0, heads.get(worker.app.name, 0) - worker.position)
        checks[f"follower:{name}"] = {"lag": lag, "error": type(worker.error).__name__ if worker.error else None}
        if lag > MAX_READY_LAG or worker.error is not None:
            ready = False
    return ready, checks


@get("/readyz", summary="Readiness: database reachable, projections caught up", tags=["operations"])
async def readyz(container: Container) -> Response[dict[str, Any]]:
    ready, checks = await run_blocking(_readiness, container)
    return Response({"status": "ready" if ready else "not_ready", "checks": checks}, status_code=200 if ready else 503)


@get("/metrics", summary="Prometheus metrics", tags=["operations"], include_in_schema=False)
async def metrics(container: Container) -> Response[bytes]:
    return Response(generate_latest(container.metrics_registry), media_type=CONTENT_TYPE_LATEST)
