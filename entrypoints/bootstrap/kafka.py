"""Scaled mode's wiring (ARCHITECTURE.md §3, §6): the relay of each application's log to Kafka,
and the reactors as members of their Kafka consumer groups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from eventsourcing.postgres import PostgresFactory, PostgresTrackingRecorder

from adapters.kafka.publisher import KafkaPublisher
from adapters.kafka.relay import KafkaRelay
from adapters.kafka.source import KafkaEventSource
from adapters.postgres.advisory_lock import AdvisoryLock
from adapters.postgres.processed_events import ProcessedEvents
from entrypoints.bootstrap.containers import Container
from entrypoints.bootstrap.core import bootstrap
from entrypoints.bootstrap.followers import ReactorFactory, reactor_factories
from entrypoints.settings import Settings
from entrypoints.workers.kafka_mode import KafkaSettings, Workers

log = structlog.get_logger(__name__)

RELAY_TRACKING_TABLE = "kafka_relay_tracking"


def bootstrap_worker(settings: Settings, kafka: KafkaSettings | None, *, projections: bool = True,
                     reactors: bool = True, **options: Any) -> tuple[Container, Workers]:
    """``callwright worker``: the read models and the reactors without HTTP; the reactors consume
    from Kafka when ``kafka`` is given, else they follow the notification log."""
    container = bootstrap(settings, **options)
    fed = Workers()
    if not reactors:
        container.reactors.clear()
    elif kafka is not None:
        fed = kafka_reactors(container, kafka)
    if not projections:
        container.projections.clear()
    return container, fed


def bootstrap_relay(settings: Settings, kafka: KafkaSettings, **options: Any) -> tuple[Container, Workers]:
    """``callwright relay``: the applications (no followers) and one relay per application."""
    container = bootstrap(settings, projections=False, **options)
    return container, relays(container, kafka)


def relays(container: Container, kafka: KafkaSettings, *, request_timeout_ms: int = 5_000,
           **options: Any) -> Workers:
    """One relay per application (Accounts, Calling), each the leader of its advisory lock;
    ``options`` go to ``KafkaRelay`` (page size, poll interval, backoff)."""
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
        processed = ProcessedEvents(database, name)
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
