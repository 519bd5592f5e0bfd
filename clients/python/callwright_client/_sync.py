"""Sending a ``Spec`` with ``httpx.Client``: retries, backoff, errors, pages and downloads."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import httpx

from callwright_client._config import Settings
from callwright_client._retry import delay, error_is_retryable, retry_after_seconds, status_is_retryable
from callwright_client._sinks import Sink, Target
from callwright_client._spec import Operation, Spec, next_params
from callwright_client.errors import APIConnectionError, error_from_response
from callwright_client.types import Page

T = TypeVar("T")
Consume = Callable[[httpx.Response], Any]


def connection_error(spec: Spec, error: httpx.TransportError) -> APIConnectionError:
    return APIConnectionError(f"{spec.method} {spec.path} got no answer: {type(error).__name__}: {error}")


class SyncSender:
    """One ``httpx.Client`` (its connection pool) and the retry policy of ``_retry``."""

    def __init__(self, settings: Settings, transport: httpx.BaseTransport | None) -> None:
        self.settings = settings
        self.http = httpx.Client(base_url=settings.base_url, headers=settings.headers(),
                                 timeout=settings.timeout, transport=transport)

    def close(self) -> None:
        self.http.close()

    def run(self, operation: Operation[T]) -> T:
        return operation.parse(self.send(operation.spec))

    def pages(self, page: Callable[[dict[str, Any]], Operation[Page[T]]], params: Mapping[str, Any]) -> Iterator[T]:
        """Every item of a paged list, fetching each page when the one before is used up."""
        current: dict[str, Any] | None = dict(params)
        while current is not None:
            found = self.run(page(current))
            yield from found.data
            current = next_params(current, found)

    def download(self, spec: Spec, target: Target) -> int:
        """Stream the answer into ``target``, a path or a binary stream (see _sinks); the bytes written."""
        sink = Sink(target)

        def consume(response: httpx.Response) -> int:
            written = 0
            with sink.attempt() as out:
                try:
                    for chunk in response.iter_bytes():
                        out.write(chunk)
                        written += len(chunk)
                except httpx.TransportError as exc:
                    if written and not sink.rewritable:
                        raise connection_error(spec, exc) from exc
                    raise
            return written

        return int(self.send(spec, consume))

    def send(self, spec: Spec, consume: Consume | None = None) -> Any:
        """The answer (or what ``consume`` made of a successful one); an error once retries are spent."""
        settings = self.settings
        attempt = 0
        while True:
            try:
                response, result = self._attempt(spec, consume)
            except httpx.TransportError as exc:
                if attempt < settings.max_retries and error_is_retryable(exc, spec.may_replay):
                    time.sleep(delay(attempt, settings.backoff))
                    attempt += 1
                    continue
                raise connection_error(spec, exc) from exc
            if response.status_code < 400:
                return response if consume is None else result
            if attempt < settings.max_retries and status_is_retryable(response, spec.may_replay):
                time.sleep(delay(attempt, settings.backoff, retry_after_seconds(response.headers)))
                attempt += 1
                continue
            raise error_from_response(response)

    def _attempt(self, spec: Spec, consume: Consume | None) -> tuple[httpx.Response, Any]:
        request = self.http.build_request(spec.method, spec.path, **spec.request_kwargs())
        response = self.http.send(request, stream=True)
        try:
            if consume is None or response.status_code >= 400:
                response.read()
                return response, None
            return response, consume(response)
        finally:
            response.close()
