"""What a run mode is given: the applications, the ports chosen for them and the followers.

Built only by the ``bootstrap_*`` functions of this package; every other module reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

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
from entrypoints.workers.webhook_dispatcher import WebhookDispatcher

WebhookPosterFactory = Callable[[], AbstractAsyncContextManager[WebhookPoster]]


@dataclass(kw_only=True)
class Container:
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
    speech_engines: dict[str, SpeechEngine] = field(default_factory=dict)  # by profile ``speech`` name
    greeting_audio: GreetingAudioStore = field(default_factory=MemoryGreetingAudio)  # numbers' greetings, rendered
    managed_numbering: ManagedNumbering | None = None  # the managed sub-account; None: not configured
    wizard_generator: WizardGenerator = field(default_factory=RuleBasedWizardGenerator)  # Anthropic with a key
    push: PushPorts | None = None  # Web Push: the sender, the VAPID key maker, the sealing box
    dashboard_key: bytes = field(default=b"", repr=False)  # signs the dashboard's CSRF tokens
    database: DatabaseConfig | None = None  # None: the popo backend of unit tests
    role: Role = field(default_factory=lambda: ROLES["all-in-one"])  # what this process runs (roles.py)
    pool_sizes: dict[str, int] = field(default_factory=dict)  # each pool's maximum connections, by name
    pool: ConnectionPool | None = None  # the shared "core" pool (PostgreSQL only)
    locks: LockSession | None = None  # the connection holding this process's advisory locks
    # Each pool's current use, by name: (size, max, available, waiting) for /readyz.
    pool_stats: dict[str, Callable[[], Mapping[str, int]]] = field(default_factory=dict)
    # Whether an error says the database cannot be reached (the HTTP edge answers 503).
    database_outage: Callable[[BaseException], bool] = field(default=lambda exc: False)
    projections: dict[str, ProjectionWorker] = field(default_factory=dict)
    reactors: dict[str, ProjectionWorker] = field(default_factory=dict)
    webhook_dispatcher: WebhookDispatcher | None = None  # with the reactors
    # The real time, which eventsourcing stamps events with (not ``clock``, which tests move):
    # what a follower's lag is measured against.
    wall_clock: Callable[[], datetime] = field(default=lambda: datetime.now(timezone.utc))
    # Prometheus: the process's registry (GET /metrics) and the collectors the HTTP edge and the
    # voice sockets record into, made once with the container.
    metrics_registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    http_metrics: HttpMetrics = field(init=False)
    voice_metrics: VoiceMetrics = field(init=False)
    _closers: list[Callable[[], Any]] = field(default_factory=list)
    _background: list[Callable[[], Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.http_metrics = HttpMetrics(self.metrics_registry)
        self.voice_metrics = VoiceMetrics(self.metrics_registry)

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

    @property
    def conninfo(self) -> str:
        if self.database is None:
            raise RuntimeError("this container has no PostgreSQL (the popo backend of unit tests)")
        return self.database.conninfo()
