"""Web Push with ``pywebpush`` and ``py-vapid``: the payload encrypted per RFC 8291 (aes128gcm,
RFC 8188), the request signed per RFC 8292 (``Authorization: vapid t=…, k=…``), and sent by the
webhook sender, so a push service's address passes the same SSRF guard (resolved and checked at
every send, connected to the checked address, no redirects, no proxies).

The VAPID private key and the subscriptions' auth secrets pass through here in clear and are
never logged or put in an error message."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from py_vapid import Vapid, VapidException
from pywebpush import WebPusher, WebPushException

from adapters.webhooks.sender import Resolver, WebhookSender
from application.push.ports import PushResult, PushTarget, VapidKeyPair

SIGNATURE_SECONDS = 12 * 3600  # the VAPID token's life (RFC 8292 §2: at most 24 h)


class WebPushSender:
    def __init__(self, *, contact: str, allow_private: bool = False, allow_http: bool = False, timeout: float = 5.0,
                 resolver: Resolver | None = None) -> None:
        self._contact = contact  # the VAPID ``sub``: how a push service reaches the operator
        self._http = WebhookSender(resolver=resolver, allow_private=allow_private, allow_http=allow_http,
                                   timeout=timeout, body_cap=512)
        self._signers: dict[str, Vapid] = {}

    async def check(self, endpoint: str) -> str:
        return (await self._http.check(endpoint)).url

    async def send(self, target: PushTarget, payload: bytes, *, vapid: VapidKeyPair, ttl: int) -> PushResult:
        started = time.monotonic()
        parts = urlsplit(target.endpoint)
        claims = {"sub": self._contact, "aud": f"{parts.scheme}://{parts.netloc}",
                  "exp": int(time.time()) + SIGNATURE_SECONDS}
        try:
            pusher = WebPusher({"endpoint": target.endpoint, "keys": {"p256dh": target.p256dh, "auth": target.auth}})
            body = pusher.encode(payload, "aes128gcm")["body"]
            signature = self._signer(vapid).sign(claims)
        except (WebPushException, VapidException, ValueError, TypeError) as exc:
            # Named by its kind only: the message could quote a key.
            return PushResult(status=None, error=f"cannot encrypt or sign for this device: {type(exc).__name__}",
                              latency_ms=_elapsed_ms(started))
        headers = {**signature, "TTL": str(ttl), "Urgency": "high", "Content-Encoding": "aes128gcm",
                   "Content-Type": "application/octet-stream", "User-Agent": "callwright-push"}
        outcome = await self._http.post(target.endpoint, body, headers)
        return PushResult(status=outcome.status, error=outcome.error, latency_ms=outcome.latency_ms)

    def _signer(self, vapid: VapidKeyPair) -> Vapid:
        signer = self._signers.get(vapid.public_key)
        if signer is None:
            signer = self._signers[vapid.public_key] = Vapid.from_der(vapid.private_key.encode())
        return signer

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> WebPushSender:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
