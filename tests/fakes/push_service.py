"""A loopback Web Push service for tests, and the devices that subscribe at it.

The service records every request and answers from a script per device (then a default, 201).
A device holds what a browser keeps: a P-256 key pair and a 16-byte auth secret; it decrypts a
received aes128gcm body (RFC 8291, RFC 8188) with ``http_ece`` and checks the VAPID
``Authorization: vapid t=…, k=…`` header (RFC 8292) against the server's public key."""

from __future__ import annotations

import base64
import itertools
import json
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02

from tests.fakes.receiver import Answer

_serial = itertools.count(1)


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Pushed:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Device:
    """A browser's side of one subscription at ``endpoint``."""

    endpoint: str
    private_key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def path(self) -> str:
        return urlsplit(self.endpoint).path

    @property
    def p256dh(self) -> str:
        return b64url(self.private_key.public_key().public_bytes(serialization.Encoding.X962,
                                                                 serialization.PublicFormat.UncompressedPoint))

    def subscription(self) -> dict[str, Any]:
        """What ``PushSubscription.toJSON()`` gives in a browser."""
        return {"endpoint": self.endpoint, "expirationTime": None,
                "keys": {"p256dh": self.p256dh, "auth": b64url(self.auth)}}

    def decrypt(self, pushed: Pushed) -> dict[str, Any]:
        assert pushed.headers.get("Content-Encoding") == "aes128gcm", pushed.headers
        plain = http_ece.decrypt(pushed.body, private_key=self.private_key, auth_secret=self.auth,
                                 version="aes128gcm")
        return json.loads(plain)


def vapid_claims(pushed: Pushed, public_key: str) -> dict[str, Any]:
    """The VAPID token's claims once its key is the server's and its ES256 signature holds."""
    scheme, _, params = pushed.headers["Authorization"].partition(" ")
    assert scheme == "vapid", pushed.headers["Authorization"]
    parts = dict(p.strip().split("=", 1) for p in params.split(","))
    assert parts["k"] == public_key
    assert Vapid02.verify(f"vapid t={parts['t']},k={parts['k']}")
    return json.loads(unb64url(parts["t"].split(".")[1]))


class PushService:
    """``device()`` makes a device with an endpoint of its own here; ``script(device, *answers)``
    sets its next answers. A delayed answer holds the request that long (a push service that hangs)."""

    def __init__(self, default: Answer | None = None) -> None:
        self.received: list[Pushed] = []
        self._scripts: dict[str, deque[Answer]] = {}
        self._default = default or Answer(status=201, body=b"")
        self._lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with service._lock:
                    service.received.append(Pushed(self.path, dict(self.headers.items()), body, time.monotonic()))
                    script = service._scripts.get(self.path)
                    answer = script.popleft() if script else service._default
                if answer.delay:
                    time.sleep(answer.delay)
                self.send_response(answer.status)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="push-service", daemon=True)
        self._thread.start()

    def device(self) -> Device:
        return Device(endpoint=f"{self.origin}/push/device-{next(_serial)}")

    def script(self, device: Device, *answers: Answer) -> None:
        with self._lock:
            self._scripts[device.path] = deque(answers)

    def to(self, device: Device) -> list[Pushed]:
        with self._lock:
            return [p for p in self.received if p.path == device.path]

    def wait_for(self, device: Device, count: int, timeout: float = 10.0) -> list[Pushed]:
        deadline = time.monotonic() + timeout
        while len(self.to(device)) < count:
            assert time.monotonic() < deadline, f"{len(self.to(device))} of {count} pushes arrived at {device.path}"
            time.sleep(0.01)
        return self.to(device)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
