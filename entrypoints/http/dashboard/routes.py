"""The dashboard's routes under ``/app``, with its own answers to a missing session and a missing
CSRF token, and its static files (``/app/static``: one stylesheet, one script, htmx)."""

from __future__ import annotations

from typing import Any

from litestar import MediaType, Request, Response, Router
from litestar.exceptions import InternalServerException
from litestar.static_files import create_static_files_router

from application.errors import RateLimitedError
from entrypoints.http.dashboard import (
    analytics_pages, calls_pages, carrier_pages, flows_pages, keys_pages, new_call_pages, numbers_pages,
    templates_pages, webhooks_pages,
)
from entrypoints.http.dashboard.auth_pages import AuthPages
from entrypoints.http.dashboard.render import HEADERS, STATIC, html, is_htmx, page
from entrypoints.http.dashboard.session import CsrfRefused, LoginRequired, login_location

# Each page module lists its controllers in its own ``PAGES``.
PAGES: list[Any] = [AuthPages, *calls_pages.PAGES, *new_call_pages.PAGES, *keys_pages.PAGES, *webhooks_pages.PAGES,
                    *carrier_pages.PAGES, *numbers_pages.PAGES, *templates_pages.PAGES, *flows_pages.PAGES,
                    *analytics_pages.PAGES]


def _to_login(request: Request[Any, Any, Any], exc: LoginRequired) -> Response[str]:
    location = login_location(exc.next_path, exc.reason)
    if is_htmx(request):
        return Response("", status_code=401, media_type=MediaType.HTML, headers={**HEADERS, "HX-Redirect": location})
    if request.headers.get("accept", "").startswith("text/event-stream"):
        return Response("event: login\ndata: {}\n\n", status_code=200, media_type="text/event-stream", headers=HEADERS)
    return Response("", status_code=303, media_type=MediaType.HTML, headers={**HEADERS, "Location": location})


def _csrf_refused(request: Request[Any, Any, Any], _exc: CsrfRefused) -> Response[str]:
    del request
    return page("error.html", None, status=403, title="Refused", heading="This form could not be accepted",
                message="It was sent without this session's security token (or from another site). Reload the page "
                        "and try again.", code="csrf_failed")


def _too_many(request: Request[Any, Any, Any], exc: RateLimitedError) -> Response[str]:
    del request
    body = html("error.html", session=None, csrf="", active="", title="Slow down", heading="Too many requests",
                message=f"{exc.message}. Wait {exc.retry_after} seconds, then reload the page.", code=exc.code)
    return Response(body, status_code=429, media_type=MediaType.HTML,
                    headers={**HEADERS, **exc.headers, "Retry-After": str(exc.retry_after)})


def _no_such_file(request: Request[Any, Any, Any], _exc: Exception) -> Response[str]:
    """A file name the file system cannot hold (a NUL byte; too long, which Litestar reports as a server
    error) names no file: 404."""
    del request
    return page("error.html", None, status=404, title="Not found", heading="No such file",
                message="There is no file at this address.", back="/app/calls")


def dashboard_routes() -> list[Any]:
    pages = Router(path="/", route_handlers=PAGES, include_in_schema=False,
                   exception_handlers={LoginRequired: _to_login, CsrfRefused: _csrf_refused,
                                       RateLimitedError: _too_many})
    static = create_static_files_router(path="/app/static", directories=[STATIC], include_in_schema=False,
                                        name="dashboard-static",
                                        exception_handlers={ValueError: _no_such_file, InternalServerException: _no_such_file})
    return [pages, static]
