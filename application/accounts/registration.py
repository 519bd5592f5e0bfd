"""Sign-up, admin creation, e-mail verification and password reset."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from application.accounts.app import Accounts
from application.accounts.keys import IssuedKey, new_key
from application.errors import ConflictError, FieldError, InvalidTokenError
from application.ports import EmailMessage
from domain import ids
from domain.accounts import tenant as tenant_rules
from domain.accounts import tokens
from domain.accounts.tenant import Tenant
from domain.accounts.tokens import OneTimeToken
from domain.accounts.user import EmailIndex, User, check_password, is_valid_email, normalize_email
from domain.errors import DomainError, WeakPasswordError

SIGNUP_ACTOR = "signup"


@dataclass(frozen=True, kw_only=True)
class Registered:
    user: User
    tenant: Tenant
    key: IssuedKey


def _checked_email(email: str) -> str:
    normalized = normalize_email(email)
    if not is_valid_email(normalized):
        raise FieldError(["body", "email"], "value is not a valid e-mail address", code="value_error", value=email)
    return normalized


def _checked_password(password: str, loc: list[str | int]) -> None:
    try:
        check_password(password)
    except WeakPasswordError as exc:
        raise FieldError(loc, exc.message, code=exc.code) from exc


def register(
    accounts: Accounts, *, email: str, password: str, name: str | None, admin: bool = False, by: str = SIGNUP_ACTOR
) -> Registered:
    """Create tenant, user, e-mail claim and the initial all-permissions key in one save."""
    address = _checked_email(email)
    _checked_password(password, ["body", "password"])
    if accounts.find(EmailIndex, EmailIndex.create_id(address)) is not None:
        raise ConflictError("an account with this e-mail already exists", code="email_taken")
    now = accounts.ports.clock()
    tenant_id = ids.to_public(ids.TENANT, uuid.uuid4())
    user_id = ids.to_public(ids.USER, uuid.uuid4())
    tenant = Tenant(
        tenant_id=tenant_id,
        name=name or address,
        tier=tenant_rules.DEFAULT_TIER,
        verification_status=tenant_rules.PENDING_REVIEW,
        at=now,
    )
    if admin:
        tenant.approve(by=by, now=now)
    user = User(
        tenant_id=tenant_id,
        user_id=user_id,
        email=address,
        name=name,
        password_hash=accounts.ports.hasher.hash(password),
        is_admin=admin,
        at=now,
    )
    claim = EmailIndex(tenant_id=tenant_id, email=address, user_id=user_id)
    key = new_key(tenant_id=tenant_id, user_id=user_id, name="initial key", scopes=None, number_ids=None, by=by, now=now)
    token, verification = _issue_token(user, tokens.EMAIL_VERIFICATION, now)
    accounts.commit(tenant, user, claim, key.aggregate, verification, conflict="email_taken")
    _send_verification(accounts, user, token)
    return Registered(user=user, tenant=tenant, key=key)


def _issue_token(user: User, purpose: str, now) -> tuple[str, OneTimeToken]:
    raw = tokens.generate_token()
    aggregate = OneTimeToken(
        tenant_id=user.tenant_id,
        purpose=purpose,
        token_hash=tokens.hash_token(raw),
        user_id=user.user_id,
        expires_at=now + tokens.LIFETIMES[purpose],
        at=now,
    )
    return raw, aggregate


def _send_verification(accounts: Accounts, user: User, token: str) -> None:
    link = f"{accounts.ports.public_base_url}/verify-email?token={token}"
    days = tokens.LIFETIMES[tokens.EMAIL_VERIFICATION].days
    accounts.ports.email.send(
        EmailMessage(
            to=user.email,
            subject="Confirm your callwright e-mail address",
            body=(
                f"Open this link to confirm your address (it works once, for {days} days):\n\n"
                f"{link}\n\n"
                'Or send the token below to POST /auth/verify-email as {"token": "..."}:\n\n'
                f"{token}\n"
            ),
            kind=tokens.EMAIL_VERIFICATION,
        )
    )


def _consume(accounts: Accounts, purpose: str, raw: str) -> tuple[OneTimeToken, User]:
    token = accounts.find(OneTimeToken, tokens.token_uuid(purpose, tokens.hash_token(raw)))
    if token is None or token.purpose != purpose:
        raise InvalidTokenError("the token is invalid", code="invalid_token")
    try:
        token.consume(accounts.ports.clock())
    except DomainError as exc:
        raise InvalidTokenError(exc.message, code=exc.code) from exc
    user = accounts.find(User, User.create_id(token.user_id))
    if user is None:  # pragma: no cover - a token is only issued for a saved user
        raise InvalidTokenError("the token is invalid", code="invalid_token")
    return token, user


def verify_email(accounts: Accounts, *, token: str) -> None:
    consumed, user = _consume(accounts, tokens.EMAIL_VERIFICATION, token)
    user.verify_email(accounts.ports.clock())
    accounts.commit(consumed, user, conflict="token_used")


def resend_verification(accounts: Accounts, *, email: str) -> None:
    """Always succeeds, whether or not the address is known (no user enumeration)."""
    user = accounts.user_by_email(normalize_email(email))
    if user is None or user.email_verified_at is not None:
        return
    token, verification = _issue_token(user, tokens.EMAIL_VERIFICATION, accounts.ports.clock())
    accounts.commit(verification)
    _send_verification(accounts, user, token)


def forgot_password(accounts: Accounts, *, email: str) -> None:
    """Always succeeds; a known address receives a 1-hour single-use reset token."""
    user = accounts.user_by_email(normalize_email(email))
    if user is None:
        return
    token, reset = _issue_token(user, tokens.PASSWORD_RESET, accounts.ports.clock())
    accounts.commit(reset)
    accounts.ports.email.send(
        EmailMessage(
            to=user.email,
            subject="Reset your callwright password",
            body=(
                "Someone asked to reset your password. Open this link to choose a new one "
                "(it works once, for one hour):\n\n"
                f"{accounts.ports.public_base_url}/reset-password?token={token}\n\n"
                'Or send the token below to POST /auth/reset-password as {"token": "...", "password": "..."}:\n\n'
                f"{token}\n"
            ),
            kind=tokens.PASSWORD_RESET,
        )
    )


def reset_password(accounts: Accounts, *, token: str, password: str) -> None:
    _checked_password(password, ["body", "password"])
    consumed, user = _consume(accounts, tokens.PASSWORD_RESET, token)
    user.change_password(accounts.ports.hasher.hash(password), reason="reset", now=accounts.ports.clock())
    accounts.commit(consumed, user, conflict="token_used")
