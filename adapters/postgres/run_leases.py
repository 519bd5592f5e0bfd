"""Leases on queued calls a call runner has accepted but not yet started (ARCHITECTURE.md §7).

A runner accepts a queued simulated call (from the notification log, from Kafka, or from the
periodic resumer) by taking a lease on it here *before* its source is told the event was
processed, so the acceptance is durable: while the call waits in that runner's memory for a free
worker, the runner renews the lease; when the runner's process dies the lease runs out, and the
resumer of any live runner takes the call (``take`` grants an expired lease, or one already
ours). A runner that stops hands its waiting calls back (``release``). Once a worker tries the
call (the ``Call`` aggregate's own claim and lease take over from there) the row is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta

from psycopg_pool import ConnectionPool

TABLE = "call_run_leases"

_DDL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    call_id text PRIMARY KEY,
    tenant_id text NOT NULL,
    owner text NOT NULL,
    expires_at timestamptz NOT NULL,
    taken_at timestamptz NOT NULL DEFAULT now()
)
"""
# Granted when the call has no lease, its lease ran out, or it is already this owner's.
_TAKE = f"""
INSERT INTO {TABLE} AS lease (call_id, tenant_id, owner, expires_at)
SELECT call_id, tenant_id, %(owner)s, now() + %(lease)s
FROM unnest(%(call_ids)s::text[], %(tenant_ids)s::text[]) AS wanted (call_id, tenant_id)
ON CONFLICT (call_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,
    taken_at = now()
WHERE lease.expires_at < now() OR lease.owner = EXCLUDED.owner
RETURNING call_id
"""
_RENEW = f"UPDATE {TABLE} SET expires_at = now() + %s WHERE owner = %s AND call_id = ANY(%s)"
_RELEASE = f"DELETE FROM {TABLE} WHERE call_id = ANY(%s) AND owner = %s"
_FORGET = f"DELETE FROM {TABLE} WHERE call_id = %s"
# Rows of calls that ended elsewhere while leased (a cancel, a take-over) are swept once stale.
_SWEEP = f"DELETE FROM {TABLE} WHERE expires_at < now() - interval '1 hour'"


class RunLeases:
    def __init__(self, pool: ConnectionPool, *, owner: str, lease: timedelta) -> None:
        self.owner = owner
        self.lease = lease
        self._pool = pool

    def create_table(self) -> None:
        with self._pool.connection() as conn:
            conn.execute(_DDL)

    def take(self, calls: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """Lease those of ``calls`` (call_id, tenant_id) no live runner holds; the ones granted."""
        if not calls:
            return []
        tenants = dict(calls)
        with self._pool.connection() as conn:
            rows = conn.execute(_TAKE, {"owner": self.owner, "lease": self.lease, "call_ids": list(tenants),
                                        "tenant_ids": list(tenants.values())}, prepare=True).fetchall()
        granted = {row[0] for row in rows}
        return [(call_id, tenant_id) for call_id, tenant_id in calls if call_id in granted]

    def renew(self, call_ids: Iterable[str]) -> None:
        ids = list(call_ids)
        if ids:
            with self._pool.connection() as conn:
                conn.execute(_RENEW, (self.lease, self.owner, ids))

    def release(self, call_ids: Iterable[str]) -> None:
        """Hand calls back (this runner stops): any runner's resumer may take them at once."""
        ids = list(call_ids)
        if ids:
            with self._pool.connection() as conn:
                conn.execute(_RELEASE, (ids, self.owner))

    def forget(self, call_id: str) -> None:
        """The call was tried (started, or found not queued any more): its lease has done its work."""
        with self._pool.connection() as conn:
            conn.execute(_FORGET, (call_id,), prepare=True)

    def sweep(self) -> None:
        with self._pool.connection() as conn:
            conn.execute(_SWEEP)
