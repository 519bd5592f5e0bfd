"""The applications and the ports every run mode shares, chosen once from the settings.

``bootstrap`` wires PostgreSQL (external or embedded) with group commit, the read models and the
reactors (what tests build, and the base of every other mode); ``bootstrap_memory`` wires the popo
backend for unit tests.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import structlog

from adapters.crypto import master_key
from adapters.crypto.passwords import ScryptPasswordHasher
from adapters.crypto.secret_box import AesGcmSecretBox
from adapters.crypto.sessions import JwtSessionTokens
from adapters.email.outbox import FileOutboxEmailSender
from adapters.memory.rate_limiter import MemoryRateLimiter
from adapters.postgres.advisory_lock import LockSession, schema_lock
from adapters.postgres.database import DatabaseConfig, start_embedded
from adapters.postgres.pools import cap_reconnect_backoff, install_wait_budget, is_outage, sync_pool
from adapters.postgres.greeting_audio import PostgresGreetingAudio
from adapters.postgres.rate_limiter import PostgresRateLimiter
from adapters.push.vapid_keys import new_vapid_keys
from adapters.scripted.brain import ScriptedBrain, ScriptedExtractor
from adapters.simulated.callee import SimulatedCallee
from adapters.speech.loopback import LoopbackSpeech
from adapters.twilio.callbacks import TwilioEdge
from adapters.twilio.carrier import TwilioCarrier
from application.accounts.app import AccountPorts, Accounts
from application.accounts.voice import routing_for
from application.calling.app import Calling, CallingPorts
from application.calling.live_ports import LivePorts
from application.calling.ports import AgentBrain, OutcomeExtractor
from application.commit_path import direct, grouped
from application.ports import Clock, EmailSender, PasswordHasher
from application.push.ports import PushPorts
from domain.calls.pricing import price_table
from entrypoints.bootstrap.containers import NO_DISPATCH, Container, ServerContainer
from entrypoints.bootstrap.managed import managed_account, managed_numbering
from entrypoints.bootstrap.roles import ROLES, Role, name_connections
from entrypoints.bootstrap.wizard import wizard_generator
from entrypoints.settings import Settings

log = structlog.get_logger(__name__)

Agent = tuple[AgentBrain, OutcomeExtractor]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def resolve_database(settings: Settings) -> DatabaseConfig:
    if settings.database_url:
        config = DatabaseConfig.from_url(settings.database_url)
    else:
        config = start_embedded(settings.data_dir.resolve())
    return config.with_wait(settings.database_wait_seconds)


@dataclass(frozen=True)
class Keys:
    """The keys derived from the master secret, loaded once per process."""

    sessions: bytes
    webhook_secrets: bytes
    provider_credentials: bytes
    voice_socket_token: bytes
    push_secrets: bytes
    dashboard_csrf: bytes

    @classmethod
    def load(cls, settings: Settings) -> Keys:
        secret, generated = master_key.load_or_create(settings.secret_key, settings.data_dir)
        if generated:
            log.warning("secret_key.generated", path=str(settings.data_dir / "secret.key"),
                        hint="set CALLWRIGHT_SECRET_KEY when several machines share one database")
        return cls(*(master_key.derive(secret, purpose) for purpose in
                     ("session-jwt", "webhook-secrets", "provider-credentials", "voice-socket-token",
                      "push-secrets", "dashboard-csrf")))


def _account_ports(settings: Settings, keys: Keys, clock: Clock, email: EmailSender | None,
                   hasher: PasswordHasher | None) -> AccountPorts:
    return AccountPorts(
        clock=clock,
        hasher=hasher or ScryptPasswordHasher(n=settings.scrypt_n),
        sessions=JwtSessionTokens(keys.sessions),
        email=email or FileOutboxEmailSender(settings.data_dir / "outbox"),
        public_base_url=settings.base_url,
    )


def _agent(settings: Settings, clock: Clock) -> Agent:
    """Anthropic when a key is configured, else the offline scripted agent."""
    if settings.anthropic_api_key:
        from adapters.anthropic.brain import AnthropicBrain
        from adapters.anthropic.client import make_client
        from adapters.anthropic.extractor import AnthropicExtractor

        client = make_client(settings.anthropic_api_key, base_url=settings.anthropic_base_url)
        model = {"model": settings.anthropic_model} if settings.anthropic_model else {}
        return AnthropicBrain(client, clock=clock, **model), AnthropicExtractor(client, clock=clock, **model)
    return ScriptedBrain(), ScriptedExtractor()


def _calling_ports(settings: Settings, clock: Clock, agent: Agent | None, accounts: Accounts) -> CallingPorts:
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


def _live_ports(settings: Settings, keys: Keys, carrier: TwilioCarrier, edge: TwilioEdge,
                credential_box: AesGcmSecretBox) -> LivePorts:
    """Live calls: the carrier, the token key of the voice sockets and the engine profiles."""
    if not settings.public_base_url:
        log.info("public_base_url.unset", base_url=settings.base_url,
                 hint="set CALLWRIGHT_PUBLIC_BASE_URL to the https address the carrier reaches for live calls")
    return LivePorts(
        carrier=carrier, edge=edge, credentials=credential_box, token_key=keys.voice_socket_token,
        base_url=settings.base_url, profiles=settings.engine_profiles, record_calls=settings.record_calls,
        token_seconds=settings.stream_token_seconds, carrier_base_url=settings.twilio_api_base_url,
        managed=managed_account(settings),
    )


def _webhook_poster(settings: Settings) -> Any:
    def poster() -> Any:
        from adapters.webhooks.sender import WebhookSender

        return WebhookSender(allow_private=settings.webhook_allow_private, allow_http=settings.webhook_allow_http,
                             timeout=min(10.0, settings.webhook_timeout_seconds))

    for flag in ("webhook_allow_private", "webhook_allow_http"):
        if getattr(settings, flag):
            log.warning(f"{flag}.enabled", hint=f"CALLWRIGHT_{flag.upper()} is for local development only: "
                        "webhooks may reach private addresses or go unencrypted")
    return poster


def _push_ports(settings: Settings, keys: Keys) -> PushPorts:
    """Web Push: a sender behind the webhook SSRF guard (and its development flags), per use."""
    def sender() -> Any:
        from adapters.push.sender import WebPushSender

        return WebPushSender(contact=settings.push_contact, allow_private=settings.webhook_allow_private,
                             allow_http=settings.webhook_allow_http, timeout=min(10.0, settings.push_timeout_seconds))

    return PushPorts(box=AesGcmSecretBox(keys.push_secrets, purpose="push-secret"), sender=sender,
                     new_vapid_keys=new_vapid_keys)


def _parts(settings: Settings, env: dict[str, str], *, clock: Clock, email: EmailSender | None,
           hasher: PasswordHasher | None, agent: Agent | None, grouped_commits: bool,
           calling_env: dict[str, str] | None = None) -> dict[str, Any]:
    """What every container holds, by field. ``env`` configures the applications' event stores
    (``calling_env``, when given, Calling's)."""
    keys = Keys.load(settings)
    commits = grouped if grouped_commits else direct
    accounts = Accounts(env, ports=_account_ports(settings, keys, clock, email, hasher), commits=commits)
    carrier = TwilioCarrier(settings.twilio_api_base_url)
    if settings.twilio_api_base_url:
        log.warning("twilio_api_base_url.set", url=settings.twilio_api_base_url,
                    hint="carrier requests go to this server, not to Twilio")
    edge = TwilioEdge()
    credential_box = AesGcmSecretBox(keys.provider_credentials, purpose="provider-auth-token")
    calling = Calling(calling_env or env, ports=_calling_ports(settings, clock, agent, accounts),
                      live=_live_ports(settings, keys, carrier, edge, credential_box), commits=commits)
    return dict(
        settings=settings, clock=clock, accounts=accounts, calling=calling, rate_limiter=MemoryRateLimiter(),
        secret_box=AesGcmSecretBox(keys.webhook_secrets, purpose="webhook-secret"), credential_box=credential_box,
        carrier=carrier, carrier_edge=edge, webhook_poster=_webhook_poster(settings),
        speech_engines={LoopbackSpeech.name: LoopbackSpeech()}, managed_numbering=managed_numbering(settings),
        wizard_generator=wizard_generator(settings, clock),
        push=_push_ports(settings, keys), dashboard_key=keys.dashboard_csrf,
    )


def bootstrap(
    settings: Settings,
    *,
    database: DatabaseConfig | None = None,
    clock: Clock = utc_now,
    email: EmailSender | None = None,
    hasher: PasswordHasher | None = None,
    agent: Agent | None = None,
    projections: bool = True,
    reactors: bool = True,
    standby: bool = False,
    role: Role | None = None,
) -> ServerContainer:
    """The process's ``role`` (``roles.py``) decides what it runs and the connections it may hold;
    without one it is told by the flags: ``projections``: the read models follow the logs in this
    process; ``reactors`` (with them): so do the reactors, the webhook dispatcher and the periodic
    jobs; ``standby``: the read models never lead here, they only watch the leaders' tracking for
    read-your-writes (an API process whose followers run in workers).

    The schema (tables, tracking tables, views) is created under an advisory lock: processes
    started at once wait for the first, then find it made."""
    from entrypoints.bootstrap.followers import add_followers, run_leases, webhook_dispatcher

    role = role or _role_of(projections=projections, reactors=reactors, standby=standby)
    database = database or resolve_database(settings)
    cap_reconnect_backoff()  # eventsourcing's own pools included
    install_wait_budget()  # likewise: a request's connection waits share one budget
    name_connections(role)
    sizes = role.pools(settings.database_max_connections)
    with schema_lock(database):
        database.ensure_schema()
        cache = {"AGGREGATE_CACHE_MAXSIZE": "10000", "AGGREGATE_CACHE_FASTFORWARD": "y"}
        parts = _parts(settings, {**_store_env(database, sizes["events_accounts"]), **cache}, clock=clock,
                       email=email, hasher=hasher, agent=agent, grouped_commits=True,
                       calling_env={**_store_env(database, sizes["events_calling"]), **cache})
        accounts, calling = parts["accounts"], parts["calling"]
        for app in (accounts, calling):
            app.is_outage = is_outage
        pool = sync_pool(database, max_size=sizes["core"], name="core")
        locks = LockSession(database.conninfo()) if "locks" in sizes else None
        limiter = PostgresRateLimiter(pool)
        limiter.create_table()
        greetings = PostgresGreetingAudio(pool)
        greetings.create_table()
        dispatch = webhook_dispatcher(settings, calling, parts["secret_box"], parts["webhook_poster"], pool) \
            if role.reactors != "none" else NO_DISPATCH
        container = ServerContainer(
            **{**parts, "rate_limiter": limiter}, greeting_audio=greetings, database=database, role=role,
            pool_sizes=sizes, pool=pool, locks=locks, database_outage=is_outage, webhook_dispatch=dispatch,
            pool_stats={
                "core": pool.get_stats,
                "events_accounts": accounts.recorder.datastore.pool.get_stats,
                "events_calling": calling.recorder.datastore.pool.get_stats,
            })
        container.on_close(pool.close)
        if locks is not None:
            container.on_close(locks.close)
        if role.reactors != "none":
            run_leases(container).create_table()
        if role.views != "none" or role.reactors == "log":
            add_followers(container, _store_env(database, sizes.get("views", 1)), pool)
    log.info("database.budget", role=role.name, max_connections=sum(sizes.values()), pools=sizes,
             hint="CALLWRIGHT_DATABASE_MAX_CONNECTIONS scales these")
    return container


def _role_of(*, projections: bool, reactors: bool, standby: bool) -> Role:
    if not projections:
        return ROLES["cli"]
    if standby:
        return ROLES["api"]
    return ROLES["all-in-one"] if reactors else ROLES["projector"]


def _store_env(database: DatabaseConfig, connections: int) -> dict[str, str]:
    """An eventsourcing datastore holding one connection and growing to ``connections``."""
    return database.eventsourcing_env(pool_size=1, max_overflow=max(0, connections - 1))


def bootstrap_memory(
    settings: Settings | None = None,
    *,
    clock: Clock = utc_now,
    email: EmailSender | None = None,
    hasher: PasswordHasher | None = None,
    agent: Agent | None = None,
) -> Container:
    """The popo backend, for unit tests only (no projections, no reactors, no SQL)."""
    return Container(**_parts(settings or Settings(), {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock,
                              email=email, hasher=hasher, agent=agent, grouped_commits=False))


def bootstrap_cli(settings: Settings, **options: Any) -> ServerContainer:
    """One-shot operator commands (``callwright admin …``): the applications on the server's
    database, no followers; e-mails to the outbox under the data directory."""
    return bootstrap(settings, role=ROLES["cli"], **options)
