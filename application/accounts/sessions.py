"""Dashboard sessions: login (JWT), logout (``jti`` blocklist) and session authentication."""

from __future__ import annotations

from dataclasses import dataclass

from application.accounts.app import Accounts
from application.errors import AuthenticationError, ConflictError, InvalidTokenError
from application.principal import SESSION, Principal
from domain.accounts.tenant import Tenant
from domain.accounts.tokens import RevokedSession
from domain.accounts.user import User, normalize_email

INVALID_CREDENTIALS = "invalid e-mail or password"


@dataclass(frozen=True, kw_only=True)
class LoggedIn:
    access_token: str
    expires_in: int


def login(accounts: Accounts, *, email: str, password: str, client_ip: str | None) -> LoggedIn:
    """Same answer and similar time whether or not the e-mail exists."""
    user = accounts.user_by_email(normalize_email(email))
    if user is None:
        accounts.ports.hasher.verify_dummy(password)
        raise AuthenticationError(INVALID_CREDENTIALS, code="invalid_credentials")
    if not accounts.ports.hasher.verify(password, user.password_hash):
        raise AuthenticationError(INVALID_CREDENTIALS, code="invalid_credentials")
    now = accounts.ports.clock()
    issued = accounts.ports.sessions.issue(user_id=user.user_id, tenant_id=user.tenant_id, now=now)
    accounts.update(User, user.id, lambda u: u.record_login(issued.claims.jti, client_ip, now))
    return LoggedIn(
        access_token=issued.token,
        expires_in=int((issued.claims.expires_at - issued.claims.issued_at).total_seconds()),
    )


def logout(accounts: Accounts, *, token: str) -> None:
    """Blocklist the token's ``jti`` until the token would expire anyway."""
    now = accounts.ports.clock()
    try:
        claims = accounts.ports.sessions.decode(token, now)
    except InvalidTokenError as exc:
        raise AuthenticationError(exc.message, code="invalid_session") from exc
    if accounts.find(RevokedSession, RevokedSession.create_id(claims.jti)) is not None:
        return
    revoked = RevokedSession(
        tenant_id=claims.tenant_id, jti=claims.jti, user_id=claims.user_id, expires_at=claims.expires_at, at=now
    )
    try:
        accounts.commit(revoked)
    except ConflictError:
        return  # a concurrent logout of the same token already blocked it
    if accounts.find(User, User.create_id(claims.user_id)) is not None:
        accounts.update(User, User.create_id(claims.user_id), lambda u: u.record_logout(claims.jti, now))


def _session_state(accounts: Accounts, jti: str, user_id: str, tenant_id: str) -> tuple[bool, User | None, Tenant | None]:
    head = accounts.head()
    cached = accounts.lookups.get(("session", jti), head)
    if cached is not None:
        return cached
    state = (
        accounts.find(RevokedSession, RevokedSession.create_id(jti)) is not None,
        accounts.find(User, User.create_id(user_id)),
        accounts.find(Tenant, Tenant.create_id(tenant_id)),
    )
    accounts.lookups.put(("session", jti), head, state)
    return state


def authenticate_session(accounts: Accounts, token: str) -> Principal:
    now = accounts.ports.clock()
    try:
        claims = accounts.ports.sessions.decode(token, now)
    except InvalidTokenError as exc:
        raise AuthenticationError(exc.message, code="invalid_session") from exc
    revoked, user, tenant = _session_state(accounts, claims.jti, claims.user_id, claims.tenant_id)
    if revoked:
        raise AuthenticationError("this session has been logged out", code="session_revoked")
    if user is None or tenant is None:
        raise AuthenticationError("this session is not valid", code="invalid_session")
    if not user.accepts_session_issued_at(claims.issued_at):
        raise AuthenticationError("the password was changed after this session began", code="session_revoked")
    return Principal(
        kind=SESSION,
        tenant_id=claims.tenant_id,
        user_id=claims.user_id,
        verification_status=tenant.verification_status,
        tier=tenant.tier,
        jti=claims.jti,
        session_expires_at=claims.expires_at,
    )
