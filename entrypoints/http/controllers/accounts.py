"""``/auth/*`` account and session routes (SPEC.md Endpoints › Auth)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.di import Provide
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from application.accounts import registration, sessions
from application.errors import AuthenticationError, RateLimitedError
from application.principal import API_KEY, Principal
from domain.accounts.user import User
from entrypoints.http.auth import bearer_token, rate_headers
from entrypoints.http.dependencies import client_ip, provide_accounts, provide_principal, service_from
from entrypoints.http.schemas.accounts import (
    EmailRequest,
    LoginRequest,
    LoginResponse,
    LogoutRequest,
    MeResponse,
    ResetPasswordRequest,
    SignupRequest,
    SignupResponse,
    StatusResponse,
    TokenRequest,
)
from entrypoints.http.services import AccountsService

OK = StatusResponse(status="ok")


def _limit_login_attempts(service: AccountsService, ip: str) -> None:
    """SPEC.md Limits: 10 login attempts per 5 minutes per IP, shared with forgot-password."""
    decision = service.rate_limiter.hit(
        f"login:{ip}", limit=service.login_attempts, window_seconds=service.login_window_seconds, now=service.clock()
    )
    if not decision.allowed:
        raise RateLimitedError(
            "too many attempts from this address; try again later",
            retry_after=decision.retry_after,
            headers=rate_headers(decision),
        )


class AccountsController(Controller):
    path = "/auth"
    tags = ["auth"]
    dependencies = service_from(provide_accounts)

    @post("/signup", status_code=HTTP_201_CREATED, sync_to_thread=True, summary="Create an account and its first API key")
    def signup(self, data: SignupRequest, service: AccountsService) -> SignupResponse:
        done = registration.register(service.accounts, email=data.email, password=data.password, name=data.name)
        return SignupResponse(
            user_id=done.user.user_id,
            tenant_id=done.tenant.tenant_id,
            email=done.user.email,
            verification_status=done.tenant.verification_status,
            key_id=done.key.key_id,
            prefix=done.key.aggregate.prefix,
            secret=done.key.secret,
            api_key=done.key.secret,  # deprecated: the same as secret, for one release (CHANGELOG.md)
        )

    @post("/login", status_code=HTTP_200_OK, sync_to_thread=True, summary="Log in to the dashboard (JWT)")
    def login(self, data: LoginRequest, service: AccountsService, request: Request[Any, Any, Any]) -> LoginResponse:
        ip = client_ip(request)
        _limit_login_attempts(service, ip)
        done = sessions.login(service.accounts, email=data.email, password=data.password, client_ip=ip)
        return LoginResponse(access_token=done.access_token, token_type="bearer", expires_in=done.expires_in)

    @post("/logout", status_code=HTTP_200_OK, sync_to_thread=True, summary="Revoke a session token")
    def logout(self, service: AccountsService, request: Request[Any, Any, Any], data: LogoutRequest | None = None) -> StatusResponse:
        token = (data.token if data else None) or bearer_token(request.scope)
        if not token:
            raise AuthenticationError("give the session token in the body or as a bearer token", code="missing_credentials")
        sessions.logout(service.accounts, token=token)
        return StatusResponse(status="logged_out")

    @get("/me", sync_to_thread=True, summary="The calling user, tenant and verification status",
         dependencies={"principal": Provide(provide_principal, sync_to_thread=False)})
    def me(self, service: AccountsService, principal: Principal) -> MeResponse:
        user = service.accounts.find(User, User.create_id(principal.user_id))
        if user is None:  # pragma: no cover - a principal always names a saved user
            raise AuthenticationError("unknown user", code="invalid_credentials")
        auth: dict[str, object] = {"kind": principal.kind}
        if principal.kind == API_KEY:
            auth.update(key_id=principal.key_id, scopes=list(principal.scopes) if principal.scopes is not None else None,
                        number_ids=list(principal.number_ids) if principal.number_ids is not None else None)
        return MeResponse(
            user_id=user.user_id,
            tenant_id=user.tenant_id,
            email=user.email,
            name=user.name,
            email_verified=user.email_verified_at is not None,
            is_admin=user.is_admin,
            verification_status=principal.verification_status,
            tier=principal.tier,
            auth=auth,
        )

    @post("/verify-email", status_code=HTTP_200_OK, sync_to_thread=True, summary="Confirm an e-mail address")
    def verify_email(self, data: TokenRequest, service: AccountsService) -> StatusResponse:
        registration.verify_email(service.accounts, token=data.token)
        return StatusResponse(status="verified")

    @post("/resend-verification", status_code=HTTP_200_OK, sync_to_thread=True, summary="Send the confirmation e-mail again")
    def resend_verification(self, data: EmailRequest, service: AccountsService) -> StatusResponse:
        registration.resend_verification(service.accounts, email=data.email)
        return OK

    @post("/forgot-password", status_code=HTTP_200_OK, sync_to_thread=True, summary="E-mail a 1-hour password reset token")
    def forgot_password(self, data: EmailRequest, service: AccountsService, request: Request[Any, Any, Any]) -> StatusResponse:
        _limit_login_attempts(service, client_ip(request))
        registration.forgot_password(service.accounts, email=data.email)
        return OK

    @post("/reset-password", status_code=HTTP_200_OK, sync_to_thread=True, summary="Set a new password with a reset token")
    def reset_password(self, data: ResetPasswordRequest, service: AccountsService) -> StatusResponse:
        registration.reset_password(service.accounts, token=data.token, password=data.password)
        return StatusResponse(status="password_reset")
