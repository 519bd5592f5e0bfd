"""Dependencies shared by controllers: the container, the calling principal, the client address."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.datastructures import State

from application.principal import Principal
from entrypoints.bootstrap import Container
from entrypoints.http.auth import principal_of


def provide_container(state: State) -> Container:
    return state.container


def provide_principal(request: Request[Any, Any, Any]) -> Principal:
    return principal_of(request)


def client_ip(request: Request[Any, Any, Any]) -> str:
    return request.client.host if request.client else "unknown"
