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
from adapters.postgres.advisory_lock import schema_lock
from adapters.postgres.processed_events import ProcessedEvents
from entrypoints.bootstrap.containers import ServerContainer
from entrypoints.bootstrap.core import bootstrap
from entrypoints.bootstrap.followers import ReactorFactory, add_jobs, reactor_factories, singleton_lock
from entrypoints.bootstrap.roles import ROLES, worker_role
from entrypoints.settings import Settings
from entrypoints.workers.call_runner import CallRunner
from entrypoints.workers.kafka_mode import KafkaSettings, Workers

log = structlog.get_logger(__name__)

RELAY_TRACKING_TABLE = "kafka_relay_tracking"


def bootstrap_worker(settings: Settings, kafka: KafkaSettings | None, *, projections: bool = True,
                     reactors: bool = True, **options: Any) -> tuple[ServerContainer, Workers]:
    """``callwright worker``: the read models and the reactors without HTTP; the reactors consume
    from Kafka when ``kafka`` is given, else they follow the notification log."""
    role = worker_role(projections=projections, reactors=reactors, kafka=kafka is not None)
    container = bootstrap(settings, role=role, **options)
    fed = kafka_reactors(container, kafka) if role.reactors == "kafka" and kafka is not None else Workers()
    return container, fed


def bootstrap_relay(settings: Settings, kafka: KafkaSettings, **options: Any) -> tuple[ServerContainer, Workers]:
    """``callwright relay``: the applications (no followers) and one relay per application."""
    container = bootstrap(settings, role=ROLES["relay"], **options)
    return container, relays(container, kafka)


def relays(container: ServerContainer, kafka: KafkaSettings, *, request_timeout_ms: int = 5_000,
           **options: Any) -> Workers:
    """One relay per application (Accounts, Calling), each the leader of its advisory lock;
    ``options`` go to ``KafkaRelay`` (page size, poll interval, backoff)."""
    database = container.database
    size = container.pool_sizes.get("relay", 2)
    factory = PostgresFactory({**database.eventsourcing_env(pool_size=1, max_overflow=size - 1),
                               "PERSISTENCE_MODULE": "eventsourcing.postgres"})
    container.pool_stats["relay"] = factory.datastore.pool.get_stats
    tracking = PostgresTrackingRecorder(factory.datastore, tracking_table_name=RELAY_TRACKING_TABLE)
    with schema_lock(database):
        tracking.create_table()
    workers = Workers(closers=[factory.close])
    for app in (container.accounts, container.calling):
        lock = singleton_lock(container, f"kafka_relay:{app.name}")
        publisher = KafkaPublisher(kafka.bootstrap, client_id=f"callwright-relay-{app.name.lower()}",
                                   request_timeout_ms=request_timeout_ms)
        relay = KafkaRelay(app, publisher, tracking, topic=kafka.topic(app), partitions=kafka.partitions,
                           replication=kafka.replication, lock=lock, **options)
        app.on_saved(relay.poke)
        workers.sources[relay.name] = relay
    return workers


def kafka_reactors(container: ServerContainer, kafka: KafkaSettings, *,
                   reactors: Mapping[str, ReactorFactory] | None = None, **options: Any) -> Workers:
    """The container's reactors (``bootstrap.reactor_factories``) as members of their Kafka consumer
    groups; their notification-log followers are taken out of the container (call before
    ``start_projections``)."""
    database = container.database
    factories = reactor_factories(container) if reactors is None else reactors
    workers = Workers()
    pool = container.pool
    runner: CallRunner | None = None
    with schema_lock(database):
        ProcessedEvents(pool, "").create_table()  # one table, every reactor's rows
    for name, (app, build) in factories.items():
        processed = ProcessedEvents(pool, name)
        reactor = build(processed)
        if isinstance(reactor, CallRunner):
            runner = reactor
        source = KafkaEventSource(app, reactor, processed, bootstrap=kafka.bootstrap, topic=kafka.topic(app),
                                  group_prefix=kafka.group_prefix, partitions=kafka.partitions,
                                  replication=kafka.replication, **options)
        workers.sources[name] = source
        close = getattr(reactor, "close", None)
        if close is not None:
            workers.closers.append(close)
        container.reactors.pop(name, None)
    for name in container.reactors:
        log.warning("kafka_reactors.unwired", reactor=name, hint="no Kafka wiring yet; it follows the notification log")
    if reactors is None:
        add_jobs(container, runner)
    return workers
