"""The one list shape: ``{data: [...], next_cursor}``, plus ``total``, ``limit`` and ``offset`` where
the list is offset-paged. ``next_cursor`` is null on the last page and always on a list answered whole.

Fields kept beside ``data`` for one release (SPEC.md Versioning §2, CHANGELOG.md) say so. The
handlers pass the projections' rows as they are; the row types (list_rows.py) document them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from entrypoints.http.schemas.list_rows import AuditEvent, CallSummary, DeliveryView, EngineStats, SuppressionEntry
from entrypoints.http.schemas.webhooks import WebhookEndpointResponse

Row = dict[str, Any]


class _Page(msgspec.Struct, kw_only=True):
    data: list[Row]
    next_cursor: str | None


class CallsPage(_Page, kw_only=True):
    data: list[CallSummary]  # type: ignore[assignment]
    total: int
    limit: int
    offset: int


class AuditEventsPage(_Page, kw_only=True):
    data: list[AuditEvent]  # type: ignore[assignment]
    items: list[AuditEvent]  # deprecated: the same rows as data


class SuppressionsPage(_Page, kw_only=True):
    data: list[SuppressionEntry]  # type: ignore[assignment]
    limit: int
    offset: int


class WebhookEndpointsList(_Page, kw_only=True):
    """Every endpoint of the tenant at once: next_cursor is always null."""

    data: list[WebhookEndpointResponse]  # type: ignore[assignment]


class DeliveriesPage(_Page, kw_only=True):
    data: list[DeliveryView]  # type: ignore[assignment]
    total: int
    limit: int
    offset: int


class VoiceModelStats(_Page, kw_only=True):
    """One row per engine, whole: next_cursor is always null."""

    data: list[EngineStats]  # type: ignore[assignment]
    days: int
    since: str
    until: str
    mode: str | None
    engines: list[EngineStats]  # deprecated: the same rows as data
