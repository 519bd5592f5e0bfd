"""Small secrets sealed at rest with AES-256-GCM under a key derived from the master key
(``master_key.derive``). The sealed form is ``v1.<base64url(nonce | ciphertext | tag)>``;
a wrong key or a changed byte fails to open instead of giving garbage."""

from __future__ import annotations

import base64
import os

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

VERSION = "v1"


class AesGcmSecretBox:
    def __init__(self, key: bytes, *, purpose: str) -> None:
        self._aead = AESGCM(key)
        self._associated = purpose.encode()  # a secret sealed for one purpose opens for no other

    def seal(self, plaintext: str) -> str:
        nonce = os.urandom(12)
        sealed = nonce + self._aead.encrypt(nonce, plaintext.encode(), self._associated)
        return f"{VERSION}.{base64.urlsafe_b64encode(sealed).decode()}"

    def open(self, sealed: str) -> str:
        version, _, data = sealed.partition(".")
        if version != VERSION:
            raise ValueError("unknown sealed-secret format")
        raw = base64.urlsafe_b64decode(data)
        return self._aead.decrypt(raw[:12], raw[12:], self._associated).decode()
