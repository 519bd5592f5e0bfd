"""Password hashing with scrypt from ``cryptography``; the encoding carries its parameters."""

from __future__ import annotations

import base64
import hmac
import os

from cryptography.exceptions import InvalidKey
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

_SCHEME = "scrypt"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ScryptPasswordHasher:
    """``scrypt$n$r$p$salt$hash``: stored hashes stay verifiable when the cost changes."""

    def __init__(self, *, n: int = 2**15, r: int = 8, p: int = 1, length: int = 32) -> None:
        self.n, self.r, self.p, self.length = n, r, p, length
        self._dummy = self.hash("callwright-dummy-password")

    def _kdf(self, salt: bytes, n: int, r: int, p: int, length: int) -> Scrypt:
        return Scrypt(salt=salt, length=length, n=n, r=r, p=p)

    def hash(self, password: str) -> str:
        salt = os.urandom(16)
        digest = self._kdf(salt, self.n, self.r, self.p, self.length).derive(password.encode("utf-8", "surrogatepass"))
        return f"{_SCHEME}${self.n}${self.r}${self.p}${_b64(salt)}${_b64(digest)}"

    def verify(self, password: str, encoded: str) -> bool:
        try:
            scheme, n, r, p, salt, digest = encoded.split("$")
            expected = _unb64(digest)
            kdf = self._kdf(_unb64(salt), int(n), int(r), int(p), len(expected))
        except ValueError:
            return False
        if scheme != _SCHEME:
            return False
        try:
            kdf.verify(password.encode("utf-8", "surrogatepass"), expected)
        except InvalidKey:
            return False
        return True

    def verify_dummy(self, password: str) -> None:
        self.verify(password, self._dummy)
        hmac.compare_digest(b"a", b"b")
