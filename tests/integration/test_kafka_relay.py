"""Events out through Kafka (ARCHITECTURE.md §6) against a real Kafka-protocol broker (tansu):
the envelope, the relay (every event once, in order per aggregate, nothing lost in an outage)
and reactors fed by a consumer group (each event applied once, across a rebalance)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest
from eventsourcing.application import Application
from litestar.testing import TestClient

from adapters.kafka.envelope import (
    EnvelopeUnsupportedError,
    check_plain_json,
    decode,
    encode,
    event_id,
    from_notification,
    to_domain_event,
)
from adapters.postgres.database import DatabaseConfig
from application.accounts.registration import register
from application.reactor import EventSource, Reactor
from domain.calls.call import Call
from domain.calls.call_rules import new_call_id
from domain.calls.suppression import SuppressionEntry
from domain.timestamps import iso
from entrypoints.bootstrap import Container
from entrypoints.http.app import create_app
from entrypoints.workers.call_runner import CallRunner
from entrypoints.bootstrap import kafka_reactors, relays
from entrypoints.workers.kafka_mode import KafkaSettings, Workers
from tests.fakes.clock import FakeClock
from tests.kafka_support import Broker, kafka_broker, read_topics, started_broker, wait_until  # noqa: F401
from tests.support.call_requests import call_body
from tests.support.calls import queued_call
from tests.support.setup import PASSWORD, approve, signup

TENANT = "ten_" + "b" * 32

pytestmark = pytest.mark.timeout(120)  # a hung consumer or broker fails the test, not the run


@pytest.fixture
def kafka(db: DatabaseConfig, kafka_broker: Broker) -> KafkaSettings:  # noqa: F811
    """Topics and groups of their own per test, on the session's broker."""
    prefix = f"cw.{db.schema}."
    return KafkaSettings(bootstrap=kafka_broker.bootstrap, topic_prefix=prefix, group_prefix=prefix, partitions=6)


def suppress(container: Container, clock: FakeClock, numbers: list[str], batch: int = 100) -> None:
    """One ``Added`` event per number, saved ``batch`` aggregates at a time."""
    for start in range(0, len(numbers), batch):
        container.calling.save(*[SuppressionEntry(tenant_id=TENANT, e164=number, reason=None, expires_at=None,
                                                  by="test", at=clock()) for number in numbers[start:start + batch]])


def numbers(count: int, first: int = 0) -> list[str]:
    return [f"+4420718{i:05d}" for i in range(first, first + count)]


def completed_call(container: Container, clock: FakeClock) -> None:
    container.calling.save(_completed(clock))


def complete_calls(container: Container, clock: FakeClock, count: int, batch: int = 50) -> None:
    """``count`` calls that ran to ``completed`` (eight events each: the claim is Started with its Leased), saved ``batch`` at a time."""
    for start in range(0, count, batch):
        container.calling.save(*[_completed(clock) for _ in range(min(batch, count - start))])


def _completed(clock: FakeClock) -> Call:
    call = queued_call(tenant_id=TENANT, call_id=new_call_id(), direction="outbound", mode="simulated", to="+442071838750",
                       from_number="+15005550006", objective="Confirm the appointment",
                       outcome_schema={"confirmed": {"type": "boolean"}}, consent_type="prior_express",
                       consent_record_id=None, voice_id=None, voice_engine="alpha_25", language="en",
                       metadata={"ref": "Zoë ☎"}, variables={}, simulation={"facts": {"confirmed": True}},
                       created_by="key_test", max_duration_seconds=600, at=clock())
    call.start(clock())
    call.answer("human", clock())
    call.record_turn("agent", "Hello, is this a good time?", clock())
    call.end(12, clock())
    call.record_outcome({"confirmed": True}, 0.9, {"input_tokens": 12}, clock())
    call.complete(Decimal("0.0200"), Decimal("0.0015"), clock())
    return call


def some_events(container: Container, clock: FakeClock) -> None:
    """Events of both applications, several per aggregate."""
    for n in range(2):
        register(container.accounts, email=f"relay{n}@example.com", password=PASSWORD, name=f"Relay {n}")
    suppress(container, clock, numbers(60))
    for number in numbers(20):
        entry = container.calling.find(SuppressionEntry, SuppressionEntry.create_id(TENANT, number))
        assert entry is not None
        entry.remove("test", clock())
        container.calling.save(entry)
    completed_call(container, clock)


def all_notifications(app: Any) -> list[Any]:
    return app.recorder.select_notifications(start=1, limit=1_000_000)


def expected_ids(app: Any) -> set[str]:
    return {event_id(app.name, n.originator_id, n.originator_version) for n in all_notifications(app)}


def relayed_everything(workers: Workers, container: Container) -> bool:
    heads = {"Accounts": container.accounts.head(), "Calling": container.calling.head()}
    relays_: list[Any] = list(workers.sources.values())
    return all(relay.position >= heads[relay.app.name] for relay in relays_)


def test_envelope_round_trip_gives_back_the_same_domain_event(container: Container, clock: FakeClock) -> None:
    some_events(container, clock)
    for app in (container.accounts, container.calling):
        notifications = all_notifications(app)
        assert len(notifications) > 5
        for notification in notifications:
            original = app.mapper.to_domain_event(notification)
            envelope = decode(from_notification(app.name, notification))
            assert envelope.event_id == event_id(app.name, notification.originator_id, notification.originator_version)
            assert envelope.event_id.startswith("evt_") and len(envelope.event_id) == 36
            assert (envelope.type, envelope.application, envelope.aggregate_id, envelope.version,
                    envelope.notification_id) == (notification.topic, app.name, str(notification.originator_id),
                                                  notification.originator_version, notification.id)
            assert envelope.occurred_at == iso(original.timestamp)
            assert envelope.tenant_id == getattr(original, "tenant_id", None)
            assert envelope.data == json.loads(notification.state)
            assert decode(encode(envelope)) == envelope
            rebuilt = to_domain_event(envelope, app)
            assert type(rebuilt) is type(original)
            assert vars(rebuilt) == vars(original)


def test_relay_publishes_every_event_of_both_applications_once_in_order_per_aggregate(
        container: Container, clock: FakeClock, kafka: KafkaSettings) -> None:
    some_events(container, clock)
    leader, standby = relays(container, kafka, poll_interval=0.05), relays(container, kafka, poll_interval=0.05)
    leader.start()
    standby.start()  # a second copy of the relay (another process in production) stands by
    try:
        wait_until(lambda: relayed_everything(leader, container) and relayed_everything(standby, container))
        suppress(container, clock, numbers(5, first=500))  # woken by the save, not only by polling
        wait_until(lambda: relayed_everything(leader, container))
    finally:
        leader.stop()
        standby.stop()
    for app in (container.accounts, container.calling):
        messages = read_topics(kafka.bootstrap, [kafka.topic(app)])
        envelopes = [decode(message.value) for message in messages]
        counts = Counter(envelope.event_id for envelope in envelopes)
        assert set(counts) == expected_ids(app)
        assert set(counts.values()) == {1}, "each event once"
        partition_of: dict[str, int] = {}
        last_version: dict[str, int] = defaultdict(int)
        last_position: dict[int, int] = defaultdict(int)
        log_events = {n.id: app.mapper.to_domain_event(n) for n in all_notifications(app)}
        for message, envelope in zip(messages, envelopes, strict=True):
            assert message.key == uuid.UUID(envelope.aggregate_id).bytes
            assert partition_of.setdefault(envelope.aggregate_id, message.partition) == message.partition
            assert envelope.version > last_version[envelope.aggregate_id], "in order per aggregate"
            assert envelope.notification_id > last_position[message.partition], "in log order per partition"
            last_version[envelope.aggregate_id] = envelope.version
            last_position[message.partition] = envelope.notification_id
            assert vars(to_domain_event(envelope, app)) == vars(log_events[envelope.notification_id])
        assert len({message.partition for message in messages}) > 1


def test_kafka_settings_come_from_the_environment() -> None:
    assert KafkaSettings.from_env({}) is None  # embedded default: no Kafka
    kafka = KafkaSettings.from_env({"CALLWRIGHT_KAFKA_BOOTSTRAP": "kafka:9092", "CALLWRIGHT_KAFKA_PARTITIONS": "12",
                                    "CALLWRIGHT_KAFKA_TOPIC_PREFIX": "prod.cw."})
    assert kafka is not None and (kafka.bootstrap, kafka.partitions, kafka.replication) == ("kafka:9092", 12, 1)
    assert kafka.topic(Application({"PERSISTENCE_MODULE": "eventsourcing.popo"})) == "prod.cw.application"
    assert KafkaSettings(bootstrap="k:9092").topic(Application({"PERSISTENCE_MODULE": "eventsourcing.popo"})) \
        == "callwright.application"


def test_an_application_that_encrypts_its_events_is_refused() -> None:
    from eventsourcing.cryptography import AESCipher

    app = Application({"PERSISTENCE_MODULE": "eventsourcing.popo", "CIPHER_KEY": AESCipher.create_key(16),
                       "CIPHER_TOPIC": "eventsourcing.cryptography:AESCipher"})
    with pytest.raises(EnvelopeUnsupportedError):
        check_plain_json(app)


@pytest.mark.slow
def test_a_broker_outage_pauses_the_relay_and_every_event_arrives_after_it(
        container: Container, clock: FakeClock, db: DatabaseConfig, service_log: Any, tmp_path: Path) -> None:
    """1,000 call completions (8,000 events); the broker is down while 400 of the calls are saved.
    Memory storage loses the broker's data on restart, so what was published before the outage is
    read before it, and the rest after."""
    broker = started_broker(log_path=tmp_path / "tansu.log")
    kafka = KafkaSettings(bootstrap=broker.bootstrap, topic_prefix=f"cw.{db.schema}.", partitions=6)
    workers = relays(container, kafka, request_timeout_ms=1_500, poll_interval=0.05, max_backoff=0.5)
    relay: Any = workers.sources["kafka_relay.calling"]
    topic = kafka.topic(container.calling)
    workers.start()
    try:
        complete_calls(container, clock, 300)
        wait_until(lambda: relay.position >= container.calling.head())
        before = [decode(message.value) for message in read_topics(broker.bootstrap, [topic])]
        published_before = container.calling.head()
        broker.stop()
        for _ in range(4):  # saved during the outage, a batch at a time
            complete_calls(container, clock, 100)
            time.sleep(0.1)
        wait_until(lambda: relay.paused_since is not None)
        assert relay.position <= published_before, "the tracking never passes an unacknowledged event"
        broker.start()
        complete_calls(container, clock, 300)
        wait_until(lambda: relay.position >= container.calling.head() and relay.paused_since is None, timeout=60)
        after = [decode(message.value) for message in read_topics(broker.bootstrap, [topic])]
    finally:
        workers.stop()
        broker.stop()
    expected = expected_ids(container.calling)
    assert len(expected) == 8_000
    relayed = [envelope.event_id for envelope in before + after]
    assert set(relayed) == expected, "nothing lost"
    completions = {e.aggregate_id for e in before + after if e.type.endswith("Call.Completed")}
    assert len(completions) == 1_000
    duplicates = len(relayed) - len(expected)
    print(f"outage: {len(before)} events before, {len(after)} after, {duplicates} duplicates")
    logged = [json.loads(line) for line in service_log.getvalue().splitlines() if line.startswith("{")]
    paused = [line for line in logged if line.get("event") == "kafka_relay.paused"]
    assert paused and paused[0]["application"] == "Calling" and paused[0]["level"] == "warning"
    assert any(line.get("event") == "kafka_relay.resumed" for line in logged)


class CountingReactor:
    """Counts how often each event reaches its effect, in its own commit (like the call runner's
    claim), keyed by event id; a slow effect keeps batches in flight during the rebalance."""

    name = "counting"
    handles = (SuppressionEntry.Added, SuppressionEntry.Removed)

    def __init__(self, conninfo: str, tracking: Any, member: str, delay: float = 0.004) -> None:
        self.conninfo = conninfo
        self.tracking = tracking
        self.member = member
        self.delay = delay
        self._local = threading.local()
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS counting_applied "
                         "(event_id text PRIMARY KEY, applied int NOT NULL, members text[] NOT NULL)")

    def process_event(self, event: Any, tracking: Any) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = psycopg.connect(self.conninfo, autocommit=True)
        key = event_id("Calling", event.originator_id, event.originator_version)
        conn.execute("INSERT INTO counting_applied VALUES (%s, 1, ARRAY[%s]) ON CONFLICT (event_id) DO UPDATE "
                     "SET applied = counting_applied.applied + 1, members = counting_applied.members || ARRAY[%s]",
                     (key, self.member, self.member))
        time.sleep(self.delay)
        self.tracking.insert_tracking(tracking)


@pytest.mark.slow
def test_a_reactor_in_a_consumer_group_applies_each_event_once_across_a_rebalance(
        container: Container, clock: FakeClock, kafka: KafkaSettings, db: DatabaseConfig) -> None:
    """Two members share the partitions; one leaves mid-stream and the other takes over. Every
    event is in the topic twice (the relay lost its tracking and published everything again)."""

    def member(name: str) -> Workers:
        factory = (container.calling, lambda tracking: CountingReactor(db.conninfo(), tracking, name))
        return kafka_reactors(container, kafka, reactors={"counting": factory}, heartbeat_interval_ms=200,
                              session_timeout_ms=2_500, max_batch=40)

    first, second = member("first"), member("second")
    sources: list[Any] = [first.sources["counting"], second.sources["counting"]]
    assert all(isinstance(source, EventSource) for source in sources)
    assert isinstance(sources[0].reactor, Reactor)
    total = 600
    first.start()
    second.start()
    relay = relays(container, kafka, poll_interval=0.05)
    try:
        wait_until(lambda: all(source.assignment for source in sources), timeout=30)
        suppress(container, clock, numbers(total))
        completed_call(container, clock)  # events the reactor does not handle: skipped
        relay.start()
        wait_until(lambda: sum(source.applied for source in sources) >= total // 3, timeout=30)
        assert all(source.applied > 0 for source in sources), "both members had partitions"
        first.stop()  # leaves the group: its partitions move to the second member
        wait_until(lambda: len(sources[1].assignment) == kafka.partitions, timeout=30)
        wait_until(lambda: relayed_everything(relay, container))
        relay.stop()
        with psycopg.connect(db.conninfo(), autocommit=True) as conn:
            conn.execute("DELETE FROM kafka_relay_tracking")
        relay = relays(container, kafka, poll_interval=0.05)  # publishes everything a second time
        relay.start()
        wait_until(lambda: relayed_everything(relay, container))
        wait_until(lambda: sources[1].duplicates >= total and sum(s.applied for s in sources) >= total, timeout=30)
    finally:
        relay.stop()
        first.stop()
        second.stop()
    with psycopg.connect(db.conninfo(), autocommit=True) as conn:
        rows = conn.execute("SELECT event_id, applied, members FROM counting_applied").fetchall()
    wanted = {event_id("Calling", n.originator_id, n.originator_version) for n in all_notifications(container.calling)
              if n.topic.startswith("domain.calls.suppression:SuppressionEntry.")}
    assert {row[0] for row in rows} == wanted, "no event missing"
    assert [row for row in rows if row[1] != 1] == [], "none applied twice"
    assert sum(source.applied for source in sources) == total
    assert sum(source.skipped for source in sources) >= 7  # the call's events, twice
    assert {member for row in rows for member in row[2]} == {"first", "second"}


@pytest.mark.slow
def test_the_call_runner_runs_calls_from_kafka(container: Container, kafka: KafkaSettings) -> None:
    """Scaled mode end to end: a call created over HTTP reaches the call runner through the relay
    and the consumer group (not through the notification log), and completes."""
    fed = kafka_reactors(container, kafka, heartbeat_interval_ms=200)
    source: Any = fed.sources["call_runner"]
    assert "call_runner" not in container.reactors  # taken off the notification log
    assert isinstance(source.reactor, CallRunner)
    relay = relays(container, kafka, poll_interval=0.05)
    with TestClient(create_app(container), raise_server_exceptions=False) as client:
        account = signup(client)
        approve(container, account)
        fed.start()
        relay.start()
        try:
            wait_until(lambda: source.assignment, timeout=30)
            response = client.post("/v1/calls", json=call_body(), headers=account.headers)
            assert response.status_code == 201, response.text
            call_id = response.json()["call_id"]

            def ended() -> bool:
                call = container.calling.find(Call, Call.create_id(call_id))
                return call is not None and call.is_terminal

            wait_until(ended, timeout=20)
        finally:
            relay.stop()
            fed.stop()
        record = client.get(f"/v1/calls/{call_id}", headers=account.headers).json()
    assert record["status"] == "completed", record
    assert source.applied == 1
