"""Creates missing topics through the admin API (the relay before publishing, sources before
subscribing); existing topics are left as they are."""

from __future__ import annotations

from collections.abc import Sequence

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError

TOPIC_ALREADY_EXISTS = 36


async def ensure_topics(bootstrap: str, topics: Sequence[str], *, partitions: int, replication: int,
                        client_id: str = "callwright-admin", request_timeout_ms: int = 5_000) -> list[str]:
    """Returns the topics this call created."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id=client_id,
                                request_timeout_ms=request_timeout_ms)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [topic for topic in topics if topic not in existing]
        if not missing:
            return []
        response = await admin.create_topics(
            [NewTopic(topic, num_partitions=partitions, replication_factor=replication) for topic in missing])
        for topic, code, *message in response.topic_errors:
            if code not in (0, TOPIC_ALREADY_EXISTS):
                raise KafkaError(f"creating topic {topic} failed: error {code} {message}")
        return missing
    finally:
        await admin.close()
