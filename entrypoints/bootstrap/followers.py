"""The followers of the notification logs: read models, reactors, the webhook dispatcher and the
periodic jobs, each leader of its advisory lock across processes."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from eventsourcing.postgres import PostgresFactory
from psycopg_pool import ConnectionPool

from adapters.postgres.run_leases import RunLeases
from adapters.scripted.brain import ScriptedBrain
from application.boundary import BoundaryApplication
from application.calling.app import Calling
from application.calling.ports import SpeechEngine
from application.follower import ProjectionWorker
from application.ports import SecretBox
from entrypoints.bootstrap.containers import Container, ServerContainer, WebhookPosterFactory
from entrypoints.workers import periodic
from domain.calls.engines import DEFAULT_ENGINE
from domain.numbers.number import Number
from entrypoints.settings import Settings
from entrypoints.workers.call_runner import CallRunner
from entrypoints.workers.greeting_renderer import GreetingRenderer
from entrypoints.workers.live_settler import LiveSettler
from entrypoints.workers.post_call_sms import PostCallSms
from entrypoints.workers.push_notifier import PushNotifier
from entrypoints.workers.webhook_dispatcher import WebhookDispatcher
from entrypoints.workers.webhook_scheduler import WebhookScheduler
from projections.analyst_views import install_analyst_views
from projections.api_keys.projection import ApiKeysProjection
from projections.api_keys.view import ApiKeysView
from projections.audit_events.projection import AuditEventsProjection
from projections.audit_events.view import AuditEventsView
from projections.call_facts.projection import CallFactsProjection
from projections.call_facts.view import CallFactsView
from projections.calls_list.projection import CallsListProjection
from projections.calls_list.view import CallsListView
from projections.suppressions.projection import SuppressionsProjection
from projections.suppressions.view import SuppressionsView
from projections.flows.projection import FlowsProjection
from projections.flows.view import FlowsView
from projections.templates.projection import TemplatesProjection
from projections.templates.view import TemplatesView
from projections.view import ReactorTracking
from projections.voice_model_stats.projection import VoiceModelStatsProjection
from projections.voice_model_stats.view import VoiceModelStatsView
from projections.webhook_deliveries.projection import WebhookDeliveriesProjection
from projections.webhook_deliveries.queries import due_deliveries
from projections.webhook_deliveries.view import WebhookDeliveriesView

# Simulated conversations with the scripted brain are pure Python, so more threads than the
# machine's cores only take the GIL from the request handlers (docs/decisions.md 29).
SCRIPTED_SIMULATIONS = 2

# How long a call runner's acceptance of a queued call lasts without renewal (it renews every 3 s):
# a dead runner's calls are taken by another within this plus the resumer's 5 s.
RUN_LEASE = timedelta(seconds=10)

# A read model's application, view class and projection class, given the container.
ReadModel = Callable[[ServerContainer], tuple[BoundaryApplication, Any, Any]]
# A reactor's application, and how to build it given its tracking (a tracking recorder on the
# notification log, processed event ids on Kafka).
ReactorFactory = tuple[BoundaryApplication, Callable[[Any], Any]]


def reactor_factories(container: ServerContainer) -> dict[str, ReactorFactory]:
    """Every reactor, by name."""

    calling = container.calling
    simulations = SCRIPTED_SIMULATIONS if isinstance(calling.ports.brain, ScriptedBrain) else None
    push = container.push
    grace = container.settings.shutdown_grace_seconds
    leases = run_leases(container)
    return {
        CallRunner.name: (calling, lambda tracking: CallRunner(calling, tracking, simulation_workers=simulations,
                                                               leases=leases, grace_seconds=grace)),
        LiveSettler.name: (calling, lambda tracking: LiveSettler(calling, tracking)),
        WebhookScheduler.name: (calling, lambda tracking: WebhookScheduler(
            calling, tracking, scheduled=container.webhook_dispatch.hint,
            retry_delays=container.settings.webhook_retry_delays)),
        PostCallSms.name: (calling, lambda tracking: PostCallSms(calling, tracking)),
        GreetingRenderer.name: (calling, lambda tracking: GreetingRenderer(
            calling, tracking, lambda number: _greeting_speech(container, number), container.greeting_audio)),
        PushNotifier.name: (calling, lambda tracking: PushNotifier(calling, tracking, push)),
    }


def _greeting_speech(container: Container, number: Number) -> SpeechEngine:
    """The speech engine of the number's voice engine profile (its default engine's when it names
    none, as its calls' would)."""
    return container.speech_engine(container.calling.live.profile(number.voice_engine or DEFAULT_ENGINE).speech)


class _Standby:
    """The lock of a follower that never leads in this process: it only follows the leader's tracking."""

    def try_acquire(self) -> bool:
        return False

    def release(self) -> None:
        pass


def singleton_lock(container: ServerContainer, name: str) -> Any:
    """The advisory lock of a singleton (a follower, a periodic job), on this process's lock
    session. Advisory locks are per database, not per schema: the name carries the schema, so
    services sharing one database in separate schemas do not stand by for each other."""
    if container.locks is None:
        raise RuntimeError(f"the {container.role.name} role holds no advisory locks ({name})")
    return container.locks.lock(f"{name}:{container.database.schema}")


def follower(container: ServerContainer, app: BoundaryApplication, name: str, process_event: Callable[..., None],
             tracking: Any, handles: tuple[type, ...] | None, *, standby: bool = False) -> ProjectionWorker:
    lock: Any = _Standby() if standby else singleton_lock(container, f"follower:{name}")
    worker = ProjectionWorker(app, process_event, tracking, name=name, lock=lock, handles=handles)
    if not standby:  # a standby reads the tracking when a request waits for it, not on every save
        app.on_saved(worker.poke)
    return worker


def _read_model(app: str, view_class: Any, projection_class: Any) -> ReadModel:
    return lambda container: (getattr(container, app), view_class, projection_class)


# Every read model by its name: its application (whose log it follows), view and projection.
READ_MODELS: dict[str, ReadModel] = {projection.name: _read_model(app, view, projection) for app, view, projection in (
    ("accounts", AuditEventsView, AuditEventsProjection),
    ("accounts", ApiKeysView, ApiKeysProjection),
    ("calling", SuppressionsView, SuppressionsProjection),
    ("calling", TemplatesView, TemplatesProjection),
    ("calling", FlowsView, FlowsProjection),
    ("calling", CallsListView, CallsListProjection),
    ("calling", CallFactsView, CallFactsProjection),
    ("calling", WebhookDeliveriesView, WebhookDeliveriesProjection),
    ("calling", VoiceModelStatsView, VoiceModelStatsProjection),
)}


def add_followers(container: ServerContainer, env: dict[str, str], pool: ConnectionPool) -> None:
    """What the container's role follows: the read models (leading, or watching the leaders'
    tracking), the reactors fed from the notification log, and the jobs beside them."""
    role = container.role
    factory = PostgresFactory({**env, "PERSISTENCE_MODULE": "eventsourcing.postgres"})
    container.on_close(factory.close)
    container.pool_stats["views"] = factory.datastore.pool.get_stats
    if role.views != "none":
        for read_model in READ_MODELS.values():
            app, view_class, projection_class = read_model(container)
            view = view_class(factory.datastore)
            view.create_table()
            projection = projection_class(view)
            container.projections[projection.name] = follower(
                container, app, projection.name, projection.process_event, view, projection.handles,
                standby=role.views == "watch")
        install_analyst_views(container.database.conninfo(), container.database.schema)
    if role.reactors != "log":
        return  # reactors fed from Kafka are wired by ``kafka_reactors``, their jobs with them
    runner: CallRunner | None = None
    for name, (app, build) in reactor_factories(container).items():
        tracking = ReactorTracking(factory.datastore, tracking_table_name=f"{name}_tracking")
        tracking.create_table()
        reactor = build(tracking)
        close = getattr(reactor, "close", None)
        if close is not None:
            container.on_close(close)
        container.reactors[name] = follower(container, app, name, reactor.process_event,
                                            getattr(reactor, "paged_tracking", tracking), reactor.handles)
        if isinstance(reactor, CallRunner):
            runner = reactor
    add_jobs(container, runner)


def add_jobs(container: ServerContainer, runner: CallRunner | None) -> None:
    """Beside the reactors: the webhook dispatcher, the watchdog and the reconciler (once per
    process; those two singletons under advisory locks) and the resumer of ``runner``."""
    pool = container.pool
    dispatcher = container.webhook_dispatch
    if container.first_time("jobs") and isinstance(dispatcher, WebhookDispatcher):
        settings = container.settings
        container.on_start(dispatcher.start)
        container.on_close(dispatcher.stop)  # closers run in reverse: before the pools it uses
        _periodic(container, periodic.watchdog(container.calling, pool, settings.max_call_seconds,
                                               lock=singleton_lock(container, "periodic:watchdog")))
        _periodic(container, periodic.reconciler(container.calling, pool, settings.reconcile_after_seconds,
                                                 lock=singleton_lock(container, "periodic:reconciler")))
    if runner is not None:
        _periodic(container, periodic.simulation_resumer(container.calling, pool, runner))


def run_leases(container: ServerContainer) -> RunLeases:
    """The durable leases of this process's call runner on the queued calls it accepts."""
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    return RunLeases(container.pool, owner=owner, lease=RUN_LEASE)


def _periodic(container: Container, job: periodic.PeriodicJob) -> None:
    container.on_start(job.start)
    container.on_close(job.stop)


def webhook_dispatcher(settings: Settings, calling: Calling, secret_box: SecretBox, poster: WebhookPosterFactory,
                       pool: ConnectionPool) -> WebhookDispatcher:
    """The webhook dispatcher: attempts what ``webhook_deliveries_v1`` shows due, leased."""
    timeout = min(10.0, settings.webhook_timeout_seconds)
    return WebhookDispatcher(calling, secret_box, poster, lambda now: due_deliveries(pool, now),
                             owner=f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}",
                             lease=timedelta(seconds=3 * timeout + 1))
