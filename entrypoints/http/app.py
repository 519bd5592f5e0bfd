"""The Litestar application: routes, middleware, error mapping, docs and lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.middleware import DefineMiddleware

from entrypoints.bootstrap import ServerContainer, http_services, serving
from entrypoints.http.auth import AuthMiddleware, policy_for
from entrypoints.http.body import MAX_BODY_BYTES, JsonBodyRequest
from entrypoints.http.context import RequestContext
from entrypoints.http.controllers.accounts import AccountsController
from entrypoints.http.controllers.analytics import analytics_router
from entrypoints.http.controllers.admin import AdminController
from entrypoints.http.controllers.api_keys import ApiKeysController
from entrypoints.http.controllers.audit import AuditController
from entrypoints.http.controllers.email_links import EmailLinkPages
from entrypoints.http.controllers.calls import CallsController
from entrypoints.http.controllers.numbers import NumbersController
from entrypoints.http.controllers.carrier import CarrierCallbacks
from entrypoints.http.controllers.providers import ProvidersController
from entrypoints.http.controllers.push import PushController
from entrypoints.http.controllers.suppressions import SuppressionsController
from entrypoints.http.controllers.flows import FlowsController
from entrypoints.http.controllers.templates import TemplatesController
from entrypoints.http.controllers.tenants import TenantsController
from entrypoints.http.controllers.webhooks import WebhooksController
from entrypoints.http.controllers.wizard import WizardController
from entrypoints.http.controllers.health import healthz, metrics, readyz
from entrypoints.http.dashboard.routes import dashboard_routes
from entrypoints.http.docs import assets_router, describe_access, describe_errors, describe_webhooks, openapi_config
from entrypoints.http.docs_contract import describe_contract
from entrypoints.http.errors import EXCEPTION_HANDLERS
from entrypoints.http.mcp_mount import HostedTools, mount
from entrypoints.http.media_stream import stream_socket
from entrypoints.http.voice_sockets import relay_socket

VERSION = "0.1.0"


def create_app(container: ServerContainer, *, owns_container: bool = False, start_projections: bool = True) -> Litestar:
    served = http_services(container)
    services = served.services

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with serving(container, served, owns_container=owns_container, start_followers=start_projections):
            yield

    tools = HostedTools(services.admission.accounts, services.settings.public_base_url, lambda: app)
    app = Litestar(
        route_handlers=[
            AccountsController,
            analytics_router,
            EmailLinkPages,
            ApiKeysController,
            AuditController,
            AdminController,
            CallsController,
            NumbersController,
            CarrierCallbacks,
            relay_socket,
            stream_socket,
            ProvidersController,
            PushController,
            SuppressionsController,
            TemplatesController,
            FlowsController,
            TenantsController,
            WebhooksController,
            WizardController,
            healthz,
            readyz,
            metrics,
            assets_router(),
            mount(tools),
            *dashboard_routes(),
        ],
        middleware=[DefineMiddleware(AuthMiddleware, admission=services.admission)],
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=openapi_config(VERSION),
        lifespan=[lifespan, tools.lifespan],
        request_max_body_size=MAX_BODY_BYTES,
        request_class=JsonBodyRequest,
        debug=False,
        logging_config=None,  # the process's logging is ours (entrypoints/logging.py): JSON lines
    )
    describe_errors(app.openapi_schema)
    describe_access(app.openapi_schema, lambda path: policy_for(path) is not None)
    describe_webhooks(app.openapi_schema)
    describe_contract(app.openapi_schema)
    app.state.services = services
    app.asgi_handler = RequestContext(app.asgi_handler, services.http_metrics,
                                      wait_seconds=services.settings.database_wait_seconds)
    return app


def create_app_from_env() -> Litestar:
    """Factory for the ASGI server: settings and database from the environment."""
    from entrypoints.bootstrap import bootstrap_http
    from entrypoints.logging import command_failed, configure
    from entrypoints.settings import Settings

    settings = Settings.from_env()
    configure(settings.log_level, settings.log_format, final=True)
    try:
        return create_app(bootstrap_http(settings), owns_container=True)
    except Exception as exc:  # one process.failed line, not multiprocessing's plain traceback
        command_failed("serve", exc)
        raise SystemExit(1) from None
