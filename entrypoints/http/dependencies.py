"""Dependencies shared by controllers: the container, the calling principal, the client address,
and the read-your-writes wait before a view is read."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.datastructures import State

from application.principal import Principal
from entrypoints.bootstrap import Container
from entrypoints.http.auth import principal_of
from entrypoints.http.blocking import run_blocking


def provide_container(state: State) -> Container:
    return state.container


def provide_principal(request: Request[Any, Any, Any], container: Container) -> Principal:
    """Takes ``container`` only to be resolved after it: Litestar resolves independent dependencies
    of a handler concurrently in an anyio task group, which costs more than resolving both."""
    del container
    return principal_of(request)


def client_ip(request: Request[Any, Any, Any]) -> str:
    return request.client.host if request.client else "unknown"


async def views_caught_up(container: Container) -> None:
    """Read-your-writes before reading a view: wait (bounded) only when one is behind."""
    if not container.views_current():
        await run_blocking(container.wait_for_views)
