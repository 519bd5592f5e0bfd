"""Composition root: the only module that chooses concrete adapters.

``bootstrap`` wires PostgreSQL (external or embedded), the read models and the reactors;
``bootstrap_memory`` wires the popo backend for unit tests.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import structlog
from psycopg_pool import ConnectionPool

from adapters.crypto import master_key
from adapters.crypto.passwords import ScryptPasswordHasher
from adapters.crypto.sessions import JwtSessionTokens
from adapters.email.outbox import FileOutboxEmailSender
from adapters.memory.rate_limiter import MemoryRateLimiter
from adapters.postgres.advisory_lock import AdvisoryLock
from adapters.postgres.database import DatabaseConfig, start_embedded
from adapters.postgres.rate_limiter import PostgresRateLimiter
from adapters.scripted.brain import ScriptedBrain, ScriptedExtractor
from adapters.simulated.callee import SimulatedCallee
from application.accounts.app import AccountPorts, Accounts
from application.accounts.voice import routing_for
from application.boundary import BoundaryApplication
from application.calling.app import Calling, CallingPorts
from application.calling.carrier_reports import CarrierEdge
from application.calling.ports import AgentBrain, OutcomeExtractor
from application.ports import Clock, EmailSender, PasswordHasher, RateLimiter
from domain.calls.pricing import price_table
from entrypoints.settings import Settings
from projections.api_keys.projection import ApiKeysProjection
from projections.api_keys.view import ApiKeysView
from projections.audit_events.projection import AuditEventsProjection
from projections.audit_events.view import AuditEventsView
from projections.calls_list.projection import CallsListProjection
from projections.calls_list.view import CallsListView
from projections.runner import ProjectionWorker
from projections.suppressions.projection import SuppressionsProjection
from projections.suppressions.view import SuppressionsView
from projections.voice_model_stats.projection import VoiceModelStatsProjection
from projections.view import ReactorTracking
from projections.voice_model_stats.view import VoiceModelStatsView

log = structlog.get_logger(__name__)

# Simulated conversations with the scripted brain are pure Python, so more threads than the
# machine's cores only take the GIL from the request handlers (docs/decisions.md 29).
SCRIPTED_SIMULATIONS = 2


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Container:
    settings: Settings
    clock: Clock
    accounts: Accounts
    calling: Calling
    rate_limiter: RateLimiter
    database: DatabaseConfig | None = None
    projections: dict[str, ProjectionWorker] = field(default_factory=dict)
    reactors: dict[str, ProjectionWorker] = field(default_factory=dict)
    read_pool: Any = None  # psycopg AsyncConnectionPool, opened by the HTTP app's lifespan
    request_gate: Any = None  # adapters.postgres.request_gate.RequestGate over read_pool, same lifespan
    secret_box: Any = None  # seals webhook secrets at rest (application.webhooks.ports.SecretBox)
    webhook_poster: Any = None  # () -> application.webhooks.ports.WebhookPoster, behind the SSRF guard
    webhook_dispatcher: Any = None  # entrypoints.workers.webhook_dispatcher.WebhookDispatcher, with the followers
    carrier: Any = None  # application.providers.ports.Carrier (Twilio, or the API at twilio_api_base_url)
    carrier_edge: CarrierEdge | None = None  # the carrier's callbacks: signatures, reports, TwiML
    credential_box: Any = None  # seals provider auth tokens at rest (its own key and purpose)
    speech_engines: dict[str, Any] = field(default_factory=dict)  # SpeechEngine by profile ``speech`` name
    _closers: list[Callable[[], Any]] = field(default_factory=list)
    _background: list[Callable[[], Any]] = field(default_factory=list)

    def speech_engine(self, name: str) -> Any:
        engine = self.speech_engines.get(name)
        if engine is None:
            raise LookupError(f"no speech engine {name!r}; known: {', '.join(sorted(self.speech_engines))}")
        return engine

    def start_projections(self) -> None:
        """Start every follower of the logs: read models, reactors and periodic jobs."""
        for worker in [*self.projections.values(), *self.reactors.values()]:
            worker.start()
        for start in self._background:
            start()

    def views_current(self) -> bool:
        """Have the views processed everything this process has saved or seen?"""
        return all(worker.position >= worker.app.known_head for worker in self.projections.values())

    def wait_for_views(self, timeout: float = 2.0) -> None:
        """Read-your-writes: wait (bounded) until every view has processed what this process
        saved, and what authentication saw committed before the request began."""
        for worker in self.projections.values():
            worker.wait(worker.app.known_head, timeout)

    def close(self) -> None:
        for worker in [*self.reactors.values(), *self.projections.values()]:
            worker.stop()
        for closer in reversed(self._closers):
            closer()
        self.accounts.close()
        self.calling.close()


def resolve_database(settings: Settings) -> DatabaseConfig:
    if settings.database_url:
        return DatabaseConfig.from_url(settings.database_url)
    return start_embedded(settings.data_dir.resolve())


def _account_ports(settings: Settings, clock: Clock, email: EmailSender | None, hasher: PasswordHasher | None) -> AccountPorts:
    secret, generated = master_key.load_or_create(settings.secret_key, settings.data_dir)
    if generated:
        log.warning("secret_key.generated", path=str(settings.data_dir / "secret.key"),
                    hint="set CALLWRIGHT_SECRET_KEY when several machines share one database")
    return AccountPorts(
        clock=clock,
        hasher=hasher or ScryptPasswordHasher(n=settings.scrypt_n),
        sessions=JwtSessionTokens(master_key.derive(secret, "session-jwt")),
        email=email or FileOutboxEmailSender(settings.data_dir / "outbox"),
        public_base_url=settings.base_url,
    )


def _agent(settings: Settings, clock: Clock) -> tuple[AgentBrain, OutcomeExtractor]:
    """Anthropic when a key is configured, else the offline scripted agent."""
    if settings.anthropic_api_key:
        from adapters.anthropic.brain import AnthropicBrain
        from adapters.anthropic.client import make_client
        from adapters.anthropic.extractor import AnthropicExtractor

        client = make_client(settings.anthropic_api_key, base_url=settings.anthropic_base_url)
        model = {"model": settings.anthropic_model} if settings.anthropic_model else {}
        return AnthropicBrain(client, clock=clock, **model), AnthropicExtractor(client, clock=clock, **model)
    return ScriptedBrain(), ScriptedExtractor()


def _calling_ports(settings: Settings, clock: Clock, agent: tuple[AgentBrain, OutcomeExtractor] | None,
                   accounts: Accounts) -> CallingPorts:
    brain, extractor = agent or _agent(settings, clock)
    return CallingPorts(
        voice_routing=functools.partial(routing_for, accounts),  # Calling reads Accounts only through this
        clock=clock,
        brain=brain,
        extractor=extractor,
        callee=SimulatedCallee,
        prices=price_table(settings.engine_profiles),
        simulated_from_number=settings.simulated_from_number,
        max_call_seconds=settings.max_call_seconds,
    )


def bootstrap(
    settings: Settings,
    *,
    database: DatabaseConfig | None = None,
    clock: Clock = utc_now,
    email: EmailSender | None = None,
    hasher: PasswordHasher | None = None,
    agent: tuple[AgentBrain, OutcomeExtractor] | None = None,
    projections: bool = True,
    reactors: bool = True,
) -> Container:
    """``projections``: the read models follow the logs in this process; ``reactors`` (with them):
    so do the reactors and the webhook dispatcher (off for an API process when workers consume
    from Kafka)."""
    database = database or resolve_database(settings)
    database.ensure_schema()
    env = {**database.eventsourcing_env(), "AGGREGATE_CACHE_MAXSIZE": "10000", "AGGREGATE_CACHE_FASTFORWARD": "y"}
    accounts = Accounts(env, ports=_account_ports(settings, clock, email, hasher))
    calling = Calling(env, ports=_calling_ports(settings, clock, agent, accounts))
    for app in (accounts, calling):
        app.enable_group_commit()
    pool = ConnectionPool(database.conninfo(), min_size=1, max_size=8, open=True, kwargs={"autocommit": True})
    limiter = PostgresRateLimiter(pool)
    limiter.create_table()
    container = Container(settings=settings, clock=clock, accounts=accounts, calling=calling, rate_limiter=limiter,
                          database=database)
    container._closers.append(pool.close)
    _add_webhook_ports(container)
    _add_provider_ports(container)
    if projections:
        _add_followers(container, env, pool, reactors=reactors)
    return container


def _add_webhook_ports(container: Container) -> None:
    from adapters.crypto.secret_box import AesGcmSecretBox

    settings = container.settings
    secret, _ = master_key.load_or_create(settings.secret_key, settings.data_dir)
    container.secret_box = AesGcmSecretBox(master_key.derive(secret, "webhook-secrets"), purpose="webhook-secret")

    def poster() -> Any:
        from adapters.webhooks.sender import WebhookSender

        return WebhookSender(allow_private=settings.webhook_allow_private, allow_http=settings.webhook_allow_http,
                             timeout=min(10.0, settings.webhook_timeout_seconds))

    container.webhook_poster = poster
    for flag in ("webhook_allow_private", "webhook_allow_http"):
        if getattr(settings, flag):
            log.warning(f"{flag}.enabled", hint=f"CALLWRIGHT_{flag.upper()} is for local development only: "
                        "webhooks may reach private addresses or go unencrypted")


def _add_provider_ports(container: Container) -> None:
    from adapters.crypto.secret_box import AesGcmSecretBox
    from adapters.twilio.callbacks import TwilioEdge
    from adapters.twilio.carrier import TwilioCarrier

    settings = container.settings
    secret, _ = master_key.load_or_create(settings.secret_key, settings.data_dir)
    container.credential_box = AesGcmSecretBox(master_key.derive(secret, "provider-credentials"),
                                               purpose="provider-auth-token")
    container.carrier = TwilioCarrier(settings.twilio_api_base_url)
    container.carrier_edge = TwilioEdge()
    _add_live_ports(container, secret)
    if settings.twilio_api_base_url:
        log.warning("twilio_api_base_url.set", url=settings.twilio_api_base_url,
                    hint="carrier requests go to this server, not to Twilio")


def _add_live_ports(container: Container, secret: bytes) -> None:
    """Live calls: the carrier, the token key of the voice sockets, the engine profiles and the
    speech engines of the audio stream transport."""
    from adapters.speech.loopback import LoopbackSpeech
    from application.calling.live import LivePorts

    settings = container.settings
    container.calling.live = LivePorts(
        carrier=container.carrier, edge=container.carrier_edge, credentials=container.credential_box,
        token_key=master_key.derive(secret, "voice-socket-token"), base_url=settings.base_url,
        profiles=settings.engine_profiles, record_calls=settings.record_calls,
        token_seconds=settings.stream_token_seconds,
    )
    container.speech_engines = {LoopbackSpeech.name: LoopbackSpeech()}
    if not settings.public_base_url:
        log.info("public_base_url.unset", base_url=settings.base_url,
                 hint="set CALLWRIGHT_PUBLIC_BASE_URL to the https address the carrier reaches for live calls")


def _add_dispatcher(container: Container, pool: ConnectionPool) -> None:
    """The webhook dispatcher: attempts what ``webhook_deliveries_v1`` shows due, leased."""
    import socket
    import uuid as uuid_module
    from datetime import timedelta

    from entrypoints.workers.webhook_dispatcher import WebhookDispatcher
    from projections.webhook_deliveries.queries import due_deliveries

    timeout = min(10.0, container.settings.webhook_timeout_seconds)
    dispatcher = WebhookDispatcher(container.calling, container.secret_box, container.webhook_poster,
                                   lambda now: due_deliveries(pool, now),
                                   owner=f"{socket.gethostname()}:{uuid_module.uuid4().hex[:8]}",
                                   lease=timedelta(seconds=3 * timeout + 1))
    container.webhook_dispatcher = dispatcher
    container._background.append(dispatcher.start)
    container._closers.append(dispatcher.stop)  # closers run in reverse: before the pools it uses


def reactor_factories(container: Container) -> dict[str, tuple[BoundaryApplication, Callable[[Any], Any]]]:
    """Every reactor: the application whose events it follows, and how to build it given its
    tracking (a tracking recorder on the notification log, processed event ids on Kafka)."""
    from entrypoints.workers.call_runner import CallRunner
    from entrypoints.workers.live_settler import LiveSettler
    from entrypoints.workers.webhook_scheduler import WebhookScheduler

    def hint(scheduled: Any) -> None:
        if container.webhook_dispatcher is not None:
            container.webhook_dispatcher.hint(scheduled)

    calling = container.calling
    simulations = SCRIPTED_SIMULATIONS if isinstance(calling.ports.brain, ScriptedBrain) else None
    return {
        CallRunner.name: (calling, lambda tracking: CallRunner(calling, tracking, simulation_workers=simulations)),
        LiveSettler.name: (calling, lambda tracking: LiveSettler(calling, tracking)),
        WebhookScheduler.name: (calling, lambda tracking: WebhookScheduler(
            calling, tracking, scheduled=hint, retry_delays=container.settings.webhook_retry_delays)),
    }


def _follower(container: Container, app: BoundaryApplication, name: str, process_event: Callable[..., None],
              tracking: Any, handles: tuple[type, ...] | None) -> ProjectionWorker:
    lock = None
    if container.database:
        # Advisory locks are per database, not per schema: name the schema so that services
        # sharing one database in separate schemas do not stand by for each other.
        lock = AdvisoryLock(container.database.conninfo(), f"follower:{container.database.schema}:{name}")
    worker = ProjectionWorker(app, process_event, tracking, name=name, lock=lock, handles=handles)
    app.on_saved(worker.poke)
    return worker


def _add_followers(container: Container, env: dict[str, str], pool: ConnectionPool, *, reactors: bool) -> None:
    from eventsourcing.postgres import PostgresFactory

    from projections.webhook_deliveries.projection import WebhookDeliveriesProjection
    from projections.webhook_deliveries.view import WebhookDeliveriesView

    factory = PostgresFactory({**env, "PERSISTENCE_MODULE": "eventsourcing.postgres"})
    container._closers.append(factory.close)
    views: list[tuple[BoundaryApplication, Any, Any]] = [
        (container.accounts, AuditEventsView, AuditEventsProjection),
        (container.accounts, ApiKeysView, ApiKeysProjection),
        (container.calling, SuppressionsView, SuppressionsProjection),
        (container.calling, CallsListView, CallsListProjection),
        (container.calling, WebhookDeliveriesView, WebhookDeliveriesProjection),
        (container.calling, VoiceModelStatsView, VoiceModelStatsProjection),
    ]
    for app, view_class, projection_class in views:
        view = view_class(factory.datastore)
        view.create_table()
        projection = projection_class(view)
        container.projections[projection.name] = _follower(container, app, projection.name, projection.process_event,
                                                           view, projection.handles)
    _add_watchdog(container)
    if not reactors:
        return
    _add_dispatcher(container, pool)
    _add_reconciler(container)
    for name, (app, build) in reactor_factories(container).items():
        tracking = ReactorTracking(factory.datastore, tracking_table_name=f"{name}_tracking")
        tracking.create_table()
        reactor = build(tracking)
        close = getattr(reactor, "close", None)
        if close is not None:
            container._closers.append(close)
        container.reactors[name] = _follower(container, app, name, reactor.process_event, tracking, reactor.handles)


def _every(container: Container, name: str, interval: float, job: Callable[[str], None]) -> None:
    """Run ``job(conninfo)`` every ``interval`` seconds on a thread of its own, started with the
    followers and stopped with the container; a failing round is reported and the next one runs."""
    stop = threading.Event()

    def loop() -> None:
        if container.database is None:  # pragma: no cover - bootstrap always sets it
            return
        while not stop.wait(interval):
            try:
                job(container.database.conninfo())
            except Exception as exc:
                log.error(f"{name}.failed", error=type(exc).__name__, exc_info=exc)

    thread = threading.Thread(target=loop, name=f"call-{name}", daemon=True)
    container._background.append(thread.start)
    container._closers.append(stop.set)


def _add_watchdog(container: Container, interval: float = 5.0) -> None:
    """Every few seconds, end calls stuck past their maximum duration (``timeout``)."""
    from application.calling.lifecycle import fail_overdue
    from projections.calls_list.overdue import overdue_call_ids

    def job(conninfo: str) -> None:
        ids = overdue_call_ids(conninfo, container.clock(), container.settings.max_call_seconds)
        if ids:
            log.warning("watchdog.timeouts", calls=fail_overdue(container.calling, ids))

    _every(container, "watchdog", interval, job)


def _add_reconciler(container: Container, interval: float = 5.0) -> None:
    """Every few seconds, ask the carrier about live calls that have been quiet too long."""
    from datetime import timedelta

    from application.calling.reconcile import reconcile
    from projections.calls_list.overdue import running_live_call_ids

    after = timedelta(seconds=container.settings.reconcile_after_seconds)

    def job(conninfo: str) -> None:
        ids = running_live_call_ids(conninfo, container.clock() - after)
        moved = reconcile(container.calling, ids, after) if ids else []
        if moved:
            log.warning("reconciler.settled", calls=moved)

    _every(container, "reconciler", min(interval, max(0.5, after.total_seconds() / 2)), job)


def bootstrap_memory(
    settings: Settings | None = None,
    *,
    clock: Clock = utc_now,
    email: EmailSender | None = None,
    hasher: PasswordHasher | None = None,
    agent: tuple[AgentBrain, OutcomeExtractor] | None = None,
) -> Container:
    """The popo backend, for unit tests only (no projections, no reactors, no SQL)."""
    settings = settings or Settings()
    popo = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    accounts = Accounts(popo, ports=_account_ports(settings, clock, email, hasher))
    return Container(
        settings=settings,
        clock=clock,
        accounts=accounts,
        calling=Calling(popo, ports=_calling_ports(settings, clock, agent, accounts)),
        rate_limiter=MemoryRateLimiter(),
    )
