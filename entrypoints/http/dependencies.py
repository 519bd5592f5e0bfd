"""Dependencies shared by controllers: each controller's ``service``, the calling principal and the
client address.

A controller declares ``service`` (one of ``services.py``) and ``principal`` together, through
``service_and_principal(provider)``: the principal is resolved after the service, so a handler's dependencies are
one chain (Litestar resolves independent dependencies of a handler concurrently in an anyio task
group, which costs more than resolving both in turn).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar import Request
from litestar.datastructures import State
from litestar.di import Provide

from application.principal import Principal
from entrypoints.http.auth import principal_of
from entrypoints.http.services import (
    AccountsService,
    CallingService,
    CarrierService,
    HttpServices,
    NumberingService,
    ProvidersService,
    PushService,
    Readiness,
    WebhooksService,
)


def services_of(state: State) -> HttpServices:
    services: HttpServices = state.services
    return services


def provide_calling(state: State) -> CallingService:
    return services_of(state).calling


def provide_accounts(state: State) -> AccountsService:
    return services_of(state).accounts


def provide_webhooks(state: State) -> WebhooksService:
    return services_of(state).webhooks


def provide_push(state: State) -> PushService:
    return services_of(state).push


def provide_providers(state: State) -> ProvidersService:
    return services_of(state).providers


def provide_carrier(state: State) -> CarrierService:
    return services_of(state).carrier


def provide_numbering(state: State) -> NumberingService:
    return services_of(state).numbering


def provide_readiness(state: State) -> Readiness:
    return services_of(state).readiness


def provide_principal(request: Request[Any, Any, Any], service: Any) -> Principal:
    """Takes ``service`` only to be resolved after it (one chain of dependencies)."""
    del service
    return principal_of(request)


def service_from(provider: Callable[[State], Any]) -> dict[str, Provide]:
    """A controller's ``service`` from ``provider``."""
    return {"service": Provide(provider, sync_to_thread=False)}


def service_and_principal(provider: Callable[[State], Any]) -> dict[str, Provide]:
    """A controller's ``service`` from ``provider``, and the ``principal`` resolved after it."""
    return {**service_from(provider), "principal": Provide(provide_principal, sync_to_thread=False)}


def client_ip(request: Request[Any, Any, Any]) -> str:
    return request.client.host if request.client else "unknown"
