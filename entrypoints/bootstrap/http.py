"""What the HTTP server adds while it runs: the async read pool, the request gate (the hot path's
coalesced reads) and the loop's commit path over the binary event appender."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from adapters.postgres.accounts_watch import AccountsWatch
from adapters.postgres.advisory_lock import schema_lock
from adapters.postgres.event_appender import AsyncEventAppender
from adapters.postgres.pools import async_pool
from adapters.postgres.readiness import ReadinessProbe
from adapters.postgres.request_gate import RequestGate
from entrypoints.bootstrap.containers import Container
from entrypoints.bootstrap.core import bootstrap
from entrypoints.bootstrap.roles import http_role
from entrypoints.settings import Settings
from entrypoints.workers.kafka_mode import KafkaSettings


def bootstrap_http(settings: Settings, **options: Any) -> Container:
    """``callwright serve``: with Kafka (``CALLWRIGHT_KAFKA_BOOTSTRAP``), the reactors and the
    webhook dispatcher run in ``callwright worker`` processes instead; with ``http_followers`` off,
    so do the views, which this process only watches for read-your-writes. ``options`` go to
    ``bootstrap`` (a test's database, clock, ...)."""
    role = http_role(followers=settings.http_followers, kafka=KafkaSettings.from_env() is not None)
    return bootstrap(settings, role=role, **options)


@asynccontextmanager
async def serving(container: Container, *, owns_container: bool, start_followers: bool) -> AsyncIterator[None]:
    """The HTTP app's lifespan: open what the requests use, start the followers, and on the way
    out let commits already handed to the loop land before anything closes."""
    database = container.database
    assert database is not None, "the HTTP app needs PostgreSQL"
    sizes = container.pool_sizes
    pool = async_pool(database, max_size=sizes.get("reads", 10), name="reads")
    await pool.open(wait=True, timeout=30)
    container.read_pool = pool
    # /readyz has a pool of its own: requests waiting for the read pool do not make it late.
    probes = async_pool(database, max_size=sizes.get("readiness", 2), name="readiness")
    await probes.open(wait=True, timeout=30)
    container.pool_stats["reads"] = pool.get_stats
    container.fresh_reads = RequestGate(
        pool, schema=database.schema, accounts_events=container.accounts.recorder.events_table_name,
        calling_events=container.calling.recorder.events_table_name,
    )
    # Remembered keys answer with no round trip while this watcher vouches for them.
    watch = AccountsWatch(pool, schema=database.schema, table=container.accounts.recorder.events_table_name,
                          accounts=container.accounts)
    await watch.start()
    calling = container.calling
    container.readiness = ReadinessProbe(probes, schema=database.schema, tables={
        app.name: app.recorder.events_table_name for app in (container.accounts, calling)
    })
    appender = AsyncEventAppender(pool, schema=database.schema, table=calling.recorder.events_table_name)
    # CREATE OR REPLACE FUNCTION from processes started at once: one at a time.
    lock = schema_lock(database)
    await asyncio.to_thread(lock.__enter__)
    try:
        await appender.create_function()
    finally:
        await asyncio.to_thread(lock.__exit__, None, None, None)
    calling.commits.attach_loop(appender.append)
    if start_followers:
        container.start_projections()
    try:
        yield
    finally:
        # New commits go back to the thread committer; the loop keeps running (and the pool
        # stays open) while the followers stop, so commits already handed to it still land.
        calling.commits.detach_loop()
        await watch.stop()
        container.fresh_reads = None
        container.readiness = None
        if owns_container:
            await asyncio.to_thread(container.close)
        else:
            await asyncio.to_thread(lambda: [worker.stop() for worker in container.projections.values()])
        await pool.close()
        await probes.close()
        container.read_pool = None
