"""Feeds a reactor from its application's Kafka topic as a member of the consumer group
``callwright.<reactor name>`` (ARCHITECTURE.md §6, scaled mode); the notification-log source is
``application.follower.ProjectionWorker``.

Per batch: skip the event types the reactor does not handle, skip the event ids already recorded
as processed, process the rest in order per partition, record each one as processed right after
it, then commit the offsets. A rebalance waits for the batch in hand (the revoke callback takes
the same lock), so a partition's next owner finds every event of it either recorded or not begun.
Effects of one event still run twice if a process dies between the effect and its record: reactors
are idempotent.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import Any

import structlog
from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.structs import ConsumerRecord, OffsetAndMetadata
from eventsourcing.application import Application
from eventsourcing.utils import get_topic

from adapters.kafka.envelope import decode, to_domain_event
from adapters.kafka.topics import ensure_topics
from adapters.postgres.processed_events import ProcessedEvents
from application.reactor import EventTracking, Reactor

log = structlog.get_logger(__name__)

Batch = dict[TopicPartition, list[ConsumerRecord]]
COMMIT_TIMEOUT = 10.0  # seconds; past it the member rejoins (the records are already recorded)


class KafkaEventSource:
    def __init__(
        self,
        app: Application[Any],
        reactor: Reactor,
        processed: ProcessedEvents,
        *,
        bootstrap: str,
        topic: str,
        group_prefix: str = "callwright.",
        partitions: int = 6,
        replication: int = 1,
        max_batch: int = 200,
        session_timeout_ms: int = 10_000,
        heartbeat_interval_ms: int = 1_000,
        client_id: str | None = None,
    ) -> None:
        self.app = app
        self.reactor = reactor
        self.processed = processed
        self.name = reactor.name
        self.group_id = f"{group_prefix}{reactor.name}"
        self.bootstrap = bootstrap
        self.topic = topic
        self.partitions = partitions
        self.replication = replication
        self.handled = frozenset(get_topic(cls) for cls in reactor.handles)
        self._consumer_options: dict[str, Any] = {
            "max_poll_records": max_batch,
            "session_timeout_ms": session_timeout_ms,
            "heartbeat_interval_ms": heartbeat_interval_ms,
            "client_id": client_id or f"callwright-{reactor.name}",
        }
        self.error: BaseException | None = None
        self.applied = 0  # events handed to the reactor
        self.duplicates = 0  # events skipped because already processed
        self.skipped = 0  # events of types the reactor does not handle
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._owned: set[TopicPartition] = set()
        self._lock: asyncio.Lock | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), name=f"kafka-{self.name}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Finish the batch in hand, commit, leave the group (its partitions move at once)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    @property
    def assignment(self) -> frozenset[TopicPartition]:
        return frozenset(self._owned)

    async def _main(self) -> None:
        self._lock = asyncio.Lock()
        backoff = 0.2
        while not self._stop.is_set():
            consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, group_id=self.group_id,
                                        enable_auto_commit=False, auto_offset_reset="earliest",
                                        metadata_max_age_ms=5_000, **self._consumer_options)
            try:
                await ensure_topics(self.bootstrap, [self.topic], partitions=self.partitions,
                                    replication=self.replication, client_id=f"{self.group_id}-admin")
                await consumer.start()
                consumer.subscribe([self.topic], listener=_Rebalance(self))
                await self._consume(consumer)
                backoff = 0.2
            except Exception as exc:  # broker or database away: report, wait, join again
                self.error = exc
                log.warning("kafka_source.failed", reactor=self.name, group=self.group_id,
                            error=f"{type(exc).__name__}: {exc}", retry_in=backoff)
            finally:
                await consumer.stop()
                self._owned = set()
            await asyncio.to_thread(self._stop.wait, backoff)
            backoff = min(backoff * 2, 10.0)

    async def _consume(self, consumer: AIOKafkaConsumer) -> None:
        assert self._lock is not None
        backoff = 0.2
        while not self._stop.is_set():
            batch = await consumer.getmany(timeout_ms=300)
            if not batch:
                continue
            failed = False
            async with self._lock:  # a revoke waits here until this batch is committed
                work = {tp: records for tp, records in batch.items() if tp in self._owned}
                done: dict[TopicPartition, int] = {}
                try:
                    await asyncio.to_thread(self._process, work, done)
                    self.error = None
                except Exception as exc:  # the reactor or the database failed: the rest comes again
                    failed, self.error = True, exc
                    log.exception("kafka_source.process_failed", reactor=self.name, retry_in=backoff)
                    for tp, records in work.items():
                        consumer.seek(tp, done.get(tp, records[0].offset))
                if done:  # aiokafka retries some commit errors forever (a topic gone): bound it
                    await asyncio.wait_for(consumer.commit({tp: OffsetAndMetadata(offset, "")
                                                            for tp, offset in done.items()}), COMMIT_TIMEOUT)
            if failed:
                await asyncio.to_thread(self._stop.wait, backoff)
                backoff = min(backoff * 2, 10.0)
            else:
                backoff = 0.2

    def _process(self, work: Batch, done: dict[TopicPartition, int]) -> None:
        """On a worker thread: eventsourcing and the reactor are synchronous."""
        for tp, records in work.items():
            envelopes = [self._decoded(record) for record in records]
            wanted = [e.event_id for e in envelopes if e is not None and e.type in self.handled]
            seen = self.processed.processed(wanted)
            for record, envelope in zip(records, envelopes, strict=True):
                if envelope is None or envelope.type not in self.handled:
                    self.skipped += 1
                elif envelope.event_id in seen:
                    self.duplicates += 1
                else:
                    tracking = EventTracking(envelope.application, envelope.notification_id,
                                             event_id=envelope.event_id)
                    self.reactor.process_event(to_domain_event(envelope, self.app), tracking)
                    self.processed.insert_tracking(tracking)
                    seen.add(envelope.event_id)
                    self.applied += 1
                done[tp] = record.offset + 1

    def _decoded(self, record: ConsumerRecord) -> Any:
        try:
            return decode(record.value)
        except Exception as exc:  # not ours to process: say so loudly, do not stop the group
            log.error("kafka_source.undecodable", reactor=self.name, topic=record.topic,
                      partition=record.partition, offset=record.offset, error=str(exc))
            return None


class _Rebalance(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, source: KafkaEventSource) -> None:
        self.source = source

    async def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        assert self.source._lock is not None
        async with self.source._lock:
            self.source._owned -= set(revoked)

    async def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        self.source._owned = set(assigned)
        log.info("kafka_source.assigned", reactor=self.source.name, group=self.source.group_id,
                 partitions=sorted(tp.partition for tp in assigned))
