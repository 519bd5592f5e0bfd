"""Scaled mode's settings (ARCHITECTURE.md §3, §6) and the sources it starts and stops together;
``entrypoints.bootstrap.kafka`` wires the relay and the reactors fed from Kafka.

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

from eventsourcing.application import Application

from application.reactor import EventSource


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
