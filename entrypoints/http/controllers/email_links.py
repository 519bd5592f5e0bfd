"""The pages the e-mailed links open (``GET /verify-email``, ``/reset-password``): small,
self-contained HTML (a changed password links on to the dashboard's login). Excluded from the OpenAPI schema.

The token arrives in the query string and never appears in a page or a log line (the request log
records the path only); a reset form posts back to its own URL, so the token stays out of the page.
"""

from __future__ import annotations

from html import escape
from typing import Annotated

from litestar import Controller, MediaType, Response, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body

from application.accounts import registration
from application.errors import ConflictError, FieldError, InvalidTokenError
from entrypoints.http.dependencies import provide_accounts, service_from
from entrypoints.http.services import AccountsService

# The token's problem decides the status: unknown 400, already used 409, past its lifetime 410.
STATUS_BY_CODE = {"invalid_token": 400, "token_used": 409, "token_expired": 410}
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                               "frame-ancestors 'none'",
}
STYLE = ("body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}"
         "input,button{font:inherit;padding:.4rem;margin:.3rem 0}")
VERIFY_PROBLEMS = {
    "invalid_token": ("Link not valid", "This confirmation link is not valid. Copy the whole link from the "
                      "e-mail, or ask for a new one with POST /auth/resend-verification."),
    "token_used": ("Link already used", "This confirmation link has already been used; the address it "
                   "confirmed stays confirmed."),
    "token_expired": ("Link expired", "This confirmation link has expired. Ask for a new one with "
                      "POST /auth/resend-verification."),
}
RESET_PROBLEMS = {
    "invalid_token": ("Link not valid", "This password reset link is not valid. Copy the whole link from the "
                      "e-mail, or ask for a new one with POST /auth/forgot-password."),
    "token_used": ("Link already used", "This password reset link has already been used. Ask for a new one "
                   "with POST /auth/forgot-password if you need to."),
    "token_expired": ("Link expired", "This password reset link has expired (it lasts one hour). Ask for a "
                      "new one with POST /auth/forgot-password."),
}
RESET_FORM = ('<form method="post"><label>New password<br>'
              '<input type="password" name="password" autocomplete="new-password" required autofocus></label>'
              '<br><button type="submit">Set the new password</button></form>')


LOGIN_LINK = '<p><a href="/app/login?reason=password_reset">Log in to the dashboard</a></p>'


def page(title: str, message: str, status: int = 200, *, form: str = "") -> Response[str]:
    body = (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1"><title>{escape(title)} · callwright'
            f'</title><style>{STYLE}</style></head><body><h1>{escape(title)}</h1><p>{escape(message)}</p>{form}'
            f'</body></html>')
    return Response(body, status_code=status, media_type=MediaType.HTML, headers=HEADERS)


def problem(problems: dict[str, tuple[str, str]], code: str) -> Response[str]:
    code = code if code in problems else "invalid_token"
    return page(*problems[code], STATUS_BY_CODE[code])


class EmailLinkPages(Controller):
    include_in_schema = False
    dependencies = service_from(provide_accounts)

    @get("/verify-email", sync_to_thread=True)
    def verify_email(self, service: AccountsService, token: str | None = None) -> Response[str]:
        if not token:
            return problem(VERIFY_PROBLEMS, "invalid_token")
        try:
            registration.verify_email(service.accounts, token=token)
        except (InvalidTokenError, ConflictError) as exc:
            return problem(VERIFY_PROBLEMS, exc.code)
        return page("E-mail address confirmed", "Your e-mail address is confirmed. You can close this page.")

    @get("/reset-password", sync_to_thread=False)
    def reset_form(self, token: str | None = None) -> Response[str]:
        if not token:
            return problem(RESET_PROBLEMS, "invalid_token")
        return page("Choose a new password", "The link is valid for one hour and once.", form=RESET_FORM)

    @post("/reset-password", sync_to_thread=True)
    def reset_password(
        self, service: AccountsService,
        data: Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)],
        token: str | None = None,
    ) -> Response[str]:
        if not token:
            return problem(RESET_PROBLEMS, "invalid_token")
        try:
            registration.reset_password(service.accounts, token=token, password=data.get("password", ""))
        except FieldError as exc:
            return page("Choose a new password", exc.message, 422, form=RESET_FORM)
        except (InvalidTokenError, ConflictError) as exc:
            return problem(RESET_PROBLEMS, exc.code)
        return page("Password changed", "Your password is changed. Sessions opened before now no longer work.",
                    form=LOGIN_LINK)
