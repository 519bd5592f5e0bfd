"""Sending a ``Spec`` with ``httpx.AsyncClient``: the same policy as ``_sync``, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

import httpx

from callwright_client._config import Settings
from callwright_client._retry import delay, error_is_retryable, retry_after_seconds, status_is_retryable
from callwright_client._sinks import Sink, Target
from callwright_client._spec import Operation, Spec, next_params
from callwright_client._sync import connection_error
from callwright_client.errors import error_from_response
from callwright_client.types import Page

T = TypeVar("T")
Consume = Callable[[httpx.Response], Awaitable[Any]]


class AsyncSender:
    """One ``httpx.AsyncClient`` (its connection pool) and the retry policy of ``_retry``."""

    def __init__(self, settings: Settings, transport: httpx.AsyncBaseTransport | None) -> None:
        self.settings = settings
        self.http = httpx.AsyncClient(base_url=settings.base_url, headers=settings.headers(),
                                      timeout=settings.timeout, transport=transport)

    async def close(self) -> None:
        await self.http.aclose()

    async def run(self, operation: Operation[T]) -> T:
        return operation.parse(await self.send(operation.spec))

    async def pages(self, page: Callable[[dict[str, Any]], Operation[Page[T]]],
                    params: Mapping[str, Any]) -> AsyncIterator[T]:
        """Every item of a paged list, fetching each page when the one before is used up."""
        current: dict[str, Any] | None = dict(params)
        while current is not None:
            found = await self.run(page(current))
            for item in found.data:
                yield item
            current = next_params(current, found)

    async def download(self, spec: Spec, target: Target) -> int:
        """Stream the answer into ``target``, a path or a binary stream (see _sinks); the bytes written."""
        sink = Sink(target)

        async def consume(response: httpx.Response) -> int:
            written = 0
            with sink.attempt() as out:
                try:
                    async for chunk in response.aiter_bytes():
                        out.write(chunk)
                        written += len(chunk)
                except httpx.TransportError as exc:
                    if written and not sink.rewritable:
                        raise connection_error(spec, exc) from exc
                    raise
            return written

        return int(await self.send(spec, consume))

    async def send(self, spec: Spec, consume: Consume | None = None) -> Any:
        """The answer (or what ``consume`` made of a successful one); an error once retries are spent."""
        settings = self.settings
        attempt = 0
        while True:
            try:
                response, result = await self._attempt(spec, consume)
            except httpx.TransportError as exc:
                if attempt < settings.max_retries and error_is_retryable(exc, spec.may_replay):
                    await asyncio.sleep(delay(attempt, settings.backoff))
                    attempt += 1
                    continue
                raise connection_error(spec, exc) from exc
            if response.status_code < 400:
                return response if consume is None else result
            if attempt < settings.max_retries and status_is_retryable(response, spec.may_replay):
                await asyncio.sleep(delay(attempt, settings.backoff, retry_after_seconds(response.headers)))
                attempt += 1
                continue
            raise error_from_response(response)

    async def _attempt(self, spec: Spec, consume: Consume | None) -> tuple[httpx.Response, Any]:
        request = self.http.build_request(spec.method, spec.path, **spec.request_kwargs())
        response = await self.http.send(request, stream=True)
        try:
            if consume is None or response.status_code >= 400:
                await response.aread()
                return response, None
            return response, await consume(response)
        finally:
            await response.aclose()
