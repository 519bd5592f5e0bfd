"""What the HTTP edge's handlers use, one small frozen object per group of endpoints.

Each controller takes its ``service`` (``dependencies.py``); the whole set is ``HttpServices``, on
``app.state.services`` for the middleware, the guards and the dashboard's pages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from prometheus_client import CollectorRegistry
from psycopg_pool import AsyncConnectionPool

from application.accounts.app import Accounts
from application.calling.app import Calling
from application.calling.carrier_reports import CarrierEdge
from application.calling.ports import SpeechEngine
from application.follower import ProjectionWorker
from application.numbers.provisioning import ManagedNumbering
from application.ports import Clock, FreshReads, RateLimiter, SecretBox
from application.providers.ports import Carrier
from application.push.ports import PushPorts
from application.webhooks.ports import WebhookPoster
from application.wizard.ports import WizardGenerator
from entrypoints.http.blocking import run_blocking
from entrypoints.http.context import HttpMetrics, VoiceMetrics
from entrypoints.settings import Settings


@dataclass(frozen=True)
class Views:
    """Read-your-writes on this process's read models."""

    current: Callable[[], bool]  # have they processed everything this process saved or saw?
    wait: Callable[[], None]  # wait (bounded) until they have


@dataclass(frozen=True)
class Reads:
    """The server's reads beside the applications: the async pool the views are queried on, the
    request gate (fresh reads on the event loop) and read-your-writes on the views."""

    pool: AsyncConnectionPool
    fresh: FreshReads
    views: Views
    accounts: Accounts

    async def caught_up(self, *, accounts_log: bool = False) -> None:
        """Before reading a view: wait (bounded) only when one is behind. With ``accounts_log``, the
        accounts views wait for every account change committed before the request, by any process
        (one coalesced read of the head), not only this process's and the watcher's."""
        if accounts_log:
            head = await self.fresh.accounts_head()
            self.accounts.known_head = max(self.accounts.known_head, head)
        if not self.views.current():
            await run_blocking(self.views.wait)


@dataclass(frozen=True)
class CallingService:
    """Calling, and the reads its endpoints make beside it."""

    calling: Calling
    reads: Reads


@dataclass(frozen=True)
class AccountsService:
    """Accounts, the reads of its views, and the budget of login attempts per client address."""

    accounts: Accounts
    reads: Reads
    clock: Clock
    rate_limiter: RateLimiter
    login_attempts: int
    login_window_seconds: int


@dataclass(frozen=True)
class WebhooksService:
    """Calling's webhook endpoints: the secrets' box, a poster (the URL check) and the dispatcher's hint."""

    calling: Calling
    reads: Reads
    secret_box: SecretBox
    poster: Callable[[], AbstractAsyncContextManager[WebhookPoster]]  # per use
    hint: Callable[[list[Any]], None]  # tells this process's dispatcher of deliveries due now


@dataclass(frozen=True)
class PushService:
    """Calling's Web Push subscriptions, and the push ports (None: not configured)."""

    calling: Calling
    ports: PushPorts | None


@dataclass(frozen=True)
class ProvidersService:
    """Calling's carrier credentials: the carrier that verifies them and the box that seals them."""

    calling: Calling
    carrier: Carrier
    credential_box: SecretBox


@dataclass(frozen=True)
class CarrierService:
    """The carrier's callbacks: Calling, the carrier's signatures and documents, the public base URL."""

    calling: Calling
    edge: CarrierEdge
    base_url: str


@dataclass(frozen=True)
class NumberingService:
    """Calling's numbers, the managed sub-account (None: not configured) and the setup wizard."""

    calling: Calling
    managed: ManagedNumbering | None
    wizard: WizardGenerator
    purchase_lease: timedelta


class Probe(Protocol):
    """/readyz's database check: each application's head and the next event after each position."""

    async def snapshot(self, positions: Mapping[str, set[int]]) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Readiness:
    """What /readyz reports on: the followers, the database, the pools."""

    projections: Mapping[str, ProjectionWorker]
    reactors: Mapping[str, ProjectionWorker]
    probe: Probe
    pool_stats: Mapping[str, Callable[[], Mapping[str, int]]]  # each pool's use, by name
    wall_clock: Callable[[], datetime]  # what a follower's lag is measured against
    max_lag_seconds: float


@dataclass(frozen=True)
class Admission:
    """Who a request is and whether its budget allows it: the accounts, the rate budgets, the clock."""

    accounts: Accounts
    fresh: FreshReads
    tier_limit: Callable[[str], int]
    clock: Clock


@dataclass(frozen=True)
class DashboardService:
    """The dashboard's session: the accounts, the CSRF key, the public base URL (empty: unset)."""

    accounts: Accounts
    admission: Admission
    csrf_key: bytes
    public_base_url: str


@dataclass(frozen=True)
class HttpServices:
    """Every service of the HTTP edge."""

    settings: Settings
    reads: Reads
    calling: CallingService
    accounts: AccountsService
    webhooks: WebhooksService
    push: PushService
    providers: ProvidersService
    carrier: CarrierService
    numbering: NumberingService
    readiness: Readiness
    admission: Admission
    dashboard: DashboardService
    speech_engine: Callable[[str], SpeechEngine]  # by a profile's ``speech`` name
    metrics_registry: CollectorRegistry
    http_metrics: HttpMetrics
    voice_metrics: VoiceMetrics
    database_outage: Callable[[BaseException], bool]  # does an error say the database cannot be reached?

