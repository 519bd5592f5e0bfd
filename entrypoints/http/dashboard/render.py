"""Rendering the dashboard's pages: one Jinja environment (autoescaped), the security headers every
page carries, redirects that htmx follows too, and the filters the templates share."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from litestar import MediaType, Request, Response
from litestar.datastructures import Cookie

from entrypoints.http.dashboard.session import Session

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                               "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
}
# (key, label, path): the navigation, in the order a new user needs it.
NAV = (
    ("calls", "Calls", "/app/calls"),
    ("new", "New call", "/app/new-call"),
    ("numbers", "Numbers", "/app/numbers"),
    ("templates", "Templates", "/app/templates"),
    ("flows", "Flows", "/app/flows"),
    ("webhooks", "Webhooks", "/app/webhooks"),
    ("keys", "API keys", "/app/keys"),
    ("carrier", "Carrier", "/app/carrier"),
    ("analytics", "Analytics", "/app/analytics"),
)


def when(value: Any) -> str:
    """An ISO 8601 instant as ``2026-11-26 06:40:12 UTC`` (the API's times are UTC)."""
    if not value:
        return "—"
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def money(value: Any) -> str:
    """A decimal string as dollars: ``0.0425`` → ``$0.0425`` (never rounded: it is what was billed)."""
    if value in (None, ""):
        return "—"
    try:
        return f"${Decimal(str(value))}"
    except InvalidOperation:
        return str(value)


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


ENV = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(("html", "svg")),
                  trim_blocks=True, lstrip_blocks=True)
ENV.filters.update(when=when, money=money, pretty=pretty)
ENV.globals.update(nav=NAV)


def html(template: str, **context: Any) -> str:
    return ENV.get_template(template).render(**context)


def page(template: str, session: Session | None, *, status: int = 200, active: str = "",
         cookies: list[Cookie] | None = None, **context: Any) -> Response[str]:
    """A whole page: the layout with the session's CSRF token, navigation and review banner."""
    body = html(template, session=session, csrf=session.csrf if session else "", active=active, **context)
    return Response(body, status_code=status, media_type=MediaType.HTML, headers=HEADERS, cookies=cookies or [])


def fragment(template: str, session: Session | None, *, status: int = 200, **context: Any) -> Response[str]:
    """A piece of a page that htmx swaps in."""
    body = html(template, session=session, csrf=session.csrf if session else "", **context)
    return Response(body, status_code=status, media_type=MediaType.HTML, headers=HEADERS)


def is_htmx(request: Request[Any, Any, Any]) -> bool:
    return request.headers.get("hx-request") == "true"


def redirect(request: Request[Any, Any, Any], location: str, *, cookies: list[Cookie] | None = None) -> Response[str]:
    """303 to ``location`` (after a form's POST); htmx requests get ``HX-Redirect`` instead."""
    if is_htmx(request):
        return Response("", status_code=200, media_type=MediaType.HTML, headers={**HEADERS, "HX-Redirect": location},
                        cookies=cookies or [])
    return Response("", status_code=303, media_type=MediaType.HTML, headers={**HEADERS, "Location": location},
                    cookies=cookies or [])
