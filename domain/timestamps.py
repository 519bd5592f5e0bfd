"""Timestamps as the API and the read models show them: ISO 8601 in UTC with a ``Z``."""

from __future__ import annotations

from datetime import datetime, timezone


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
