"""Carrier credentials (bring your own Twilio): the stored credential's status, the form that
verifies ``account_sid`` + ``auth_token`` with the carrier, and the choice of the caller number
among the account's numbers.

The auth token is a secret going in: it is passed to ``POST /v1/providers/carrier/verify`` and
never written back into a page, not even when the carrier refuses it (its field is always empty).
The API has no route to remove stored credentials; verifying others replaces them.
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import Provide

from entrypoints.http.dashboard.api import Answer
from entrypoints.http.dashboard.render import page
from entrypoints.http.dashboard.session import Session, current_session

Page = Response[str]


def _token_free(message: str | None, token: str) -> str | None:
    """A refusal's words, with the token blanked should any answer ever quote it."""
    if not message or not token:
        return message
    return message.replace(token, "•" * 8)


async def _page(request: Request[Any, Any, Any], session: Session, *, status: int = 200,
                account: dict[str, Any] | None = None, account_sid: str = "",
                problems: dict[str, str | None] | None = None, **context: Any) -> Page:
    stored: Answer = await session.api.get("/v1/providers/carrier")
    credential = stored.body if stored.ok and isinstance(stored.body, dict) else None
    failure = context.pop("failure", None) or (None if stored.ok else stored.error["message"])
    return page("carrier/carrier.html", session, status=status, active="carrier", title="Carrier",
                credential=credential, account=account, account_sid=account_sid, problems=problems or {},
                failure=failure, **context)


class CarrierPages(Controller):
    path = "/app/carrier"
    include_in_schema = False
    dependencies = {"session": Provide(current_session)}

    @get("/")
    async def carrier(self, request: Request[Any, Any, Any], session: Session) -> Page:
        return await _page(request, session)

    @post("/verify")
    async def verify(self, request: Request[Any, Any, Any], session: Session) -> Page:
        account_sid = session.field("account_sid")
        token = session.field("auth_token")
        answer = await session.api.post("/v1/providers/carrier/verify",
                                                   json={"account_sid": account_sid, "auth_token": token})
        if not answer.ok:
            problems = {name: _token_free(answer.problem_for(name), token) for name in ("account_sid", "auth_token")}
            failure = None if any(problems.values()) else _token_free(answer.error["message"], token)
            return await _page(request, session, status=answer.status, account_sid=account_sid, problems=problems,
                               failure=failure or "The credentials were not accepted: see the fields marked below.")
        return await _page(request, session, account=answer.body, account_sid=account_sid,
                           notice=f"Credentials verified for {answer.body.get('account_name') or account_sid}.")

    @post("/select-number")
    async def select_number(self, request: Request[Any, Any, Any], session: Session) -> Page:
        e164 = session.field("e164")
        answer = await session.api.post("/v1/providers/select-number", json={"e164": e164})
        if not answer.ok:
            return await _page(request, session, status=answer.status,
                               failure=answer.problem_for("e164") or answer.error["message"])
        return await _page(request, session, account=answer.body,
                           notice=f"Calls now come from {answer.body.get('caller_number') or e164}.")


PAGES: list[Any] = [CarrierPages]
