"""``Client`` and ``AsyncClient``: one connection pool each, the resources as attributes.

    with Client() as client:                       # the key from CALLWRIGHT_API_KEY or OPENPHN_API_KEY
        call = client.calls.create(to="+442071838750", objective="…", outcome_schema={…},
                                   consent_type="prior_express", mode="simulated")
        print(client.calls.wait(call.call_id).outcome)
"""

from __future__ import annotations

from types import TracebackType

import httpx

from callwright_client import async_resources as aio
from callwright_client import resources
from callwright_client._async import AsyncSender
from callwright_client._config import resolve
from callwright_client._sync import SyncSender


class Client:
    """A synchronous client of a callwright server. ``api_key`` defaults to ``CALLWRIGHT_API_KEY``
    (then ``OPENPHN_API_KEY``), ``base_url`` to ``CALLWRIGHT_BASE_URL`` (then
    ``http://127.0.0.1:8000``). Failed requests are retried up to ``max_retries`` times, waiting
    ``backoff * 2**attempt`` s or the server's ``Retry-After`` (at most 30 s). ``transport`` replaces
    httpx's (tests, proxies, custom TLS)."""

    def __init__(self, api_key: str | None = None, base_url: str | None = None, *, timeout: float = 30.0,
                 max_retries: int = 3, backoff: float = 0.5, transport: httpx.BaseTransport | None = None) -> None:
        self._settings = resolve(api_key, base_url, timeout, max_retries, backoff)
        sender = SyncSender(self._settings, transport)
        self._sender = sender
        self.calls = resources.Calls(sender)
        self.numbers = resources.Numbers(sender)
        self.webhooks = resources.Webhooks(sender)
        self.api_keys = resources.ApiKeys(sender)
        self.suppressions = resources.Suppressions(sender)
        self.templates = resources.Templates(sender)
        self.flows = resources.Flows(sender)
        self.analytics = resources.Analytics(sender)
        self.wizard = resources.Wizard(sender)
        self.push = resources.Push(sender)

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    def close(self) -> None:
        self._sender.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


class AsyncClient:
    """``Client`` for asyncio: the same constructor and resources, every method awaited and every
    list an async iterator (``async for call in client.calls.list(): …``)."""

    def __init__(self, api_key: str | None = None, base_url: str | None = None, *, timeout: float = 30.0,
                 max_retries: int = 3, backoff: float = 0.5,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._settings = resolve(api_key, base_url, timeout, max_retries, backoff)
        sender = AsyncSender(self._settings, transport)
        self._sender = sender
        self.calls = aio.AsyncCalls(sender)
        self.numbers = aio.AsyncNumbers(sender)
        self.webhooks = aio.AsyncWebhooks(sender)
        self.api_keys = aio.AsyncApiKeys(sender)
        self.suppressions = aio.AsyncSuppressions(sender)
        self.templates = aio.AsyncTemplates(sender)
        self.flows = aio.AsyncFlows(sender)
        self.analytics = aio.AsyncAnalytics(sender)
        self.wizard = aio.AsyncWizard(sender)
        self.push = aio.AsyncPush(sender)

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    async def close(self) -> None:
        await self._sender.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.close()
