"""The answer of ``/readyz``."""

from __future__ import annotations

from typing import Literal

import msgspec


class FollowerCheck(msgspec.Struct, kw_only=True):
    """One projection or reactor. ``lag_seconds``: the age of the oldest event it has not
    processed (0 when caught up); ``behind_events``: how many notification ids it is behind the
    log's head. Both are null when the database did not answer. ``error``: the type of the error
    its last attempt failed with (it retries), null when it is running fine."""

    lag_seconds: float | None
    behind_events: int | None
    oldest_unprocessed_at: str | None  # ISO 8601 UTC, null when caught up or unknown
    error: str | None


class ReadinessChecks(msgspec.Struct, kw_only=True):
    database: Literal["ok", "unavailable", "timeout"]
    followers: dict[str, FollowerCheck]


class ReadinessResponse(msgspec.Struct, kw_only=True):
    """``ready``: serving, every follower within ``max_lag_seconds``. ``degraded``: serving, but a
    follower is behind by more than ``max_lag_seconds`` or failing (reads of its views are stale,
    its reactions late); still HTTP 200. ``not_ready``: the database is unreachable or did not
    answer in time; HTTP 503."""

    status: Literal["ready", "degraded", "not_ready"]
    max_lag_seconds: float
    checks: ReadinessChecks


class Liveness(msgspec.Struct, kw_only=True):
    status: Literal["ok"]
