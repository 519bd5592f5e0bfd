"""Candidates for the watchdog: calls still queued or in progress long after they were created.

Only candidates: the Call aggregate decides whether each one really is overdue. ``pool`` is a
psycopg connection pool of the service's schema (``pool.connection()``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from typing import Any

_OVERDUE = (
    "SELECT call_id FROM calls_list_v1 WHERE status IN ('queued', 'in_progress') AND created_at < %s "
    "ORDER BY created_at LIMIT %s"
)


def overdue_call_ids(pool: Any, now: datetime, max_call_seconds: int, limit: int = 500) -> list[str]:
    cutoff = now - timedelta(seconds=max_call_seconds)
    with pool.connection() as conn:
        return [row[0] for row in conn.execute(_OVERDUE, (cutoff, limit)).fetchall()]


_LIVE_RUNNING = (
    "SELECT call_id FROM calls_list_v1 WHERE status = 'in_progress' AND mode = 'live' AND created_at < %s "
    "ORDER BY created_at LIMIT %s"
)


def running_live_call_ids(pool: Any, created_before: datetime, limit: int = 500) -> list[str]:
    """Candidates for the reconciler: live calls still in progress that began before the cutoff."""
    with pool.connection() as conn:
        return [row[0] for row in conn.execute(_LIVE_RUNNING, (created_before, limit)).fetchall()]


_SIMULATED = (
    "SELECT call_id, tenant_id FROM calls_list_v1 WHERE status = %s AND mode = 'simulated' "
    "AND direction = 'outbound' AND created_at < %s ORDER BY created_at LIMIT %s"
)


def simulated_calls(pool: Any, status: str, created_before: datetime, limit: int = 500) -> list[tuple[str, str]]:
    """Outbound simulated calls in ``status`` since before the cutoff, as (call_id, tenant_id): the
    call runner takes queued ones up again after a restart (they are claimed only when a worker is
    free), and offers running ones for a take-over (the aggregate grants it when their lease ran out)."""
    with pool.connection() as conn:
        return [(row[0], row[1]) for row in conn.execute(_SIMULATED, (status, created_before, limit)).fetchall()]
