"""Rule violations raised by aggregates and policies; each has a stable ``code``."""

from __future__ import annotations


class DomainError(Exception):
    code = "domain_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class KeyAlreadyRotatedError(DomainError):
    code = "key_already_rotated"


class KeyRevokedError(DomainError):
    code = "key_revoked"


class TokenUsedError(DomainError):
    code = "token_used"


class TokenExpiredError(DomainError):
    code = "token_expired"


class WeakPasswordError(DomainError):
    code = "weak_password"
