"""The Litestar application: routes, middleware, error mapping, docs and lifespan."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from prometheus_client import CollectorRegistry
from psycopg_pool import AsyncConnectionPool

from adapters.postgres.event_appender import AsyncEventAppender
from adapters.postgres.request_gate import RequestGate
from entrypoints.bootstrap import Container
from entrypoints.http.auth import AuthMiddleware
from entrypoints.http.body import JsonBodyRequest
from entrypoints.http.context import HttpMetrics, RequestContext, VoiceMetrics
from entrypoints.http.controllers.accounts import AccountsController
from entrypoints.http.controllers.admin import AdminController
from entrypoints.http.controllers.api_keys import ApiKeysController
from entrypoints.http.controllers.audit import AuditController
from entrypoints.http.controllers.calls import CallsController
from entrypoints.http.controllers.numbers import NumbersController
from entrypoints.http.controllers.carrier import CarrierCallbacks
from entrypoints.http.controllers.providers import ProvidersController
from entrypoints.http.controllers.suppressions import SuppressionsController
from entrypoints.http.controllers.tenants import TenantsController
from entrypoints.http.controllers.webhooks import WebhooksController
from entrypoints.http.controllers.health import healthz, metrics, readyz
from entrypoints.http.dependencies import provide_container
from entrypoints.http.docs import assets_router, describe_errors, openapi_config
from entrypoints.http.errors import EXCEPTION_HANDLERS
from entrypoints.http.voice_sockets import relay_socket, stream_socket

VERSION = "0.1.0"


def create_app(container: Container, *, owns_container: bool = False, start_projections: bool = True) -> Litestar:
    registry = CollectorRegistry()
    container.metrics_registry = registry  # type: ignore[attr-defined]
    container.voice_metrics = VoiceMetrics(registry)  # type: ignore[attr-defined]

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        assert container.database is not None, "the HTTP app needs PostgreSQL"
        pool = AsyncConnectionPool(container.database.conninfo(), min_size=1, max_size=10, open=False,
                                   kwargs={"autocommit": True})
        await pool.open(wait=True, timeout=30)
        container.read_pool = pool
        container.request_gate = RequestGate(
            pool, schema=container.database.schema, accounts_events=container.accounts.recorder.events_table_name,
            calling_events=container.calling.recorder.events_table_name,
        )
        calling = container.calling
        appender = AsyncEventAppender(pool, schema=container.database.schema, table=calling.recorder.events_table_name)
        await appender.create_function()
        calling.enable_loop_commits(appender.append)
        if start_projections:
            container.start_projections()
        try:
            yield
        finally:
            # New commits go back to the thread committer; the loop keeps running (and the pool
            # stays open) while the followers stop, so commits already handed to it still land.
            calling.disable_loop_commits()
            container.request_gate = None
            if owns_container:
                await asyncio.to_thread(container.close)
            else:
                await asyncio.to_thread(lambda: [worker.stop() for worker in container.projections.values()])
            await pool.close()
            container.read_pool = None

    app = Litestar(
        route_handlers=[
            AccountsController,
            ApiKeysController,
            AuditController,
            AdminController,
            CallsController,
            NumbersController,
            CarrierCallbacks,
            relay_socket,
            stream_socket,
            ProvidersController,
            SuppressionsController,
            TenantsController,
            WebhooksController,
            healthz,
            readyz,
            metrics,
            assets_router(),
        ],
        dependencies={"container": Provide(provide_container, sync_to_thread=False)},
        middleware=[DefineMiddleware(AuthMiddleware, container=container)],
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=openapi_config(VERSION),
        lifespan=[lifespan],
        request_max_body_size=1_000_000,
        request_class=JsonBodyRequest,
        debug=False,
    )
    describe_errors(app.openapi_schema)
    app.state.container = container
    app.asgi_handler = RequestContext(app.asgi_handler, HttpMetrics(registry))
    return app


def create_app_from_env() -> Litestar:
    """Factory for the ASGI server: settings and database from the environment."""
    from entrypoints.bootstrap import bootstrap
    from entrypoints.logging import configure
    from entrypoints.settings import Settings

    import os

    settings = Settings.from_env()
    configure(settings.log_level, settings.log_format, final=True)
    # With Kafka, reactors and the webhook dispatcher run in `callwright worker` processes.
    reactors = not os.environ.get("CALLWRIGHT_KAFKA_BOOTSTRAP", "").strip()
    return create_app(bootstrap(settings, reactors=reactors), owns_container=True)


