"""Dashboard session tokens: HS256 JWTs with a ``jti``, valid 24 hours (SPEC.md §Authentication 3)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import jwt

from application.errors import InvalidTokenError
from application.ports import IssuedSession, SessionClaims

SESSION_LIFETIME = timedelta(hours=24)
_ISSUER = "callwright"
_AUDIENCE = "callwright-dashboard"


class JwtSessionTokens:
    def __init__(self, key: bytes, lifetime: timedelta = SESSION_LIFETIME) -> None:
        self._key = key
        self._lifetime = lifetime

    def issue(self, *, user_id: str, tenant_id: str, now: datetime) -> IssuedSession:
        issued_at = now.replace(microsecond=0)
        claims = SessionClaims(
            user_id=user_id,
            tenant_id=tenant_id,
            jti=uuid.uuid4().hex,
            issued_at=issued_at,
            expires_at=issued_at + self._lifetime,
        )
        payload = {
            "iss": _ISSUER,
            "aud": _AUDIENCE,
            "sub": user_id,
            "tid": tenant_id,
            "jti": claims.jti,
            "iat": int(issued_at.timestamp()),
            "exp": int(claims.expires_at.timestamp()),
        }
        return IssuedSession(token=jwt.encode(payload, self._key, algorithm="HS256"), claims=claims)

    def decode(self, token: str, now: datetime) -> SessionClaims:
        try:
            # Expiry is checked against the injected clock below, not the wall clock.
            payload = jwt.decode(
                token,
                self._key,
                algorithms=["HS256"],
                audience=_AUDIENCE,
                issuer=_ISSUER,
                options={"verify_exp": False, "verify_iat": False, "require": ["exp", "jti", "sub", "tid"]},
            )
            expires_at = datetime.fromtimestamp(int(payload["exp"]), tz=timezone.utc)
            issued_at = datetime.fromtimestamp(int(payload.get("iat", 0)), tz=timezone.utc)
            claims = SessionClaims(
                user_id=str(payload["sub"]),
                tenant_id=str(payload["tid"]),
                jti=str(payload["jti"]),
                issued_at=issued_at,
                expires_at=expires_at,
            )
        except (jwt.PyJWTError, ValueError, TypeError, KeyError, OverflowError) as exc:
            raise InvalidTokenError("the session token is invalid", code="invalid_session") from exc
        if now >= expires_at:
            raise InvalidTokenError("the session token has expired", code="session_expired")
        return claims

    def looks_like_session(self, token: str) -> bool:
        return token.count(".") == 2 and token.startswith("eyJ")
