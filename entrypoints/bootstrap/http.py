"""What the HTTP server adds: the async read pool, the request gate (the hot path's coalesced
reads), /readyz's probe and the loop's commit path over the binary event appender, built with the
app's services and opened by its lifespan."""

from __future__ import annotations

import asyncio
from collections import ChainMap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from psycopg_pool import AsyncConnectionPool

from adapters.postgres.accounts_watch import AccountsWatch
from adapters.postgres.advisory_lock import schema_lock
from adapters.postgres.event_appender import AsyncEventAppender
from adapters.postgres.pools import async_pool
from adapters.postgres.readiness import ReadinessProbe
from adapters.postgres.request_gate import RequestGate
from entrypoints.bootstrap.containers import ServerContainer
from entrypoints.bootstrap.core import bootstrap
from entrypoints.bootstrap.roles import http_role
from entrypoints.http.services import (
    AccountsService,
    Admission,
    CallingService,
    CarrierService,
    DashboardService,
    HttpServices,
    NumberingService,
    ProvidersService,
    PushService,
    Readiness,
    Reads,
    Views,
    WebhooksService,
)
from entrypoints.settings import Settings
from entrypoints.workers.kafka_mode import KafkaSettings


def bootstrap_http(settings: Settings, **options: Any) -> ServerContainer:
    """``callwright serve``: with Kafka (``CALLWRIGHT_KAFKA_BOOTSTRAP``), the reactors and the
    webhook dispatcher run in ``callwright worker`` processes instead; with ``http_followers`` off,
    so do the views, which this process only watches for read-your-writes. ``options`` go to
    ``bootstrap`` (a test's database, clock, ...)."""
    role = http_role(followers=settings.http_followers, kafka=KafkaSettings.from_env() is not None)
    return bootstrap(settings, role=role, **options)


@dataclass(frozen=True)
class Served:
    """One HTTP app's services, and what its lifespan opens and closes for them."""

    services: HttpServices
    reads: AsyncConnectionPool
    probes: AsyncConnectionPool  # /readyz's own: requests waiting for the read pool do not make it late
    watch: AccountsWatch
    appender: AsyncEventAppender


def http_services(container: ServerContainer) -> Served:
    """The HTTP edge's services over ``container`` (PostgreSQL), with pools not yet opened."""
    database = container.database
    sizes, settings = container.pool_sizes, container.settings
    accounts, calling = container.accounts, container.calling
    pool = async_pool(database, max_size=sizes.get("reads", 10), name="reads")
    probes = async_pool(database, max_size=sizes.get("readiness", 2), name="readiness")
    gate = RequestGate(pool, schema=database.schema, accounts_events=accounts.recorder.events_table_name,
                       calling_events=calling.recorder.events_table_name)
    # Remembered keys answer with no round trip while this watcher vouches for them.
    watch = AccountsWatch(pool, schema=database.schema, table=accounts.recorder.events_table_name, accounts=accounts)
    probe = ReadinessProbe(probes, schema=database.schema, tables={
        app.name: app.recorder.events_table_name for app in (accounts, calling)})
    appender = AsyncEventAppender(pool, schema=database.schema, table=calling.recorder.events_table_name)
    reads = Reads(pool=pool, fresh=gate, views=Views(current=container.views_current, wait=container.wait_for_views),
                  accounts=accounts)
    admission = Admission(accounts=accounts, fresh=gate, tier_limit=settings.tier_limit, clock=container.clock)
    services = HttpServices(
        settings=settings,
        reads=reads,
        calling=CallingService(calling=calling, reads=reads),
        accounts=AccountsService(accounts=accounts, reads=reads, clock=container.clock,
                                 rate_limiter=container.rate_limiter, login_attempts=settings.login_attempts,
                                 login_window_seconds=settings.login_window_seconds),
        webhooks=WebhooksService(calling=calling, reads=reads, secret_box=container.secret_box,
                                 poster=container.webhook_poster,
                                 hint=container.webhook_dispatch.hint),
        push=PushService(calling=calling, ports=container.push),
        providers=ProvidersService(calling=calling, carrier=container.carrier, credential_box=container.credential_box),
        carrier=CarrierService(calling=calling, edge=container.carrier_edge, base_url=settings.base_url),
        numbering=NumberingService(calling=calling, managed=container.managed_numbering,
                                   wizard=container.wizard_generator, purchase_lease=settings.wizard_purchase_lease),
        readiness=Readiness(projections=container.projections, reactors=container.reactors, probe=probe,
                            pool_stats=ChainMap({"reads": pool.get_stats}, container.pool_stats),
                            wall_clock=container.wall_clock, max_lag_seconds=settings.ready_max_lag_seconds),
        admission=admission,
        dashboard=DashboardService(accounts=accounts, admission=admission, csrf_key=container.dashboard_key,
                                   public_base_url=settings.public_base_url or ""),
        speech_engine=container.speech_engine,
        metrics_registry=container.metrics_registry,
        http_metrics=container.http_metrics,
        voice_metrics=container.voice_metrics,
        database_outage=container.database_outage,
    )
    return Served(services=services, reads=pool, probes=probes, watch=watch, appender=appender)


@asynccontextmanager
async def serving(container: ServerContainer, served: Served, *, owns_container: bool,
                  start_followers: bool) -> AsyncIterator[None]:
    """The HTTP app's lifespan: open what the requests use, start the followers, and on the way
    out let commits already handed to the loop land before anything closes."""
    database = container.database
    pool, probes = served.reads, served.probes
    await pool.open(wait=True, timeout=30)
    await probes.open(wait=True, timeout=30)
    await served.watch.start()
    # CREATE OR REPLACE FUNCTION from processes started at once: one at a time.
    lock = schema_lock(database)
    await asyncio.to_thread(lock.__enter__)
    try:
        await served.appender.create_function()
    finally:
        await asyncio.to_thread(lock.__exit__, None, None, None)
    calling = container.calling
    calling.commits.attach_loop(served.appender.append)
    if start_followers:
        container.start_projections()
    try:
        yield
    finally:
        # New commits go back to the thread committer; the loop keeps running (and the pool
        # stays open) while the followers stop, so commits already handed to it still land.
        calling.commits.detach_loop()
        await served.watch.stop()
        if owns_container:
            await asyncio.to_thread(container.close)
        else:
            await asyncio.to_thread(lambda: [worker.stop() for worker in container.projections.values()])
        await pool.close()
        await probes.close()
