"""What a run mode is given: the applications, the ports chosen for them and the followers.

Built only by the ``bootstrap_*`` functions of this package; every other module reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

from prometheus_client import CollectorRegistry
from psycopg_pool import ConnectionPool

from adapters.memory.greeting_audio import MemoryGreetingAudio
from adapters.postgres.advisory_lock import LockSession
from adapters.postgres.database import DatabaseConfig
from adapters.scripted.wizard import RuleBasedWizardGenerator
from application.accounts.app import Accounts
from application.calling.app import Calling
from application.calling.carrier_reports import CarrierEdge
from application.calling.ports import SpeechEngine
from application.follower import ProjectionWorker
from application.numbers.greetings import GreetingAudioStore
from application.numbers.provisioning import ManagedNumbering
from application.ports import Clock, RateLimiter, SecretBox
from application.providers.ports import Carrier
from application.push.ports import PushPorts
from application.webhooks.ports import WebhookPoster
from application.wizard.ports import WizardGenerator
from entrypoints.bootstrap.roles import ROLES, Role
from entrypoints.http.context import HttpMetrics, VoiceMetrics
from entrypoints.settings import Settings

WebhookPosterFactory = Callable[[], AbstractAsyncContextManager[WebhookPoster]]


class WebhookDispatch(Protocol):
    """What the rest of the process tells the webhook dispatcher: deliveries due now."""

    def hint(self, scheduled: Sequence[Any]) -> None: ...

    def poke(self) -> None: ...


class _NoDispatch:
    """A role without the jobs: the workers' dispatcher finds the deliveries due on its own."""

    def hint(self, scheduled: Sequence[Any]) -> None:
        pass

    def poke(self) -> None:
        pass


NO_DISPATCH: WebhookDispatch = _NoDispatch()


@dataclass(frozen=True, kw_only=True)
class Container:
    """The applications and the ports every run mode has: all a test on the popo backend gets
    (``bootstrap_memory``). Built once; the followers and closers it is given are added to its
    collections, never by assigning a field."""

    settings: Settings
    clock: Clock
    accounts: Accounts
    calling: Calling
    rate_limiter: RateLimiter
    secret_box: SecretBox  # seals webhook secrets at rest
    credential_box: SecretBox  # seals provider auth tokens at rest (its own key and purpose)
    carrier: Carrier  # Twilio, or the API at CALLWRIGHT_TWILIO_API_BASE_URL
    carrier_edge: CarrierEdge  # the carrier's callbacks: signatures, reports, instructions
    webhook_poster: WebhookPosterFactory  # a poster behind the SSRF guard, per use
    push: PushPorts  # Web Push: the sender, the VAPID key maker, the sealing box
    speech_engines: dict[str, SpeechEngine] = field(default_factory=dict)  # by profile ``speech`` name
    greeting_audio: GreetingAudioStore = field(default_factory=MemoryGreetingAudio)  # numbers' greetings, rendered
    managed_numbering: ManagedNumbering | None = None  # the managed sub-account; None: not configured
    wizard_generator: WizardGenerator = field(default_factory=RuleBasedWizardGenerator)  # Anthropic with a key
    dashboard_key: bytes = field(default=b"", repr=False)  # signs the dashboard's CSRF tokens
    projections: dict[str, ProjectionWorker] = field(default_factory=dict)
    reactors: dict[str, ProjectionWorker] = field(default_factory=dict)
    # The real time, which eventsourcing stamps events with (not ``clock``, which tests move):
    # what a follower's lag is measured against.
    wall_clock: Callable[[], datetime] = field(default=lambda: datetime.now(timezone.utc))
    # Prometheus: the process's registry (GET /metrics) and the collectors the HTTP edge and the
    # voice sockets record into, made with the container.
    metrics_registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    http_metrics: HttpMetrics = field(init=False)
    voice_metrics: VoiceMetrics = field(init=False)
    _closers: list[Callable[[], Any]] = field(default_factory=list)
    _background: list[Callable[[], Any]] = field(default_factory=list)
    _once: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        # Derived from the registry at construction (a frozen dataclass sets them this way).
        object.__setattr__(self, "http_metrics", HttpMetrics(self.metrics_registry))
        object.__setattr__(self, "voice_metrics", VoiceMetrics(self.metrics_registry))

    def speech_engine(self, name: str) -> SpeechEngine:
        engine = self.speech_engines.get(name)
        if engine is None:
            raise LookupError(f"no speech engine {name!r}; known: {', '.join(sorted(self.speech_engines))}")
        return engine

    def on_close(self, closer: Callable[[], Any]) -> None:
        """Run ``closer`` when the container closes (in reverse order of registration)."""
        self._closers.append(closer)

    def on_start(self, start: Callable[[], Any]) -> None:
        """Run ``start`` with the followers (periodic jobs, the webhook dispatcher)."""
        self._background.append(start)

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

    def stop_followers(self) -> None:
        for worker in [*self.reactors.values(), *self.projections.values()]:
            worker.stop()

    def close(self) -> None:
        self.stop_followers()
        for closer in reversed(self._closers):
            closer()
        self.accounts.close()
        self.calling.close()

    def first_time(self, what: str) -> bool:
        """True the first time ``what`` is asked of this container (work wired once per process)."""
        if what in self._once:
            return False
        self._once.add(what)
        return True


@dataclass(frozen=True, kw_only=True)
class ServerContainer(Container):
    """A process on PostgreSQL (every run mode but the popo tests): its role, its pools and the
    webhook dispatch of the roles that run the jobs."""

    database: DatabaseConfig
    role: Role = field(default_factory=lambda: ROLES["all-in-one"])  # what this process runs (roles.py)
    pool_sizes: dict[str, int] = field(default_factory=dict)  # each pool's maximum connections, by name
    pool: ConnectionPool  # the shared "core" pool
    locks: LockSession | None  # the connection holding this process's advisory locks; the cli role holds none
    # Each pool's current use, by name: (size, max, available, waiting) for /readyz.
    pool_stats: dict[str, Callable[[], Mapping[str, int]]] = field(default_factory=dict)
    # Whether an error says the database cannot be reached (the HTTP edge answers 503).
    database_outage: Callable[[BaseException], bool] = field(default=lambda exc: False)
    # The webhook dispatcher where this role runs the jobs; elsewhere a hint nobody needs.
    webhook_dispatch: WebhookDispatch = field(default_factory=lambda: NO_DISPATCH)

    @property
    def conninfo(self) -> str:
        return self.database.conninfo()
