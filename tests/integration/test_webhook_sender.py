"""The webhook attempt sender against loopback receivers (ARCHITECTURE.md §9, SSRF; SPEC.md Events).

Nothing leaves this machine: names resolve through stub resolvers, and "public" addresses are
routed by ``FakeInternet`` to loopback receivers. Canaries are receivers that must see nothing.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpcore
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from adapters.webhooks.sender import AttemptOutcome, WebhookSender
from domain.webhooks.targets import METADATA, PRIVATE_ADDRESS, UNRESOLVABLE, UnsafeTargetError

T = TypeVar("T")
PUBLIC_IP = "93.184.216.34"
OTHER_PUBLIC_IP = "8.8.4.4"


def run(scenario: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(scenario)


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A tiny HTTP/1.1 server on 127.0.0.1: records every connection and request, then answers."""

    status: int = 200
    body: bytes = b"ok"
    headers: Sequence[tuple[str, str]] = ()
    delay: float = 0.0
    tls: ssl.SSLContext | None = None
    connections: int = 0
    requests: list[Received] = field(default_factory=list)
    port: int = 0

    async def __aenter__(self) -> Receiver:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    return
                method, path, _ = request_line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append(Received(method, path, headers, body))
                await asyncio.sleep(self.delay)
                head = [f"HTTP/1.1 {self.status} Whatever", f"Content-Length: {len(self.body)}", *(
                    f"{name}: {value}" for name, value in self.headers)]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + self.body)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()


class FakeInternet(httpcore.AsyncNetworkBackend):
    """The socket layer under the sender: ``routes`` send a public address to a loopback port,
    loopback passes through untouched (so a wrong connection reaches its canary), anything else
    is unreachable. Records every address the sender asked for."""

    def __init__(self, routes: dict[str, int] | None = None) -> None:
        self.routes = routes or {}
        self.connects: list[tuple[str, int]] = []
        self._real = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        self.connects.append((host, port))
        if host in self.routes:
            return await self._real.connect_tcp("127.0.0.1", self.routes[host], timeout=timeout)
        if ipaddress.ip_address(host).is_loopback:
            return await self._real.connect_tcp(host, port, timeout=timeout)
        raise httpcore.ConnectError(f"test network: {host} is unreachable")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def resolver(table: dict[str, list[str]], calls: list[str] | None = None) -> Callable[[str, int], Awaitable[list[str]]]:
    async def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]
    return resolve


def dev_sender(table: dict[str, list[str]], **options: Any) -> WebhookSender:
    """The development flags: loopback receivers are reachable, plain http allowed."""
    return WebhookSender(resolver=resolver(table), allow_private=True, allow_http=True, **options)


async def post(sender: WebhookSender, url: str, body: bytes = b'{"event":"call.completed"}',
               headers: dict[str, str] | None = None) -> AttemptOutcome:
    try:
        return await sender.post(url, body, headers or {})
    finally:
        await sender.aclose()


# --- delivery ------------------------------------------------------------------------------------

def test_attempt_reaches_the_receiver_with_host_header_body_and_headers() -> None:
    async def scenario() -> tuple[AttemptOutcome, Receiver]:
        async with Receiver(status=202, body=b"thanks") as receiver:
            sender = dev_sender({"receiver.test": ["127.0.0.1"]})
            outcome = await post(sender, f"http://receiver.test:{receiver.port}/hooks?x=1#frag",
                                 headers={"X-Service-Event": "call.completed", "Host": "evil.test"})
            return outcome, receiver

    outcome, receiver = run(scenario())
    assert (outcome.status, outcome.body, outcome.error, outcome.blocked) == (202, "thanks", None, False)
    assert outcome.address == "127.0.0.1" and outcome.latency_ms >= 0
    [request] = receiver.requests
    assert (request.method, request.path, request.body) == ("POST", "/hooks?x=1", b'{"event":"call.completed"}')
    assert request.headers["host"] == f"receiver.test:{receiver.port}"
    assert request.headers["x-service-event"] == "call.completed"
    assert request.headers["content-type"] == "application/json"


def test_pinned_public_address_gets_the_hostname_in_host_header() -> None:
    async def scenario() -> tuple[AttemptOutcome, Receiver, FakeInternet]:
        async with Receiver() as receiver:
            network = FakeInternet({PUBLIC_IP: receiver.port})
            sender = WebhookSender(resolver=resolver({"hooks.example.com": [PUBLIC_IP]}), allow_http=True,
                                   network_backend=network)
            return await post(sender, "http://hooks.example.com/in"), receiver, network

    outcome, receiver, network = run(scenario())
    assert (outcome.status, outcome.address) == (200, "127.0.0.1")  # the socket's real peer
    assert network.connects == [(PUBLIC_IP, 80)]
    assert receiver.requests[0].headers["host"] == "hooks.example.com"


def test_keep_alive_connection_is_reused_between_attempts() -> None:
    async def scenario() -> tuple[list[AttemptOutcome], Receiver]:
        async with Receiver() as receiver:
            sender = dev_sender({"receiver.test": ["127.0.0.1"]})
            url = f"http://receiver.test:{receiver.port}/"
            try:
                outcomes = [await sender.post(url, b"{}", {}) for _ in range(3)]
            finally:
                await sender.aclose()
            return outcomes, receiver

    outcomes, receiver = run(scenario())
    assert [o.status for o in outcomes] == [200, 200, 200]
    assert (receiver.connections, len(receiver.requests)) == (1, 3)



def test_a_pool_evicted_while_a_post_uses_it_lets_that_post_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``POOLS`` endpoint URLs the oldest pool is closed, but only once its posts are done."""
    monkeypatch.setattr("adapters.webhooks.sender.POOLS", 1)

    async def scenario() -> tuple[AttemptOutcome, AttemptOutcome]:
        async with Receiver(delay=0.3) as slow, Receiver() as quick:
            sender = dev_sender({"slow.test": ["127.0.0.1"], "quick.test": ["127.0.0.1"]})
            try:
                first = asyncio.create_task(sender.post(f"http://slow.test:{slow.port}/", b"{}", {}))
                await asyncio.sleep(0.1)  # the slow post is under way on the first pool
                second = await sender.post(f"http://quick.test:{quick.port}/", b"{}", {})  # evicts it
                return await first, second
            finally:
                await sender.aclose()

    first, second = run(scenario())
    assert (first.status, first.error) == (200, None)
    assert second.status == 200


# --- SSRF ----------------------------------------------------------------------------------------

def test_loopback_receiver_is_blocked_without_the_development_flag() -> None:
    async def scenario() -> tuple[list[AttemptOutcome], Receiver]:
        async with Receiver() as canary:
            outcomes = []
            for url in (f"http://canary.test:{canary.port}/", f"http://127.0.0.1:{canary.port}/",
                        f"http://2130706433:{canary.port}/", f"http://[::ffff:127.0.0.1]:{canary.port}/",
                        f"http://localhost:{canary.port}/"):
                sender = WebhookSender(resolver=resolver({"canary.test": ["127.0.0.1"],
                                                          "localhost": ["127.0.0.1"]}), allow_http=True)
                outcomes.append(await post(sender, url))
            return outcomes, canary

    outcomes, canary = run(scenario())
    for outcome in outcomes:
        assert (outcome.blocked, outcome.status) == (True, None)
        assert outcome.error is not None and outcome.error.startswith("blocked: ")
    assert outcomes[0].address == "127.0.0.1"
    assert canary.connections == 0


def test_answers_mixing_public_and_private_addresses_are_refused() -> None:
    async def scenario() -> tuple[AttemptOutcome, FakeInternet, Receiver]:
        async with Receiver() as canary:
            network = FakeInternet()
            table = {"mixed.test": [PUBLIC_IP, "127.0.0.1"]}
            sender = WebhookSender(resolver=resolver(table), allow_http=True, network_backend=network)
            with pytest.raises(UnsafeTargetError) as refused:
                await sender.check(f"http://mixed.test:{canary.port}/")
            assert (refused.value.code, refused.value.address) == (PRIVATE_ADDRESS, "127.0.0.1")
            return await post(sender, f"http://mixed.test:{canary.port}/"), network, canary

    outcome, network, canary = run(scenario())
    assert outcome.blocked and outcome.address == "127.0.0.1"
    assert network.connects == [] and canary.connections == 0


def test_rebinding_resolver_never_leads_to_the_loopback_canary() -> None:
    """Public on the first lookup, loopback on the next: the checked address is the one used."""
    answers = [[PUBLIC_IP], ["127.0.0.1"], ["127.0.0.1"]]
    lookups: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        lookups.append(host)
        return answers[len(lookups) - 1]

    async def scenario() -> tuple[list[AttemptOutcome], Receiver, Receiver, FakeInternet]:
        async with Receiver() as canary, Receiver(body=b"public") as public:
            network = FakeInternet({PUBLIC_IP: public.port})
            sender = WebhookSender(resolver=rebinding, allow_http=True, network_backend=network)
            url = f"http://rebind.test:{canary.port}/hook"  # the canary listens on the URL's port
            try:
                first = await sender.post(url, b"{}", {})
                assert lookups == ["rebind.test"]  # one lookup per attempt, none at connect time
                second = await sender.post(url, b"{}", {})
            finally:
                await sender.aclose()
            return [first, second], canary, public, network

    (first, second), canary, public, network = run(scenario())
    assert (first.status, first.body, first.blocked) == (200, "public", False)
    assert (second.blocked, second.status) == (True, None)
    assert network.connects == [(PUBLIC_IP, canary.port)]
    assert len(public.requests) == 1
    assert canary.connections == 0


def test_metadata_answers_are_blocked_even_in_development() -> None:
    async def scenario() -> tuple[AttemptOutcome, FakeInternet]:
        network = FakeInternet()
        sender = WebhookSender(resolver=resolver({"sneaky.test": ["169.254.169.254"]}), allow_private=True,
                               allow_http=True, network_backend=network)
        with pytest.raises(UnsafeTargetError) as refused:
            await sender.check("http://sneaky.test/latest/meta-data/")
        assert refused.value.code == METADATA
        outcome = await post(sender, "http://metadata.google.internal/computeMetadata/v1/")
        return outcome, network

    outcome, network = run(scenario())
    assert outcome.blocked and "metadata" in (outcome.error or "")
    assert network.connects == []


def test_check_returns_the_normalized_target_for_a_public_host() -> None:
    async def scenario() -> Any:
        sender = WebhookSender(resolver=resolver({"hooks.example.com": [PUBLIC_IP, "2606:4700:4700::1111"]}))
        try:
            return await sender.check("https://ＨＯＯＫＳ。example.com./in#x")
        finally:
            await sender.aclose()

    target = run(scenario())
    assert (target.url, target.host, target.port) == ("https://hooks.example.com/in", "hooks.example.com", 443)


@pytest.mark.parametrize("table", [{}, {"gone.test": []}])
def test_unresolvable_host_is_refused_at_check_and_blocked_at_post(table: dict[str, list[str]]) -> None:
    async def scenario() -> AttemptOutcome:
        sender = WebhookSender(resolver=resolver(table))
        with pytest.raises(UnsafeTargetError) as refused:
            await sender.check("https://gone.test/")
        assert refused.value.code == UNRESOLVABLE
        return await post(sender, "https://gone.test/")

    outcome = run(scenario())
    assert outcome.blocked and outcome.status is None


@pytest.mark.parametrize("url", ["ftp://hooks.example.com/", "https://user:pw@hooks.example.com/", "not a url",
                                 "http://hooks.example.com/"])
def test_unsafe_urls_come_back_blocked_instead_of_raising(url: str) -> None:
    sender = WebhookSender(resolver=resolver({"hooks.example.com": [PUBLIC_IP]}), network_backend=FakeInternet())
    outcome = run(post(sender, url))
    assert outcome.blocked and outcome.error is not None and outcome.error.startswith("blocked: ")


def test_redirects_are_not_followed() -> None:
    async def scenario() -> tuple[list[AttemptOutcome], Receiver]:
        async with Receiver() as canary:
            outcomes = []
            for status in (301, 302, 303, 307, 308):
                location = ("Location", f"http://127.0.0.1:{canary.port}/stolen")
                async with Receiver(status=status, headers=[location]) as receiver:
                    outcomes.append(await post(dev_sender({"receiver.test": ["127.0.0.1"]}),
                                               f"http://receiver.test:{receiver.port}/"))
            return outcomes, canary

    outcomes, canary = run(scenario())
    assert [o.status for o in outcomes] == [301, 302, 303, 307, 308]
    assert {o.error for o in outcomes} == {"redirect not followed"}
    assert not any(o.blocked for o in outcomes)
    assert canary.connections == 0


def test_environment_proxies_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> tuple[AttemptOutcome, Receiver, Receiver]:
        async with Receiver() as canary, Receiver() as receiver:
            proxy = f"http://127.0.0.1:{canary.port}"
            for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"):
                monkeypatch.setenv(name, proxy)
            monkeypatch.delenv("NO_PROXY", raising=False)
            monkeypatch.delenv("no_proxy", raising=False)
            outcome = await post(dev_sender({"receiver.test": ["127.0.0.1"]}),
                                 f"http://receiver.test:{receiver.port}/")
            return outcome, receiver, canary

    outcome, receiver, canary = run(scenario())
    assert outcome.status == 200 and len(receiver.requests) == 1
    assert canary.connections == 0


# --- failures ------------------------------------------------------------------------------------

def test_receiver_that_is_down_gives_connection_refused_without_raising() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed on exit: nothing listens there
    outcome = run(post(dev_sender({"down.test": ["127.0.0.1"]}), f"http://down.test:{port}/"))
    assert (outcome.status, outcome.blocked, outcome.address) == (None, False, "127.0.0.1")
    assert outcome.error is not None and outcome.error.startswith("connection refused")


def test_slow_receiver_times_out_within_the_budget() -> None:
    async def scenario() -> AttemptOutcome:
        async with Receiver(delay=5.0) as receiver:
            return await post(dev_sender({"slow.test": ["127.0.0.1"]}, timeout=0.5),
                              f"http://slow.test:{receiver.port}/")

    outcome = run(scenario())
    assert (outcome.status, outcome.error, outcome.blocked) == (None, "timeout", False)
    assert 400 <= outcome.latency_ms < 2000


def test_large_body_is_read_up_to_the_cap_and_stored_truncated() -> None:
    async def scenario() -> AttemptOutcome:
        async with Receiver(body=b"x" * 1_000_000) as receiver:
            return await post(dev_sender({"big.test": ["127.0.0.1"]}, body_cap=100, read_cap=4096),
                              f"http://big.test:{receiver.port}/")

    outcome = run(scenario())
    assert (outcome.status, outcome.body) == (200, "x" * 100)


def test_undecodable_body_is_decoded_leniently() -> None:
    async def scenario() -> AttemptOutcome:
        headers = [("Content-Type", "text/plain; charset=no-such-charset")]
        async with Receiver(status=500, body=b"\xff\xfeboom", headers=headers) as receiver:
            return await post(dev_sender({"odd.test": ["127.0.0.1"]}), f"http://odd.test:{receiver.port}/")

    outcome = run(scenario())
    assert (outcome.status, outcome.error) == (500, None)
    assert outcome.body.endswith("boom")


# --- TLS -----------------------------------------------------------------------------------------

def certificate_files(tmp_path: Path, name: str) -> tuple[Path, Path, bytes]:
    """A throwaway CA and a server certificate for ``name``: (cert file, key file, CA PEM)."""
    now = dt.datetime.now(dt.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "callwright test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
          .not_valid_after(now + dt.timedelta(hours=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert_file, key_file = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file, ca.public_bytes(serialization.Encoding.PEM)


def tls_pair(tmp_path: Path, served_name: str) -> tuple[ssl.SSLContext, ssl.SSLContext, list[str | None]]:
    cert_file, key_file, ca_pem = certificate_files(tmp_path, served_name)
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_file, key_file)
    names: list[str | None] = []
    server.sni_callback = lambda _sock, name, _ctx: names.append(name)  # type: ignore[assignment,misc,return-value]
    client = ssl.create_default_context(cadata=ca_pem.decode())
    return server, client, names


def test_https_to_the_pinned_address_sends_sni_and_verifies_the_hostname(tmp_path: Path) -> None:
    server, client, names = tls_pair(tmp_path, "receiver.test")

    async def scenario() -> tuple[AttemptOutcome, Receiver]:
        async with Receiver(tls=server, body=b"secure") as receiver:
            sender = WebhookSender(resolver=resolver({"receiver.test": ["127.0.0.1"]}), allow_private=True,
                                   ssl_context=client)
            return await post(sender, f"https://receiver.test:{receiver.port}/tls"), receiver

    outcome, receiver = run(scenario())
    assert (outcome.status, outcome.body, outcome.address) == (200, "secure", "127.0.0.1")
    assert names == ["receiver.test"]
    assert receiver.requests[0].headers["host"] == f"receiver.test:{receiver.port}"


def test_https_certificate_for_another_name_is_a_tls_error(tmp_path: Path) -> None:
    server, client, _names = tls_pair(tmp_path, "someone-else.test")

    async def scenario() -> tuple[AttemptOutcome, Receiver]:
        async with Receiver(tls=server) as receiver:
            sender = WebhookSender(resolver=resolver({"receiver.test": ["127.0.0.1"]}), allow_private=True,
                                   ssl_context=client)
            return await post(sender, f"https://receiver.test:{receiver.port}/"), receiver

    outcome, receiver = run(scenario())
    assert (outcome.status, outcome.blocked) == (None, False)
    assert outcome.error is not None and outcome.error.startswith("tls error")
    assert receiver.requests == []
