"""The database side of ``/readyz``: is PostgreSQL answering, where does each event log end, and
which event comes next after each follower's position.

Reads go through a small async pool of their own (requests queued for the read pool do not delay
it), in one short transaction with a statement timeout; waiting for a connection has its own
timeout. The caller puts a deadline on the whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from psycopg import errors, sql
from psycopg_pool import AsyncConnectionPool, PoolTimeout

_NEXT = """
SELECT p.position, e.originator_id, e.originator_version, e.topic, e.state
FROM unnest(%s::bigint[]) AS p(position)
JOIN LATERAL (
    SELECT originator_id, originator_version, topic, state FROM {table}
    WHERE notification_id > p.position ORDER BY notification_id LIMIT 1
) AS e ON true
"""


@dataclass
class LogSnapshot:
    """One application's log: its head, and the first stored event after each asked position
    (absent when nothing follows it)."""

    head: int
    next_events: dict[int, StoredEvent] = field(default_factory=dict)


class ReadinessProbe:
    def __init__(self, pool: AsyncConnectionPool, *, schema: str, tables: Mapping[str, str],
                 timeout: float = 0.5) -> None:
        """``tables``: the events table of each application, by application name."""
        self.pool = pool
        self.timeout = timeout
        self._heads = {name: sql.SQL("SELECT max(notification_id) FROM {}").format(sql.Identifier(schema, table))
                       for name, table in tables.items()}
        self._next = {name: sql.SQL(_NEXT).format(table=sql.Identifier(schema, table))
                      for name, table in tables.items()}
        self._statement_timeout = f"SET LOCAL statement_timeout = {max(1, int(timeout * 1000))}"

    async def snapshot(self, positions: Mapping[str, set[int]]) -> dict[str, LogSnapshot]:
        """Each application's head and the next event after each of ``positions[name]``.

        Raises ``TimeoutError`` when no connection comes, or a statement does not end, within the
        timeout; the driver's other errors when the database fails."""
        try:
            return await self._snapshot(positions)
        except (PoolTimeout, errors.QueryCanceled) as exc:
            raise TimeoutError(str(exc)) from exc

    async def _snapshot(self, positions: Mapping[str, set[int]]) -> dict[str, LogSnapshot]:
        snapshots: dict[str, LogSnapshot] = {}
        async with self.pool.connection(timeout=self.timeout) as conn, conn.transaction():
            await conn.execute(self._statement_timeout)
            for name, head_statement in self._heads.items():
                row = await (await conn.execute(head_statement)).fetchone()
                snapshot = snapshots[name] = LogSnapshot(head=int(row[0] or 0) if row else 0)
                behind = sorted(p for p in positions.get(name, set()) if p < snapshot.head)
                if not behind:
                    continue
                rows = await (await conn.execute(self._next[name], (behind,))).fetchall()
                for position, originator_id, version, topic, state in rows:
                    snapshot.next_events[int(position)] = StoredEvent(
                        originator_id=originator_id if isinstance(originator_id, UUID) else UUID(str(originator_id)),
                        originator_version=version, topic=topic, state=bytes(state),
                    )
        return snapshots
