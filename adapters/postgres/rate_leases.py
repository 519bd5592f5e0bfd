"""Per-key rate limits counted in process memory, from leases of the shared budget.

A process takes a slice of a bucket's budget for the current window from ``rate_limit_windows``
(one upsert that adds the slice to the window's hits) and counts requests against it in memory;
only when the slice is used up does it take the next one. Slices start at one request and double
up to a sixteenth of the limit, so a key served by one process costs a round trip every
``limit / 16`` requests once it is busy, and none at all for a quiet one between windows.

What the shared table holds is what every process may admit: a slice is granted only from what is
left of the limit (a request past it adds its hits but is granted nothing), so the processes
together never admit more than the budget in a window. The drift is the other way, and bounded:
a slice another process took and has not used is lost to this one, so a key moved between
processes may be refused up to ``limit / 16`` requests early per other process; and
``X-RateLimit-Remaining`` counts other processes' use only up to this process's last slice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from adapters.memory.rate_limiter import decide
from application.ports import RateDecision

SLICES = 16  # the largest slice is limit / SLICES
MAX_BUCKETS = 100_000

Reserve = Callable[[str, int, int], Awaitable[tuple[int, int]]]  # (bucket, window, count) -> (total, _)


def largest_slice(limit: int) -> int:
    return max(1, limit // SLICES)


@dataclass
class _Lease:
    window_start: int
    size: int = 0  # of the last slice asked for
    left: int = 0  # requests this process may still admit from its slices
    total: int = 0  # the window's admitted hits in every process, as of this process's last slice
    spent_at: int | None = None  # the limit the window was found used up at


class RateLeases:
    def __init__(self, reserve: Reserve) -> None:
        self._reserve = reserve
        self._leases: dict[str, _Lease] = {}

    async def hit(self, bucket: str, *, limit: int, window_seconds: int, now: datetime) -> RateDecision:
        window_start = int(now.timestamp()) // window_seconds * window_seconds
        lease = self._leases.get(bucket)
        if lease is None or lease.window_start != window_start:
            if len(self._leases) >= MAX_BUCKETS:
                self._leases.clear()  # unused slices of old windows are lost, never over-admitted
            lease = self._leases[bucket] = _Lease(window_start)
        if lease.left == 0 and lease.spent_at != limit:
            await self._take(bucket, lease, limit)
        if lease.left > 0:
            lease.left -= 1
            used = lease.total - lease.left
        else:
            used = limit + 1
        return decide(used, limit=limit, window_start=window_start, window_seconds=window_seconds, now=now)

    async def _take(self, bucket: str, lease: _Lease, limit: int) -> None:
        size = min(largest_slice(limit), max(1, lease.size * 2))
        lease.size = size  # a concurrent request of this process asks for the next size
        total, _ = await self._reserve(bucket, lease.window_start, size)
        before = total - size
        granted = min(size, max(0, limit - before))
        lease.left += granted
        lease.total = max(lease.total, min(limit, before + granted))  # past the limit: asked, not admitted
        if granted < size:
            lease.spent_at = limit
