"""Public ids, database URLs and settings parsing."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.postgres.database import DatabaseConfig
from domain import ids
from entrypoints.settings import Settings


@given(st.uuids())
def test_public_ids_round_trip(value: uuid.UUID):
    assert ids.from_public(ids.USER, ids.to_public(ids.USER, value)) == value


@given(st.text(max_size=50))
def test_malformed_public_ids_are_refused_cleanly(text: str):
    try:
        ids.from_public(ids.API_KEY, text)
    except ids.MalformedIdError:
        pass


def test_an_id_of_another_kind_is_refused():
    with pytest.raises(ids.MalformedIdError):
        ids.from_public(ids.API_KEY, ids.to_public(ids.USER, uuid.uuid4()))


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://postgres@127.0.0.1:5432/test",
        "postgresql://u:p%40ss@db.example:5433/callwright?schema=tenant_a",
        "postgresql://postgres@:5432/postgres?host=%2Ftmp%2Fsock",
    ],
)
def test_database_urls_round_trip(url: str):
    config = DatabaseConfig.from_url(url)
    assert DatabaseConfig.from_url(config.to_url()) == config


def test_a_non_postgres_url_is_refused():
    with pytest.raises(ValueError):
        DatabaseConfig.from_url("mysql://x@y/z")


def test_settings_read_the_environment_and_options_win():
    env = {"CALLWRIGHT_PORT": "8100", "CALLWRIGHT_DATA_DIR": "/tmp/cw", "CALLWRIGHT_RATE_LIMIT_TIERS": '{"standard": 5}'}
    settings = Settings.from_env(env)
    assert settings.port == 8100 and settings.data_dir == Path("/tmp/cw") and settings.tier_limit("standard") == 5
    assert settings.tier_limit("unknown") == 5
    assert Settings.from_env(env, port=9000).port == 9000
    assert settings.base_url == "http://127.0.0.1:8100"


def test_the_readiness_lag_threshold_is_seconds_from_the_environment():
    assert Settings.from_env({}).ready_max_lag_seconds == 30.0
    assert Settings.from_env({"CALLWRIGHT_READY_MAX_LAG_SECONDS": "12.5"}).ready_max_lag_seconds == 12.5


def test_the_twilio_api_base_url_defaults_to_the_real_api_and_can_point_at_a_fake():
    """Issue 5 item 8: CALLWRIGHT_TWILIO_API_BASE_URL points a running server at any fake carrier."""
    assert Settings.from_env({}).twilio_api_base_url is None
    fake = Settings.from_env({"CALLWRIGHT_TWILIO_API_BASE_URL": "http://127.0.0.1:9999"})
    assert fake.twilio_api_base_url == "http://127.0.0.1:9999"


def test_serve_takes_its_worker_count_and_where_the_followers_run_from_the_environment():
    assert (Settings.from_env({}).http_workers, Settings.from_env({}).http_followers) == (1, True)
    scaled = Settings.from_env({"CALLWRIGHT_HTTP_WORKERS": "2", "CALLWRIGHT_HTTP_FOLLOWERS": "0"})
    assert (scaled.http_workers, scaled.http_followers) == (2, False)


def test_login_attempts_per_address_come_from_the_environment():
    assert Settings.from_env({}).login_attempts == 10
    assert Settings.from_env({"CALLWRIGHT_LOGIN_ATTEMPTS": "25"}).login_attempts == 25
    assert Settings.from_env({"CALLWRIGHT_LOGIN_ATTEMPTS": "0"}).login_attempts == 1
