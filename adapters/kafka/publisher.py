"""Publishes keyed messages to Kafka and returns only once the broker has acknowledged all of
them; a synchronous face over aiokafka (its producer lives on a private event-loop thread), for
the relay, which runs on a thread like the other followers of the notification log."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from adapters.kafka.topics import ensure_topics

T = TypeVar("T")


class BrokerUnavailableError(RuntimeError):
    """The broker did not acknowledge every message (down, unreachable, timed out)."""


class KafkaPublisher:
    def __init__(
        self,
        bootstrap: str,
        *,
        client_id: str = "callwright-relay",
        request_timeout_ms: int = 5_000,
        linger_ms: int = 5,
        max_batch_size: int = 512 * 1024,
    ) -> None:
        self.bootstrap = bootstrap
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self._options = {"linger_ms": linger_ms, "max_batch_size": max_batch_size}
        self._producer: AIOKafkaProducer | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"kafka-{client_id}", daemon=True)
        self._thread.start()

    def publish(self, topic: str, messages: Sequence[tuple[bytes, bytes]]) -> None:
        """Send ``(key, value)`` pairs in order; raise ``BrokerUnavailableError`` unless every one
        was acknowledged (some may have been: the caller sends them all again)."""
        self._call(self._publish(topic, messages))

    def ensure_topics(self, topics: Sequence[str], *, partitions: int, replication: int) -> list[str]:
        """Create the topics that do not exist yet; returns those created."""
        return self._call(self._ensure_topics(list(topics), partitions, replication))

    def reset(self) -> None:
        """Drop the producer (after a failure); the next publish connects afresh."""
        self._call(self._drop_producer())

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._call(self._drop_producer())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            if not self._thread.is_alive():
                self._loop.close()

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout=self.request_timeout_ms / 1000 * 4 + 30)
        except (KafkaError, OSError, TimeoutError) as exc:  # TimeoutError: asyncio's too
            future.cancel()  # a stuck call is given up
            raise BrokerUnavailableError(f"{type(exc).__name__}: {exc}") from exc

    async def _started_producer(self) -> AIOKafkaProducer:
        if self._producer is None:
            producer = AIOKafkaProducer(
                bootstrap_servers=self.bootstrap,
                client_id=self.client_id,
                acks="all",
                enable_idempotence=False,  # not required (at-least-once), and tansu lacks it
                request_timeout_ms=self.request_timeout_ms,
                **self._options,
            )
            try:
                await producer.start()
            except BaseException:
                await self._stop_quietly(producer)
                raise
            self._producer = producer
        return self._producer

    async def _publish(self, topic: str, messages: Sequence[tuple[bytes, bytes]]) -> None:
        producer = await self._started_producer()
        futures = [await producer.send(topic, value, key=key) for key, value in messages]
        results = await asyncio.gather(*futures, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _ensure_topics(self, topics: list[str], partitions: int, replication: int) -> list[str]:
        return await ensure_topics(self.bootstrap, topics, partitions=partitions, replication=replication,
                                   client_id=f"{self.client_id}-admin", request_timeout_ms=self.request_timeout_ms)

    async def _drop_producer(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            await self._stop_quietly(producer)

    async def _stop_quietly(self, producer: AIOKafkaProducer) -> None:
        try:
            await asyncio.wait_for(producer.stop(), timeout=self.request_timeout_ms / 1000)
        except Exception:  # noqa: S110 - a producer that cannot stop cleanly is dropped anyway
            pass
