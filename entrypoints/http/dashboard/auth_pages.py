"""Log in, log out, sign up and the forgotten password: the pages before (and at the end of) a session.

Each calls the API's own ``/auth/*`` route in process, so the login attempt limit per address, the
same answers whether or not an e-mail exists, and the logout blocklist are the API's.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.di import Provide
from litestar.params import Parameter

from entrypoints.http.dashboard.api import Api
from entrypoints.http.dashboard.render import page, redirect
from entrypoints.http.dashboard.session import (
    Session, cleared_cookie, current_session, login_location, safe_next, same_origin, session_cookie,
)
from entrypoints.http.dependencies import client_ip

Page = Response[str]


def _api(request: Request[Any, Any, Any]) -> Api:
    return Api(request.app, None, client_ip(request))


async def _form(request: Request[Any, Any, Any]) -> dict[str, str]:
    same_origin(request)
    form = await request.form()
    return {k: v.strip() if isinstance(v, str) else "" for k, v in form.items()}


class AuthPages(Controller):
    path = "/app"
    include_in_schema = False

    @get("/")
    async def home(self, request: Request[Any, Any, Any]) -> Page:
        return redirect(request, "/app/calls")

    @get("/{rest:path}")
    async def not_found(self, rest: str) -> Page:
        """Any other address under ``/app``: a page saying so, not the API's JSON."""
        del rest
        return page("error.html", None, status=404, title="Not found", heading="No such page",
                    message="There is no dashboard page at this address.", back="/app/calls")

    @get("/login")
    async def login_form(self, next_path: Annotated[str | None, Parameter(query="next")] = None,
                         reason: str | None = None) -> Page:
        return page("login.html", None, title="Log in", next=safe_next(next_path), reason=reason, email="")

    @post("/login")
    async def login(self, request: Request[Any, Any, Any]) -> Page:
        form = await _form(request)
        answer = await _api(request).post("/auth/login", json={"email": form.get("email", ""),
                                                                "password": form.get("password", "")})
        if not answer.ok:
            return page("login.html", None, status=answer.status, title="Log in", next=safe_next(form.get("next")),
                        reason=None, email=form.get("email", ""), failure=answer.error["message"])
        cookie = session_cookie(request, answer.body["access_token"], int(answer.body["expires_in"]))
        return redirect(request, safe_next(form.get("next")), cookies=[cookie])

    @post("/logout", dependencies={"session": Provide(current_session)})
    async def logout(self, request: Request[Any, Any, Any], session: Session) -> Page:
        await _api(request).post("/auth/logout", json={"token": session.token})
        return redirect(request, login_location("/app/calls", "logged_out"), cookies=[cleared_cookie()])

    @get("/signup")
    async def signup_form(self) -> Page:
        return page("signup.html", None, title="Create an account", name="", email="", problems={})

    @post("/signup")
    async def signup(self, request: Request[Any, Any, Any]) -> Page:
        form = await _form(request)
        api = _api(request)
        credentials = {"email": form.get("email", ""), "password": form.get("password", "")}
        answer = await api.post("/auth/signup", json={**credentials, **({"name": form["name"]} if form.get("name") else {})})
        if not answer.ok:
            problems = {name: answer.problem_for(name) for name in ("email", "password", "name")}
            return page("signup.html", None, status=answer.status, title="Create an account", name=form.get("name", ""),
                        email=form.get("email", ""), problems=problems,
                        failure=None if any(problems.values()) else answer.error["message"])
        logged_in = await api.post("/auth/login", json=credentials)
        cookies = []
        if logged_in.ok:
            cookies.append(session_cookie(request, logged_in.body["access_token"], int(logged_in.body["expires_in"])))
        return page("signed_up.html", None, status=201, title="Welcome", cookies=cookies, secret=answer.body["secret"],
                    prefix=answer.body["prefix"], email=answer.body["email"],
                    verification_status=answer.body["verification_status"])

    @get("/forgot-password")
    async def forgot_form(self) -> Page:
        return page("forgot.html", None, title="Reset your password", sent=False, email="")

    @post("/forgot-password")
    async def forgot(self, request: Request[Any, Any, Any]) -> Page:
        form = await _form(request)
        answer = await _api(request).post("/auth/forgot-password", json={"email": form.get("email", "")})
        if not answer.ok:
            return page("forgot.html", None, status=answer.status, title="Reset your password", sent=False,
                        email=form.get("email", ""), failure=answer.error["message"])
        return page("forgot.html", None, title="Reset your password", sent=True, email=form.get("email", ""))
