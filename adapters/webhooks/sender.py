"""Sends one webhook attempt to an address checked by ``domain.webhooks.targets`` (ARCHITECTURE.md
§9, SSRF): resolved once per attempt, connected to that address only, no redirects, no proxies.

httpcore (httpx's own engine) is used directly: it has no redirect or environment-proxy logic to
switch off, and its network backend is the one seam where a socket's address is chosen. The URL
keeps the host name, so the Host header, TLS SNI and certificate checks name it.
"""

from __future__ import annotations

import asyncio
import contextvars
import ipaddress
import socket
import ssl
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from email.message import Message

import httpcore
import httpx

from domain.webhooks.address_policy import check_address, check_host
from domain.webhooks.targets import UNRESOLVABLE, Target, UnsafeTargetError, parse_target

Resolver = Callable[[str, int], Awaitable[list[str]]]

# A pool per endpoint URL (docs/decisions.md 45): httpcore scans every connection of a pool on each
# request, so one pool shared by every endpoint costs more per request the more connections it holds.
POOLS = 64  # the least recently used pool beyond these is closed
POOL_CONNECTIONS = 16  # per URL; the dispatcher keeps at most 8 attempts in flight per endpoint


async def system_resolver(host: str, port: int) -> list[str]:
    """All addresses of every family, in the system's preference order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class AttemptOutcome:
    status: int | None
    body: str
    latency_ms: int
    error: str | None
    blocked: bool
    address: str | None
    refused_code: str | None = None  # the URL policy refuses the target (not a resolution failure)


@dataclass(frozen=True)
class _Pin:
    host: str
    port: int
    address: str


# Set by the task sending an attempt; httpcore opens a pool connection inside that same task.
_PIN: contextvars.ContextVar[_Pin | None] = contextvars.ContextVar("webhook_pin", default=None)


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Opens sockets to the checked address of the current attempt, and fails closed without one."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                          ) -> httpcore.AsyncNetworkStream:
        pin = _PIN.get()
        if pin is None or (pin.host, pin.port) != (host, port):
            raise httpcore.ConnectError(f"no checked address for {host}:{port}")
        return await self._inner.connect_tcp(pin.address, port, timeout=timeout, local_address=local_address,
                                             socket_options=socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("webhooks never use Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class WebhookSender:
    """A connection pool per endpoint URL; keep-alive connections are keyed by host name and were
    opened to an address that passed the check when they were made."""

    def __init__(self, *, resolver: Resolver | None = None, allow_private: bool = False, allow_http: bool = False,
                 timeout: float = 10.0, body_cap: int = 2048, read_cap: int = 65536,
                 ssl_context: ssl.SSLContext | None = None,
                 network_backend: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._resolve = resolver or system_resolver
        self._allow_private = allow_private
        self._allow_http = allow_http
        self._timeout = timeout
        self._body_cap = body_cap
        self._read_cap = read_cap
        self._ssl_context = ssl_context or httpx.create_ssl_context(trust_env=False)
        self._backend = _PinnedBackend(network_backend or httpcore.AnyIOBackend())
        self._pools: OrderedDict[str, httpcore.AsyncConnectionPool] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()
        self._in_use: dict[httpcore.AsyncConnectionPool, int] = {}  # posts under way, per pool
        self._retired: set[httpcore.AsyncConnectionPool] = set()  # evicted while in use: closed after

    def _pool_for(self, url: str) -> httpcore.AsyncConnectionPool:
        pool = self._pools.get(url)
        if pool is None:
            pool = self._pools[url] = httpcore.AsyncConnectionPool(
                ssl_context=self._ssl_context, max_connections=POOL_CONNECTIONS,
                max_keepalive_connections=POOL_CONNECTIONS, keepalive_expiry=5.0, retries=0,
                network_backend=self._backend)
            while len(self._pools) > POOLS:
                _, oldest = self._pools.popitem(last=False)
                if self._in_use.get(oldest):
                    self._retired.add(oldest)  # a post still uses it: closed when the last one ends
                else:
                    self._close_later(oldest)
        else:
            self._pools.move_to_end(url)
        return pool

    def _close_later(self, pool: httpcore.AsyncConnectionPool) -> None:
        task = asyncio.get_running_loop().create_task(pool.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _send_on(self, url: str, target: Target, address: str, body: bytes, headers: dict[str, str],
                       started: float) -> AttemptOutcome:
        pool = self._pool_for(url)
        self._in_use[pool] = self._in_use.get(pool, 0) + 1
        try:
            return await self._send(pool, target, address, body, headers, started)
        finally:
            self._in_use[pool] -= 1
            if not self._in_use[pool]:
                del self._in_use[pool]
                if pool in self._retired:
                    self._retired.discard(pool)
                    self._close_later(pool)

    async def check(self, url: str) -> Target:
        """The normalized target, or UnsafeTargetError; used when an endpoint is created."""
        try:
            async with asyncio.timeout(self._timeout):
                target, _ = await self._checked(url)
        except TimeoutError:
            raise UnsafeTargetError(UNRESOLVABLE, "URL host did not resolve in time") from None
        return target

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> AttemptOutcome:
        """One attempt; network and SSRF problems come back as an outcome, never as an exception."""
        started = time.monotonic()
        address: str | None = None
        try:
            async with asyncio.timeout(self._timeout):
                target, addresses = await self._checked(url)
                address = addresses[0]
                return await self._send_on(url, target, address, body, headers, started)
        except UnsafeTargetError as exc:
            refused = exc.code if exc.code != UNRESOLVABLE else None  # a name that does not resolve may later
            return _failed(started, f"blocked: {exc.message}", exc.address, blocked=True, refused_code=refused)
        except (TimeoutError, httpcore.TimeoutException):
            return _failed(started, "timeout", address)
        except (httpcore.NetworkError, httpcore.ProtocolError, OSError) as exc:
            return _failed(started, _describe(exc), address)

    async def aclose(self) -> None:
        pools, self._pools = [*self._pools.values(), *self._retired], OrderedDict()
        self._retired = set()
        for pool in pools:
            await pool.aclose()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    async def __aenter__(self) -> WebhookSender:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _checked(self, url: str) -> tuple[Target, list[str]]:
        target = parse_target(url, allow_http=self._allow_http)
        check_host(target.host, allow_private=self._allow_private)
        if target.literal_address is not None:
            return target, [target.literal_address]
        try:
            answers = await self._resolve(target.host, target.port)
        except (OSError, UnicodeError) as exc:
            raise UnsafeTargetError(UNRESOLVABLE, f"{target.host} does not resolve ({exc})") from None
        if not answers:
            raise UnsafeTargetError(UNRESOLVABLE, f"{target.host} does not resolve")
        for answer in answers:  # one private answer is enough to refuse: the resolver picks, not us
            check_address(answer, allow_private=self._allow_private)
        return target, [str(ipaddress.ip_address(answer)) for answer in answers]

    async def _send(self, pool: httpcore.AsyncConnectionPool, target: Target, address: str, body: bytes,
                    headers: dict[str, str], started: float) -> AttemptOutcome:
        url = httpcore.URL(scheme=target.scheme.encode(), host=target.host.encode(), port=target.port,
                           target=target.path_and_query.encode())
        timeouts = dict.fromkeys(("connect", "read", "write", "pool"), self._timeout)
        token = _PIN.set(_Pin(target.host, target.port, address))
        try:
            async with pool.stream("POST", url, headers=_request_headers(target, body, headers),
                                         content=body, extensions={"timeout": timeouts}) as response:
                raw = await _read_capped(response, self._read_cap)
                peer = _peer_address(response) or address
        finally:
            _PIN.reset(token)
        redirect = 300 <= response.status < 400
        return AttemptOutcome(status=response.status, body=_decode(raw, response.headers)[: self._body_cap],
                              latency_ms=_elapsed_ms(started), error="redirect not followed" if redirect else None,
                              blocked=False, address=peer)


# Framing and routing stay ours: a caller's Host could address another virtual host.
_OWN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "upgrade", "te"})


def _request_headers(target: Target, body: bytes, headers: dict[str, str]) -> list[tuple[str, str]]:
    chosen = {"user-agent": "callwright-webhooks", "content-type": "application/json",
              # Compressed replies would be stored as bytes; decompressing them invites a bomb.
              "accept-encoding": "identity"}
    names = {"user-agent": "User-Agent", "content-type": "Content-Type", "accept-encoding": "Accept-Encoding"}
    for name, value in headers.items():
        if name.lower() not in _OWN_HEADERS:
            chosen[name.lower()] = value
            names[name.lower()] = name
    return [("Host", target.host_header), ("Content-Length", str(len(body))),
            *((names[key], value) for key, value in chosen.items())]


async def _read_capped(response: httpcore.Response, cap: int) -> bytes:
    received = bytearray()
    async for chunk in response.aiter_stream():
        received += chunk
        if len(received) >= cap:
            break
    return bytes(received[:cap])


def _peer_address(response: httpcore.Response) -> str | None:
    """The address the connection really reached (a kept-alive one may predate this attempt)."""
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    return str(peer[0]) if peer else None


def _decode(raw: bytes, headers: list[tuple[bytes, bytes]]) -> str:
    message = Message()
    for name, value in headers:
        if name.lower() == b"content-type":
            message["content-type"] = value.decode("latin-1")
    charset = message.get_content_charset() or "utf-8"
    try:
        return raw.decode(charset, errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")


def _describe(exc: BaseException) -> str:
    causes: list[BaseException] = [exc]
    while len(causes) < 8 and (causes[-1].__cause__ or causes[-1].__context__) is not None:
        causes.append(causes[-1].__cause__ or causes[-1].__context__)  # type: ignore[arg-type]
    detail = str(exc) or type(exc).__name__
    if any(isinstance(cause, ssl.SSLError) for cause in causes) or "CERTIFICATE" in detail.upper():
        return f"tls error: {detail}"
    if any(isinstance(cause, ConnectionRefusedError) for cause in causes) or "refused" in detail.lower():
        return f"connection refused: {detail}"
    if isinstance(exc, httpcore.ConnectError):
        return f"connect failed: {detail}"
    if isinstance(exc, httpcore.ProtocolError):
        return f"protocol error: {detail}"
    return f"network error: {detail}"


def _failed(started: float, error: str, address: str | None, *, blocked: bool = False,
            refused_code: str | None = None) -> AttemptOutcome:
    return AttemptOutcome(status=None, body="", latency_ms=_elapsed_ms(started), error=error, blocked=blocked,
                          address=address, refused_code=refused_code)


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
