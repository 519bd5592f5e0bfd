"""Answers of ``GET /v1/calls/{id}/events``: a call's events in the API's words (docs/events.md)."""

from __future__ import annotations

from typing import Any

import msgspec

from application.calling.history import HistoryPage
from entrypoints.http.schemas.pages import _Page


class CallEventView(msgspec.Struct, kw_only=True):
    seq: int  # the event's version in the call's stream: 1 is call.queued
    type: str  # call.queued, call.turn, call.machine_detected, ... (docs/events.md "A call's history")
    at: str  # when it was recorded (UTC), not the simulated instant a simulated call takes place at
    by: str  # the key or user that caused it, or "callwright"
    data: dict[str, Any]  # the event's fields, secrets and keypad digits masked


class CallEventsPage(_Page, kw_only=True):
    data: list[CallEventView]  # type: ignore[assignment]

    @classmethod
    def of(cls, page: HistoryPage, next_cursor: str | None) -> CallEventsPage:
        views = [CallEventView(seq=e.seq, type=e.type, at=e.at, by=e.by, data=e.data) for e in page.events]
        return cls(data=views, next_cursor=next_cursor)
