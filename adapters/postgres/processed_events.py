"""The events a reactor has processed from Kafka, by ``event_id``: how a consumer-group source
drops the duplicates that at-least-once delivery brings (a relay retry, a rebalance).

It is also the tracking recorder such a reactor is built with: ``insert_tracking`` records."""

from __future__ import annotations

from collections.abc import Sequence

from eventsourcing.persistence import Tracking
from psycopg_pool import ConnectionPool

from application.reactor import EventTracking

TABLE = "kafka_processed_events"

_DDL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    reactor text NOT NULL,
    event_id text NOT NULL,
    application text NOT NULL,
    notification_id bigint NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (reactor, event_id)
)
"""
_SELECT = f"SELECT event_id FROM {TABLE} WHERE reactor = %s AND event_id = ANY(%s)"
_INSERT = f"""
INSERT INTO {TABLE} (reactor, event_id, application, notification_id) VALUES (%s, %s, %s, %s)
ON CONFLICT (reactor, event_id) DO NOTHING
"""


class ProcessedEvents:
    """One reactor's processed event ids (the database's ``search_path`` selects the schema)."""

    def __init__(self, pool: ConnectionPool, reactor: str) -> None:
        """``pool``: the process's shared pool (autocommit connections of the service's schema)."""
        self.reactor = reactor
        self._pool = pool

    def create_table(self) -> None:
        with self._pool.connection() as conn:
            conn.execute(_DDL)

    def processed(self, event_ids: Sequence[str]) -> set[str]:
        """Those of ``event_ids`` already recorded as processed."""
        if not event_ids:
            return set()
        with self._pool.connection() as conn:
            rows = conn.execute(_SELECT, (self.reactor, list(event_ids))).fetchall()
        return {row[0] for row in rows}

    def insert_tracking(self, tracking: Tracking) -> None:
        """Record the event as processed (again is harmless)."""
        if not isinstance(tracking, EventTracking) or not tracking.event_id:
            raise TypeError("Kafka-fed reactors record EventTracking (with the envelope's event_id)")
        with self._pool.connection() as conn:
            conn.execute(_INSERT, (self.reactor, tracking.event_id, tracking.application_name,
                                   tracking.notification_id), prepare=True)
