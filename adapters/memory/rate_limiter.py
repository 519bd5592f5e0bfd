"""Fixed-window rate limiter in process memory, for unit tests of the popo backend."""

from __future__ import annotations

import threading
from datetime import datetime

from application.ports import RateDecision


def decide(hits: int, *, limit: int, window_start: int, window_seconds: int, now: datetime) -> RateDecision:
    reset_at = window_start + window_seconds
    return RateDecision(
        allowed=hits <= limit,
        limit=limit,
        remaining=max(0, limit - hits),
        reset_at=reset_at,
        retry_after=max(1, reset_at - int(now.timestamp())),
    )


class MemoryRateLimiter:
    def __init__(self) -> None:
        self._hits: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()

    def hit(self, bucket: str, *, limit: int, window_seconds: int, now: datetime) -> RateDecision:
        window_start = int(now.timestamp()) // window_seconds * window_seconds
        with self._lock:
            hits = self._hits.get((bucket, window_start), 0) + 1
            self._hits[(bucket, window_start)] = hits
        return decide(hits, limit=limit, window_start=window_start, window_seconds=window_seconds, now=now)
