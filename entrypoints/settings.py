"""Settings read from ``CALLWRIGHT_*`` environment variables (one place, typed, with defaults)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

DEFAULT_TIERS = {"standard": 60, "growth": 600, "scale": 3000}


@dataclass(frozen=True, kw_only=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = Path("var")
    database_url: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    public_base_url: str | None = None
    rate_limit_tiers: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_TIERS))
    login_attempts: int = 10
    login_window_seconds: int = 300
    scrypt_n: int = 2**15
    log_level: str = "info"
    log_format: str = "json"
    max_call_seconds: int = 600
    simulated_from_number: str = "+15005550006"
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    anthropic_model: str | None = None
    # None: the real Twilio API; else every *.twilio.com request goes here (a fake carrier in tests).
    twilio_api_base_url: str | None = None
    # The service's own carrier sub-account, which buys managed numbers (docs/numbers.md); both or none.
    managed_account_sid: str | None = None
    managed_auth_token: str | None = field(default=None, repr=False)
    # Local development only: webhook targets on private addresses, and plain http.
    webhook_allow_private: bool = False
    webhook_allow_http: bool = False
    webhook_timeout_seconds: float = 10.0  # per attempt; at most 10
    webhook_retry_delays: tuple[float, ...] = (5.0, 30.0, 120.0)  # seconds after failures 1-3 (SPEC.md Events 6)
    # Web Push (docs/push.md): the VAPID contact a push service may write to, and each send's timeout.
    push_contact: str = "mailto:push@localhost"
    push_timeout_seconds: float = 5.0
    # Live calls: engine profile overrides ({"alpha_31": {"transport": "stream"}}), recording,
    # how long a stream token lives, and when the reconciler asks the carrier about a call.
    voice_profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    record_calls: bool = True
    stream_token_seconds: int = 300
    ready_max_lag_seconds: float = 30.0  # /readyz: a follower older than this is "degraded"
    database_wait_seconds: float = 3.0  # a request's wait for a database connection; then 503
    reconcile_after_seconds: float = 60.0  # a dial with no carrier answer, or a silent call past its end
    # The wizard's purchase claim (docs/wizard.md): how long a number purchase may be on its way before
    # a retry looks for the number at the carrier; longer than a carrier request's timeout (10 s).
    wizard_purchase_lease_seconds: float = 30.0
    # `callwright serve`: granian worker processes, and whether they lead the followers (views,
    # reactors, periodic jobs). Off when `callwright worker` processes run them (compose's mode): the
    # views are then only watched for read-your-writes.
    http_workers: int = 1
    http_followers: bool = True
    # The most PostgreSQL connections one process holds, split between its pools by its role
    # (entrypoints/bootstrap/roles.py); None: the role's default.
    database_max_connections: int | None = None
    # SIGTERM: how long a worker lets the calls it has started finish before it exits (the calls
    # waiting for it are handed back at once).
    shutdown_grace_seconds: float = 20.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        if "CALLWRIGHT_HOST" in env:
            values["host"] = env["CALLWRIGHT_HOST"]
        if "CALLWRIGHT_PORT" in env:
            values["port"] = int(env["CALLWRIGHT_PORT"])
        if "CALLWRIGHT_DATA_DIR" in env:
            values["data_dir"] = Path(env["CALLWRIGHT_DATA_DIR"])
        for name in ("database_url", "secret_key", "public_base_url", "log_level", "log_format"):
            value = env.get(f"CALLWRIGHT_{name.upper()}")
            if value:
                values[name] = value
        if env.get("CALLWRIGHT_RATE_LIMIT_TIERS"):
            values["rate_limit_tiers"] = {k: int(v) for k, v in json.loads(env["CALLWRIGHT_RATE_LIMIT_TIERS"]).items()}
        if env.get("CALLWRIGHT_LOGIN_ATTEMPTS"):
            values["login_attempts"] = max(1, int(env["CALLWRIGHT_LOGIN_ATTEMPTS"]))
        if env.get("CALLWRIGHT_MAX_CALL_SECONDS"):
            values["max_call_seconds"] = int(env["CALLWRIGHT_MAX_CALL_SECONDS"])
        for name in ("anthropic_api_key", "anthropic_base_url"):
            if env.get(name.upper()):
                values[name] = env[name.upper()]
        if env.get("CALLWRIGHT_ANTHROPIC_MODEL"):
            values["anthropic_model"] = env["CALLWRIGHT_ANTHROPIC_MODEL"]
        for name in ("managed_account_sid", "managed_auth_token"):
            if env.get(f"CALLWRIGHT_{name.upper()}", "").strip():
                values[name] = env[f"CALLWRIGHT_{name.upper()}"].strip()
        if env.get("CALLWRIGHT_TWILIO_API_BASE_URL"):
            values["twilio_api_base_url"] = env["CALLWRIGHT_TWILIO_API_BASE_URL"].strip()
        for name in ("webhook_allow_private", "webhook_allow_http"):
            if env.get(f"CALLWRIGHT_{name.upper()}"):
                values[name] = env[f"CALLWRIGHT_{name.upper()}"].strip().lower() in ("1", "true", "yes", "on")
        if env.get("CALLWRIGHT_WEBHOOK_TIMEOUT_SECONDS"):
            values["webhook_timeout_seconds"] = min(10.0, float(env["CALLWRIGHT_WEBHOOK_TIMEOUT_SECONDS"]))
        if env.get("CALLWRIGHT_WEBHOOK_RETRY_DELAYS"):
            delays = tuple(float(v) for v in env["CALLWRIGHT_WEBHOOK_RETRY_DELAYS"].split(","))
            if len(delays) != 3 or min(delays) <= 0:
                raise ValueError("CALLWRIGHT_WEBHOOK_RETRY_DELAYS takes three positive numbers of seconds, e.g. 5,30,120")
            values["webhook_retry_delays"] = delays
        if env.get("CALLWRIGHT_PUSH_CONTACT", "").strip():
            values["push_contact"] = env["CALLWRIGHT_PUSH_CONTACT"].strip()
        if env.get("CALLWRIGHT_PUSH_TIMEOUT_SECONDS"):
            values["push_timeout_seconds"] = min(10.0, float(env["CALLWRIGHT_PUSH_TIMEOUT_SECONDS"]))
        if env.get("CALLWRIGHT_VOICE_PROFILES"):
            values["voice_profiles"] = json.loads(env["CALLWRIGHT_VOICE_PROFILES"])
        if env.get("CALLWRIGHT_RECORD_CALLS"):
            values["record_calls"] = env["CALLWRIGHT_RECORD_CALLS"].strip().lower() in ("1", "true", "yes", "on")
        if env.get("CALLWRIGHT_STREAM_TOKEN_SECONDS"):
            values["stream_token_seconds"] = int(env["CALLWRIGHT_STREAM_TOKEN_SECONDS"])
        if env.get("CALLWRIGHT_RECONCILE_AFTER_SECONDS"):
            values["reconcile_after_seconds"] = float(env["CALLWRIGHT_RECONCILE_AFTER_SECONDS"])
        if env.get("CALLWRIGHT_WIZARD_PURCHASE_LEASE_SECONDS"):
            values["wizard_purchase_lease_seconds"] = float(env["CALLWRIGHT_WIZARD_PURCHASE_LEASE_SECONDS"])
        if env.get("CALLWRIGHT_READY_MAX_LAG_SECONDS"):
            values["ready_max_lag_seconds"] = float(env["CALLWRIGHT_READY_MAX_LAG_SECONDS"])
        if env.get("CALLWRIGHT_DATABASE_WAIT_SECONDS"):
            wait = float(env["CALLWRIGHT_DATABASE_WAIT_SECONDS"])
            if not 0 < wait <= 60:
                raise ValueError("CALLWRIGHT_DATABASE_WAIT_SECONDS takes a number of seconds above 0, at most 60")
            values["database_wait_seconds"] = wait
        if env.get("CALLWRIGHT_HTTP_WORKERS"):
            values["http_workers"] = max(1, int(env["CALLWRIGHT_HTTP_WORKERS"]))
        if env.get("CALLWRIGHT_HTTP_FOLLOWERS"):
            values["http_followers"] = env["CALLWRIGHT_HTTP_FOLLOWERS"].strip().lower() in ("1", "true", "yes", "on")
        if env.get("CALLWRIGHT_DATABASE_MAX_CONNECTIONS"):
            connections = int(env["CALLWRIGHT_DATABASE_MAX_CONNECTIONS"])
            if connections < 1:
                raise ValueError("CALLWRIGHT_DATABASE_MAX_CONNECTIONS takes a positive number of connections")
            values["database_max_connections"] = connections
        if env.get("CALLWRIGHT_SHUTDOWN_GRACE_SECONDS"):
            grace = float(env["CALLWRIGHT_SHUTDOWN_GRACE_SECONDS"])
            if not 0 <= grace <= 600:
                raise ValueError("CALLWRIGHT_SHUTDOWN_GRACE_SECONDS takes a number of seconds from 0 to 600")
            values["shutdown_grace_seconds"] = grace
        if env.get("CALLWRIGHT_SCRYPT_N"):
            values["scrypt_n"] = int(env["CALLWRIGHT_SCRYPT_N"])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_overrides(self, **overrides: Any) -> Settings:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    @property
    def engine_profiles(self) -> dict[str, Any]:
        from domain.calls.engines import profiles_from

        return profiles_from(self.voice_profiles)

    @property
    def wizard_purchase_lease(self) -> timedelta:
        return timedelta(seconds=self.wizard_purchase_lease_seconds)

    @property
    def base_url(self) -> str:
        return (self.public_base_url or f"http://{self.host}:{self.port}").rstrip("/")

    def tier_limit(self, tier: str) -> int:
        return int(self.rate_limit_tiers.get(tier, self.rate_limit_tiers.get("standard", 60)))
