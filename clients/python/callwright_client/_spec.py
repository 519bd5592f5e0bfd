"""A request described once, sent by either client.

Each operation of the API is a ``Spec`` (what to send, and whether it may be sent again after an
answer was lost) and a parser of the answer; ``Client`` and ``AsyncClient`` only differ in how
they send it, so the two cannot drift apart.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from callwright_client.types import Page

T = TypeVar("T")
NO_BODY: Any = object()
READS_AND_EDITS = ("GET", "HEAD", "PATCH", "DELETE")


@dataclass(frozen=True)
class Spec:
    """One request. ``replay_safe``: sending it twice does what sending it once does (see _retry)."""

    method: str
    path: str
    params: Mapping[str, Any] = field(default_factory=dict)
    body: Any = NO_BODY
    idempotency_key: str | None = None
    replay_safe: bool | None = None

    @property
    def may_replay(self) -> bool:
        return self.method in READS_AND_EDITS if self.replay_safe is None else self.replay_safe

    def headers(self) -> dict[str, str]:
        return {"Idempotency-Key": self.idempotency_key} if self.idempotency_key else {}

    def request_kwargs(self) -> dict[str, Any]:
        found: dict[str, Any] = {"params": query(self.params), "headers": self.headers()}
        if self.body is not NO_BODY:
            found["json"] = jsonable(self.body)
        return found


@dataclass(frozen=True)
class Operation(Generic[T]):
    spec: Spec
    parse: Callable[[httpx.Response], T]


def segment(value: str) -> str:
    """A path segment: ids pass as they are, anything else is escaped (``+`` of E.164 kept)."""
    return quote(str(value), safe="+@:")


def idempotency_key(given: str | None) -> str:
    """The caller's key, or a fresh one: made once per create, so every retry of it repeats it."""
    return given or uuid.uuid4().hex


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value


def jsonable(value: Any) -> Any:
    """A body as JSON takes it: datetimes and dates (at any depth) as ISO 8601 strings."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return value


def query(params: Mapping[str, Any]) -> dict[str, Any]:
    """Query parameters as the API reads them: None left out, booleans lower-case, times ISO 8601."""
    return {name: _query_value(value) for name, value in params.items() if value is not None}


def body_of(response: httpx.Response) -> Any:
    return None if response.status_code == 204 or not response.content else response.json()


def one(build: Callable[[dict[str, Any]], T]) -> Callable[[httpx.Response], T]:
    return lambda response: build(response.json())


def page_of(build: Callable[[dict[str, Any]], T]) -> Callable[[httpx.Response], Page[T]]:
    """The parser of the API's one list shape, ``{data, next_cursor, total?, limit?, offset?}``."""

    def parse(response: httpx.Response) -> Page[T]:
        body = response.json()
        return Page(data=[build(row) for row in body.get("data") or []], next_cursor=body.get("next_cursor"),
                    total=body.get("total"), limit=body.get("limit"), offset=body.get("offset"), raw=body)

    return parse


def next_params(params: Mapping[str, Any], page: Page[Any]) -> dict[str, Any] | None:
    """The next page's parameters (the same filters and limit, the cursor instead of an offset),
    or None after the last page."""
    if not page.next_cursor or not page.data:
        return None
    return {**{k: v for k, v in params.items() if k != "offset"}, "cursor": page.next_cursor}


def row(data: dict[str, Any]) -> dict[str, Any]:
    return data
