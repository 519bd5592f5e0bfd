"""``/readyz``: can this instance serve, and is any follower of the event logs behind?

The database check (heads and the next event after each follower's position) runs on the async
read pool with its own connection and statement timeouts, under a deadline for the whole, so the
answer comes within a second whatever the database does. Lag is time: the age of the oldest event
a follower has not processed, read from that one event's stored timestamp (decoded by the
application's mapper), compared with ``Settings.ready_max_lag_seconds``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import structlog

from domain.timestamps import iso
from entrypoints.http.schemas.operations import FollowerCheck, PoolCheck, ReadinessChecks, ReadinessResponse
from entrypoints.http.services import Readiness

log = structlog.get_logger(__name__)

DATABASE_DEADLINE = 0.8  # seconds for the whole database check; the answer follows at once


async def readiness(service: Readiness) -> ReadinessResponse:
    followers = {**service.projections, **service.reactors}
    taken = {name: (worker.app, worker.position, worker.error) for name, worker in followers.items()}
    positions: dict[str, set[int]] = {}
    for app, position, _ in taken.values():
        positions.setdefault(app.name, set()).add(position)
    database, snapshots = await _database(service, positions)
    now = service.wall_clock()
    max_lag = service.max_lag_seconds
    checks = {name: _follower(app, position, error, snapshots, now) for name, (app, position, error) in taken.items()}
    pools = _pools(service)
    if database != "ok":
        status = "not_ready"
    elif any(check.error is not None or (check.lag_seconds or 0.0) > max_lag for check in checks.values()):
        status = "degraded"
    elif any(pool.exhausted for pool in pools.values()):
        status = "degraded"
    else:
        status = "ready"
    return ReadinessResponse(status=status, max_lag_seconds=max_lag,
                             checks=ReadinessChecks(database=database, followers=checks, pools=pools))


def _pools(service: Readiness) -> dict[str, PoolCheck]:
    """Each pool's use now (psycopg_pool's statistics); exhausted: all lent out, uses waiting."""
    checks: dict[str, PoolCheck] = {}
    for name, stats_of in service.pool_stats.items():
        stats = stats_of()
        size, available = stats.get("pool_size", 0), stats.get("pool_available", 0)
        top, waiting = stats.get("pool_max", size), stats.get("requests_waiting", 0)
        in_use = max(0, size - available)
        checks[name] = PoolCheck(max=top, size=size, in_use=in_use, waiting=waiting,
                                 exhausted=waiting > 0 and in_use >= top)
    if any(check.exhausted for check in checks.values()):
        log.warning("readiness.pool_exhausted", pools=sorted(n for n, c in checks.items() if c.exhausted))
    return checks


async def _database(service: Readiness, positions: dict[str, set[int]]) -> tuple[str, Mapping[str, Any]]:
    task = asyncio.ensure_future(service.probe.snapshot(positions))
    done, _ = await asyncio.wait({task}, timeout=DATABASE_DEADLINE)
    if not done:
        # Not awaited: a driver stuck on a dead connection must not hold the answer up.
        task.add_done_callback(_retrieve)
        task.cancel()
        log.warning("readiness.database", outcome="timeout")
        return "timeout", {}
    exc = task.exception()
    if exc is not None:
        outcome = "timeout" if isinstance(exc, TimeoutError) else "unavailable"
        log.warning("readiness.database", outcome=outcome, error=type(exc).__name__)
        return outcome, {}
    return "ok", task.result()


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _follower(app: Any, position: int, error: BaseException | None, snapshots: Mapping[str, Any],
              now: datetime) -> FollowerCheck:
    error_name = type(error).__name__ if error is not None else None
    snapshot = snapshots.get(app.name)
    if snapshot is None:
        return FollowerCheck(lag_seconds=None, behind_events=None, oldest_unprocessed_at=None, error=error_name)
    behind = max(0, snapshot.head - position)
    stored = snapshot.next_events.get(position) if behind else None
    if stored is None:
        return FollowerCheck(lag_seconds=0.0, behind_events=behind, oldest_unprocessed_at=None, error=error_name)
    try:
        oldest: datetime = app.mapper.to_domain_event(stored).timestamp
    except Exception as exc:  # an event this process cannot decode: report, do not guess
        log.warning("readiness.decode_failed", app=app.name, error=type(exc).__name__)
        return FollowerCheck(lag_seconds=None, behind_events=behind, oldest_unprocessed_at=None, error=error_name)
    lag = max(0.0, (now - oldest).total_seconds())
    return FollowerCheck(lag_seconds=round(lag, 3), behind_events=behind, oldest_unprocessed_at=iso(oldest),
                         error=error_name)
