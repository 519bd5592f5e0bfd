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


class PoolCheck(msgspec.Struct, kw_only=True):
    """One connection pool of this process. ``max``: the most connections it may hold (its share
    of ``CALLWRIGHT_DATABASE_MAX_CONNECTIONS``); ``size``: held now; ``in_use``: lent out now;
    ``waiting``: uses waiting for a connection. ``exhausted``: every connection is lent out and
    uses are waiting (they fail with 503 after ``CALLWRIGHT_DATABASE_WAIT_SECONDS``)."""

    max: int
    size: int
    in_use: int
    waiting: int
    exhausted: bool


class ReadinessChecks(msgspec.Struct, kw_only=True):
    database: Literal["ok", "unavailable", "timeout"]
    followers: dict[str, FollowerCheck]
    pools: dict[str, PoolCheck] = msgspec.field(default_factory=dict)


class ReadinessResponse(msgspec.Struct, kw_only=True):
    """``ready``: serving, every follower within ``max_lag_seconds``. ``degraded``: serving, but a
    follower is behind by more than ``max_lag_seconds`` or failing (reads of its views are stale,
    its reactions late), or a connection pool is exhausted; still HTTP 200. ``not_ready``: the database is unreachable or did not
    answer in time; HTTP 503."""

    status: Literal["ready", "degraded", "not_ready"]
    max_lag_seconds: float
    checks: ReadinessChecks


class Liveness(msgspec.Struct, kw_only=True):
    status: Literal["ok"]
