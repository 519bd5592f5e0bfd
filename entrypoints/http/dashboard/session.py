"""The dashboard's session: the login's JWT in an HttpOnly cookie, and a CSRF token on every change.

The cookie (``callwright_session``) is HttpOnly, SameSite=Lax, scoped to ``/app``, and Secure when
the service is reached over HTTPS. A page that changes anything (any method but GET/HEAD) must carry
the session's CSRF token, in the form's ``csrf_token`` field or the ``X-CSRF-Token`` header (htmx
sends it from ``<body hx-headers>``): an HMAC of the session's ``jti`` under a key derived from the
service's master secret, so another site can neither read nor forge it.

No session, an expired or logged-out one, sends a page to ``/app/login?next=…`` (htmx: the
``HX-Redirect`` header); a change without its token is refused with 403 ``csrf_failed``. Each page
request counts once in the user's rate budget; the API calls the page makes in process do not.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from litestar import Request
from litestar.datastructures import Cookie, FormMultiDict

from application.accounts.sessions import authenticate_session
from application.errors import AuthenticationError
from application.principal import Principal
from entrypoints.http.auth import count_hit, refuse_over_limit
from entrypoints.http.blocking import run_blocking
from entrypoints.http.dashboard.api import Api
from entrypoints.http.dependencies import client_ip
from entrypoints.http.services import DashboardService, HttpServices

COOKIE = "callwright_session"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
LOGIN_PATH = "/app/login"
SAFE_METHODS = ("GET", "HEAD")


class LoginRequired(Exception):
    """No usable session: the page goes to the login form, which brings the user back to ``next``."""

    def __init__(self, next_path: str, reason: str) -> None:
        super().__init__(reason)
        self.next_path = next_path
        self.reason = reason


class CsrfRefused(Exception):
    """A change arrived without this session's CSRF token."""


@dataclass(frozen=True)
class Session:
    principal: Principal
    token: str
    csrf: str
    form: FormMultiDict  # the posted form of a change (empty for GET)
    api: Api  # the API's routes, in process, as this session (``api``)

    @property
    def pending_review(self) -> bool:
        return self.principal.verification_status != "approved"

    def field(self, name: str, default: str = "") -> str:
        value = self.form.get(name)
        return value.strip() if isinstance(value, str) else default

    def fields(self, name: str) -> list[str]:
        """Every value of a repeated field (ticked boxes, schema rows), none when it was not sent."""
        return [v.strip() for v in self.form.getall(name, []) if isinstance(v, str)]


def dashboard_of(request: Request[Any, Any, Any]) -> DashboardService:
    services: HttpServices = request.app.state.services
    return services.dashboard


def same_origin(request: Request[Any, Any, Any]) -> None:
    """A browser's ``Origin`` on a change must be this service (the request's ``Host``, or the host of
    ``CALLWRIGHT_PUBLIC_BASE_URL`` behind a proxy). This is what guards the forms before a session
    (log in, sign up), which have no token to carry: no other site can log a visitor in to an account
    of its choosing."""
    origin = request.headers.get("origin")
    if origin is None:
        return
    ours = {request.headers.get("host", ""), urlsplit(dashboard_of(request).public_base_url).netloc} - {""}
    if urlsplit(origin).netloc not in ours:
        raise CsrfRefused()


def csrf_token(key: bytes, jti: str | None) -> str:
    digest = hmac.new(key, f"dashboard-csrf:{jti}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def safe_next(path: str | None) -> str:
    """Only a path of the dashboard itself (no other host, no scheme-relative ``//``)."""
    if path and path.startswith("/app") and not path.startswith("//") and "\\" not in path:
        return path
    return "/app/calls"


def session_cookie(request: Request[Any, Any, Any], token: str, max_age: int) -> Cookie:
    base = dashboard_of(request).public_base_url
    secure = request.url.scheme == "https" or base.startswith("https://")
    return Cookie(key=COOKIE, value=token, path="/app", httponly=True, samesite="lax", secure=secure, max_age=max_age)


def cleared_cookie() -> Cookie:
    return Cookie(key=COOKIE, value="", path="/app", httponly=True, samesite="lax", max_age=0)


async def current_session(request: Request[Any, Any, Any]) -> Session:
    """The dependency every page but the login pages takes: the session, CSRF checked on a change."""
    dashboard = dashboard_of(request)
    token = request.cookies.get(COOKIE)
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if request.method not in SAFE_METHODS:  # back to the page the form was on (its draft is kept there)
        here = urlsplit(request.headers.get("hx-current-url") or request.headers.get("referer") or "").path or here
    if not token:
        raise LoginRequired(here, "login")
    try:
        principal = await run_blocking(authenticate_session, dashboard.accounts, token)
    except AuthenticationError as exc:
        raise LoginRequired(here, "ended" if exc.code in ("invalid_session", "session_revoked") else "login") from exc
    # The page's request counts once in the user's budget (the API calls it makes are not counted).
    refuse_over_limit(await count_hit(dashboard.admission, principal), principal)
    csrf = csrf_token(dashboard.csrf_key, principal.jti)
    form = FormMultiDict()
    if request.method not in SAFE_METHODS:
        same_origin(request)
        kind = request.headers.get("content-type", "")
        if kind.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            form = await request.form()
        sent = request.headers.get(CSRF_HEADER) or form.get(CSRF_FIELD) or ""
        if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), csrf.encode()):
            raise CsrfRefused()
    return Session(principal=principal, token=token, csrf=csrf, form=form,
                   api=Api(request.app, principal, client_ip(request)))


def login_location(next_path: str, reason: str) -> str:
    return f"{LOGIN_PATH}?next={quote(safe_next(next_path), safe='/')}&reason={reason}"
