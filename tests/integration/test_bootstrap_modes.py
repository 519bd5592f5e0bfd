"""Each run mode's container (entrypoints/bootstrap): what it follows, what it commits through, and
which ports it was given at construction."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from adapters.postgres.database import DatabaseConfig
from adapters.postgres.rate_limiter import PostgresRateLimiter
from application.accounts import registration
from application.calling.live_ports import LivePorts
from entrypoints.bootstrap import (
    Container,
    ServerContainer,
    bootstrap,
    bootstrap_cli,
    bootstrap_http,
    bootstrap_memory,
    bootstrap_relay,
    bootstrap_worker,
)
from entrypoints.bootstrap.containers import NO_DISPATCH
from entrypoints.settings import Settings
from entrypoints.workers.kafka_mode import KafkaSettings
from entrypoints.workers.webhook_dispatcher import WebhookDispatcher
from tests.support.setup import FAST_HASHER, PASSWORD
from tests.fakes.clock import FakeClock

REACTORS = {"call_runner", "live_settler", "webhook_scheduler", "greeting_renderer", "post_call_sms", "push_notifier"}
VIEWS = {"audit_events_v1", "api_keys_v1", "suppressions_v1", "calls_list_v1", "call_facts_v1", "webhook_deliveries_v1",
         "voice_model_stats_v1", "templates_v1", "flows_v1"}


@pytest.fixture
def opened(db: DatabaseConfig) -> Iterator[list[Container]]:
    built: list[Container] = []
    yield built
    for container in built:
        container.close()


def options(db: DatabaseConfig) -> dict[str, object]:
    return {"database": db, "clock": FakeClock(), "hasher": FAST_HASHER}


def test_the_test_mode_follows_every_log_and_commits_in_groups(settings: Settings, db: DatabaseConfig,
                                                              opened: list[Container]) -> None:
    container = bootstrap(settings, **options(db))
    opened.append(container)
    assert set(container.projections) == VIEWS and set(container.reactors) == REACTORS
    assert isinstance(container.webhook_dispatch, WebhookDispatcher)
    assert container.calling.commits.asynchronous and container.accounts.commits.asynchronous
    assert isinstance(container.rate_limiter, PostgresRateLimiter)
    assert isinstance(container.calling.live, LivePorts)  # given at construction, not patched in


def test_the_http_mode_leaves_reactors_to_kafka_workers_when_kafka_is_configured(
        settings: Settings, db: DatabaseConfig, opened: list[Container], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLWRIGHT_KAFKA_BOOTSTRAP", "127.0.0.1:9")
    container = bootstrap_http(settings, **options(db))
    opened.append(container)
    assert set(container.projections) == VIEWS and container.reactors == {}
    assert container.webhook_dispatch is NO_DISPATCH
    assert not hasattr(container, "fresh_reads") and not hasattr(container, "read_pool")  # the HTTP app's services


def test_the_http_mode_without_followers_only_watches_the_views_a_worker_leads(
        settings: Settings, db: DatabaseConfig, opened: list[Container]) -> None:
    api = bootstrap_http(replace(settings, http_followers=False), **options(db))
    opened.append(api)
    assert set(api.projections) == VIEWS and api.reactors == {} and api.webhook_dispatch is NO_DISPATCH
    worker, _ = bootstrap_worker(settings, None, reactors=False, **options(db))
    opened.append(worker)
    api.start_projections()
    worker.start_projections()
    registration.register(api.accounts, email="api@example.com", password=PASSWORD, name=None)
    api.wait_for_views(timeout=5)  # read-your-writes from the worker's tracking
    assert api.views_current()
    assert not any(follower.is_leader for follower in api.projections.values())
    assert all(follower.is_leader for follower in worker.projections.values())


def test_the_worker_mode_can_run_only_the_read_models(settings: Settings, db: DatabaseConfig,
                                                      opened: list[Container]) -> None:
    container, fed = bootstrap_worker(settings, None, reactors=False, **options(db))
    opened.append(container)
    assert set(container.projections) == VIEWS and container.reactors == {} and fed.sources == {}


def test_the_relay_mode_follows_no_view_and_relays_both_logs(settings: Settings, db: DatabaseConfig,
                                                             opened: list[Container]) -> None:
    container, relays = bootstrap_relay(settings, KafkaSettings(bootstrap="127.0.0.1:9"), **options(db))
    opened.append(container)
    try:
        assert container.projections == {} and container.reactors == {}
        assert set(relays.sources) == {"kafka_relay.accounts", "kafka_relay.calling"}
    finally:
        relays.stop()


def test_the_cli_mode_has_the_applications_and_no_followers(settings: Settings, db: DatabaseConfig,
                                                            opened: list[Container]) -> None:
    container = bootstrap_cli(settings, **options(db))
    opened.append(container)
    assert container.projections == {} and container.reactors == {} and container.webhook_dispatch is NO_DISPATCH


def test_the_memory_mode_commits_directly_on_popo(settings: Settings) -> None:
    container = bootstrap_memory(settings, hasher=FAST_HASHER)
    try:
        assert not isinstance(container, ServerContainer) and not container.calling.commits.asynchronous
        assert not hasattr(container, "database") and not hasattr(container, "conninfo")
    finally:
        container.close()


def test_the_master_key_is_read_once_per_container(settings: Settings, db: DatabaseConfig, opened: list[Container],
                                                  monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from adapters.crypto import master_key

    loads: list[object] = []
    original = master_key.load_or_create
    monkeypatch.setattr(master_key, "load_or_create", lambda *a, **k: loads.append(a) or original(*a, **k))
    opened.append(bootstrap(settings, **options(db)))
    assert len(loads) == 1
