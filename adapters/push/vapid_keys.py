"""A new VAPID key pair (RFC 8292): P-256, the public key as a browser's ``applicationServerKey``
wants it (base64url of the uncompressed point), the private key as base64url PKCS #8 DER (what
``py_vapid.Vapid.from_der`` reads)."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from application.push.ports import VapidKeyPair


def new_vapid_keys() -> VapidKeyPair:
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    private = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return VapidKeyPair(public_key=_b64url(public), private_key=_b64url(private))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")
