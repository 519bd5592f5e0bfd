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


async def views_caught_up(container: Container, *, accounts_log: bool = False) -> None:
    """Read-your-writes before reading a view: wait (bounded) only when one is behind. With
    ``accounts_log``, the accounts views wait for every account change committed before the request,
    by any process (one coalesced read of the head), not only this process's and the watcher's."""
    if accounts_log and container.fresh_reads is not None:
        head = await container.fresh_reads.accounts_head()
        container.accounts.known_head = max(container.accounts.known_head, head)
    if not container.views_current():
        await run_blocking(container.wait_for_views)
