"""Candidates for the watchdog: calls still queued or in progress long after they were created.

Only candidates: the Call aggregate decides whether each one really is overdue.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import psycopg

_OVERDUE = (
    "SELECT call_id FROM calls_list_v1 WHERE status IN ('queued', 'in_progress') AND created_at < %s "
    "ORDER BY created_at LIMIT %s"
)


def overdue_call_ids(conninfo: str, now: datetime, max_call_seconds: int, limit: int = 500) -> list[str]:
    cutoff = now - timedelta(seconds=max_call_seconds)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return [row[0] for row in conn.execute(_OVERDUE, (cutoff, limit)).fetchall()]


_LIVE_RUNNING = (
    "SELECT call_id FROM calls_list_v1 WHERE status = 'in_progress' AND mode = 'live' AND created_at < %s "
    "ORDER BY created_at LIMIT %s"
)


def running_live_call_ids(conninfo: str, created_before: datetime, limit: int = 500) -> list[str]:
    """Candidates for the reconciler: live calls still in progress that began before the cutoff."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return [row[0] for row in conn.execute(_LIVE_RUNNING, (created_before, limit)).fetchall()]


_QUEUED_SIMULATED = (
    "SELECT call_id, tenant_id FROM calls_list_v1 WHERE status = 'queued' AND mode = 'simulated' "
    "AND direction = 'outbound' AND created_at < %s ORDER BY created_at LIMIT %s"
)


def queued_simulated_calls(conninfo: str, created_before: datetime, limit: int = 500) -> list[tuple[str, str]]:
    """Simulated calls still queued since before the cutoff, as (call_id, tenant_id): the call
    runner takes them up again after a restart (they are claimed only when a worker is free)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return [(row[0], row[1]) for row in conn.execute(_QUEUED_SIMULATED, (created_before, limit)).fetchall()]


_RUNNING_SIMULATED = (
    "SELECT call_id, tenant_id FROM calls_list_v1 WHERE status = 'in_progress' AND mode = 'simulated' "
    "AND direction = 'outbound' AND created_at < %s ORDER BY created_at LIMIT %s"
)


def running_simulated_calls(conninfo: str, created_before: datetime, limit: int = 500) -> list[tuple[str, str]]:
    """Simulated calls in progress, created before the cutoff, as (call_id, tenant_id): candidates
    for a take-over, which the Call aggregate grants only when its runner's lease ran out."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return [(row[0], row[1]) for row in conn.execute(_RUNNING_SIMULATED, (created_before, limit)).fetchall()]
