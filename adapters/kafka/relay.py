"""The relay: publishes one application's notification log to its Kafka topic, in order, at least
once (ARCHITECTURE.md §6). The tracking moves only after the broker acknowledged the whole page.

A ``ProjectionWorker`` whose page step is "publish and wait": same thread, leader election by
advisory lock (one relay per application across processes, the others stand by) and backoff on
database errors. A broker outage pauses the relay inside the page, logged once, and it resumes
where the tracking stands; messages acknowledged before a failure are sent again (duplicates).
"""

from __future__ import annotations

import time
from typing import Any

import structlog
from eventsourcing.application import Application
from eventsourcing.persistence import Tracking

from adapters.kafka.envelope import check_plain_json, from_notification, message_key
from adapters.kafka.publisher import BrokerUnavailableError, KafkaPublisher
from application.follower import ProjectionWorker

log = structlog.get_logger(__name__)

REPORT_EVERY_SECONDS = 30.0


def _never_called(_event: Any, _tracking: Tracking) -> None:  # pragma: no cover - pages go through catch_up
    raise AssertionError("the relay publishes notifications, it does not process events")


class KafkaRelay(ProjectionWorker):
    def __init__(
        self,
        app: Application[Any],
        publisher: KafkaPublisher,
        tracking: Any,
        *,
        topic: str,
        partitions: int = 6,
        replication: int = 1,
        lock: Any = None,
        page_size: int = 1000,
        poll_interval: float = 0.1,
        first_backoff: float = 0.2,
        max_backoff: float = 5.0,
    ) -> None:
        check_plain_json(app)
        super().__init__(app, _never_called, tracking, name=f"kafka_relay.{app.name.lower()}",
                         poll_interval=poll_interval, lock=lock)
        self.publisher = publisher
        self.topic = topic
        self.partitions = partitions
        self.replication = replication
        self.page_size = page_size
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self.published = 0  # messages acknowledged by the broker, repeats included
        self.paused_since: float | None = None  # monotonic time the current outage began
        self._topic_ready = False

    def became_leader(self) -> None:
        log.info("kafka_relay.leading", application=self.app.name, topic=self.topic, position=self.position)

    def catch_up(self) -> int:
        """Publish everything recorded so far; returns how many events were relayed."""
        relayed = 0
        while not self._stop.is_set():
            notifications = self.app.recorder.select_notifications(
                start=self.position, limit=self.page_size, inclusive_of_start=False)
            if not notifications:
                break
            messages = [(message_key(n.originator_id), from_notification(self.app.name, n, self.app))
                        for n in notifications]
            if not self._deliver(messages):
                break  # stopped during an outage: the page goes again next time
            last = notifications[-1].id
            self.view.insert_tracking(Tracking(self.app.name, last))
            self._advance_to(last)
            relayed += len(notifications)
            if len(notifications) < self.page_size:
                break
        return relayed

    def _deliver(self, messages: list[tuple[bytes, bytes]]) -> bool:
        """Publish until the broker acknowledged all; False if stopped first."""
        backoff, attempts, last_report = self.first_backoff, 0, 0.0
        while True:
            try:
                if not self._topic_ready:
                    created = self.publisher.ensure_topics([self.topic], partitions=self.partitions,
                                                           replication=self.replication)
                    if created:
                        log.info("kafka_relay.topic_created", topic=self.topic, partitions=self.partitions)
                    self._topic_ready = True
                self.publisher.publish(self.topic, messages)
            except BrokerUnavailableError as exc:
                attempts += 1
                self.error = exc
                self._topic_ready = False  # a broker back from an outage may have lost its topics
                self.publisher.reset()
                now = time.monotonic()
                if self.paused_since is None:
                    self.paused_since = last_report = now
                    log.warning("kafka_relay.paused", application=self.app.name, topic=self.topic,
                                position=self.position, error=str(exc),
                                hint="the broker is unreachable; retrying, nothing is lost")
                elif now - last_report >= REPORT_EVERY_SECONDS:
                    last_report = now
                    log.warning("kafka_relay.still_paused", application=self.app.name, topic=self.topic,
                                position=self.position, attempts=attempts,
                                paused_seconds=round(now - self.paused_since), error=str(exc))
                if self._stop.wait(backoff):
                    return False
                backoff = min(backoff * 2, self.max_backoff)
                continue
            if self.paused_since is not None:
                log.info("kafka_relay.resumed", application=self.app.name, topic=self.topic, position=self.position,
                         attempts=attempts, paused_seconds=round(time.monotonic() - self.paused_since, 1))
                self.paused_since = None
                self.error = None
            self.published += len(messages)
            return True

    def stop(self) -> None:
        super().stop()
        self.publisher.close()
