"""The service's master secret (``CALLWRIGHT_SECRET_KEY``) and keys derived from it by HKDF."""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


def load_or_create(value: str | None, data_dir: Path) -> tuple[bytes, bool]:
    """Return (secret, generated). Without a configured value one is kept in the data dir."""
    if value:
        return value.encode("utf-8"), False
    path = data_dir / "secret.key"
    if path.exists():
        return path.read_bytes().strip(), False
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = base64.urlsafe_b64encode(secrets.token_bytes(32))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(secret)
    return secret, True


def derive(master: bytes, purpose: str, length: int = 32) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=purpose.encode()).derive(master)
