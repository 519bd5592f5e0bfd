"""Scaled mode's wiring (ARCHITECTURE.md §3, §6): the relay, and the reactors fed from Kafka,
built around a bootstrapped ``Container`` so that ``bootstrap.py`` stays the embedded default.

Settings: ``CALLWRIGHT_KAFKA_BOOTSTRAP`` (host:port[,host:port]; unset = no Kafka),
``CALLWRIGHT_KAFKA_TOPIC_PREFIX`` (default ``callwright.``; topic = prefix + application name in
lower case), ``CALLWRIGHT_KAFKA_PARTITIONS`` (6) and ``CALLWRIGHT_KAFKA_REPLICATION`` (1), used
only when a topic is created.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
from eventsourcing.application import Application

from adapters.kafka.publisher import KafkaPublisher
from adapters.postgres.advisory_lock import AdvisoryLock
from adapters.postgres.processed_events import ProcessedEvents
from application.reactor import EventSource, Reactor
from entrypoints.bootstrap import Container, reactor_factories

# A reactor's application, and how to build it given its tracking (see bootstrap.reactor_factories).
ReactorFactory = tuple[Application[Any], Callable[[Any], Reactor]]
from entrypoints.workers.kafka_source import KafkaEventSource
from entrypoints.workers.relay import KafkaRelay

log = structlog.get_logger(__name__)

RELAY_TRACKING_TABLE = "kafka_relay_tracking"


@dataclass(frozen=True, kw_only=True)
class KafkaSettings:
    bootstrap: str
    topic_prefix: str = "callwright."
    group_prefix: str = "callwright."
    partitions: int = 6
    replication: int = 1

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> KafkaSettings | None:
        """None when ``CALLWRIGHT_KAFKA_BOOTSTRAP`` is not set (embedded: no Kafka)."""
        env = os.environ if env is None else env
        bootstrap = env.get("CALLWRIGHT_KAFKA_BOOTSTRAP", "").strip()
        if not bootstrap:
            return None
        return cls(
            bootstrap=bootstrap,
            topic_prefix=env.get("CALLWRIGHT_KAFKA_TOPIC_PREFIX", "callwright."),
            partitions=int(env.get("CALLWRIGHT_KAFKA_PARTITIONS") or 6),
            replication=int(env.get("CALLWRIGHT_KAFKA_REPLICATION") or 1),
        )

    def topic(self, app: Application[Any]) -> str:
        return f"{self.topic_prefix}{app.name.lower()}"


@dataclass
class Workers:
    """Sources started and stopped together, and what to close after them."""

    sources: dict[str, EventSource] = field(default_factory=dict)
    closers: list[Callable[[], Any]] = field(default_factory=list)

    def start(self) -> None:
        for source in self.sources.values():
            source.start()

    def stop(self) -> None:
        for source in self.sources.values():
            source.stop()
        for close in reversed(self.closers):
            close()


def relays(container: Container, kafka: KafkaSettings, *, request_timeout_ms: int = 5_000,
           **options: Any) -> Workers:
    """One relay per application (Accounts, Calling), each the leader of its advisory lock;
    ``options`` go to ``KafkaRelay`` (page size, poll interval, backoff)."""
    from eventsourcing.postgres import PostgresFactory, PostgresTrackingRecorder

    database = container.database
    if database is None:
        raise RuntimeError("the relay needs PostgreSQL")
    factory = PostgresFactory({**database.eventsourcing_env(), "PERSISTENCE_MODULE": "eventsourcing.postgres"})
    tracking = PostgresTrackingRecorder(factory.datastore, tracking_table_name=RELAY_TRACKING_TABLE)
    tracking.create_table()
    workers = Workers(closers=[factory.close])
    for app in (container.accounts, container.calling):
        lock = AdvisoryLock(database.conninfo(), f"kafka_relay:{database.schema}:{app.name}")
        publisher = KafkaPublisher(kafka.bootstrap, client_id=f"callwright-relay-{app.name.lower()}",
                                   request_timeout_ms=request_timeout_ms)
        relay = KafkaRelay(app, publisher, tracking, topic=kafka.topic(app), partitions=kafka.partitions,
                           replication=kafka.replication, lock=lock, **options)
        app.on_saved(relay.poke)
        workers.sources[relay.name] = relay
    return workers


def kafka_reactors(container: Container, kafka: KafkaSettings, *,
                   reactors: Mapping[str, ReactorFactory] | None = None, **options: Any) -> Workers:
    """The container's reactors (``bootstrap.reactor_factories``) as members of their Kafka consumer
    groups; their notification-log followers are taken out of the container (call before
    ``start_projections``)."""
    database = container.database
    if database is None:
        raise RuntimeError("Kafka-fed reactors need PostgreSQL")
    factories = reactor_factories(container) if reactors is None else reactors
    workers = Workers()
    for name, (app, build) in factories.items():
        processed = ProcessedEvents(database.conninfo(), name)
        processed.create_table()
        reactor = build(processed)
        source = KafkaEventSource(app, reactor, processed, bootstrap=kafka.bootstrap, topic=kafka.topic(app),
                                  group_prefix=kafka.group_prefix, partitions=kafka.partitions,
                                  replication=kafka.replication, **options)
        workers.sources[name] = source
        close = getattr(reactor, "close", None)
        if close is not None:
            workers.closers.append(close)
        workers.closers.append(processed.close)
        container.reactors.pop(name, None)
    for name in container.reactors:
        log.warning("kafka_reactors.unwired", reactor=name, hint="no Kafka wiring yet; it follows the notification log")
    return workers
