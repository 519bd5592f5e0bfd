"""SPEC.md Limits (API rate, login attempts) and Errors › 429: budgets, headers and sharing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from litestar.testing import TestClient

from entrypoints.bootstrap import bootstrap
from entrypoints.http.app import create_app
from tests.support.setup import FAST_HASHER, PASSWORD

LIMIT = 60  # SPEC.md Limits: the example response shows a limit header of 60 (default tier)
WINDOW_END = 1793620860  # 2026-11-02T12:01:00Z: the FakeClock starts at 12:00:00


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def spend(client: TestClient[Any], headers: dict[str, str], times: int) -> list[Any]:
    return [client.get("/auth/me", headers=headers) for _ in range(times)]


@contextmanager
def second_process(container: Any, settings: Any, clock: Any, mail: Any, **overrides: Any) -> Iterator[TestClient[Any]]:
    """Another API process on the same database (its own caches, pools and limiter)."""
    other = bootstrap(settings.with_overrides(**overrides), database=container.database, clock=clock, email=mail,
                      hasher=FAST_HASHER, projections=False)
    try:
        with TestClient(create_app(other, start_projections=False), raise_server_exceptions=False) as client:
            yield client
    finally:
        other.close()


# --- per-key budget ---------------------------------------------------------------------------------


def test_answers_carry_rate_limit_headers_counting_down(client, account):
    remaining = []
    for response in [client.get("/v1/audit-events", headers=account.headers), *spend(client, account.headers, 2)]:
        assert response.status_code == 200
        assert response.headers["X-RateLimit-Limit"] == str(LIMIT)
        assert response.headers["X-RateLimit-Reset"] == str(WINDOW_END)
        remaining.append(int(response.headers["X-RateLimit-Remaining"]))
    assert remaining == [59, 58, 57]


def test_the_61st_request_in_a_minute_is_refused_until_the_next_minute(client, account, clock):
    """SPEC.md Errors: 429 with Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset."""
    answers = spend(client, account.headers, LIMIT)
    assert [r.status_code for r in answers] == [200] * LIMIT
    assert answers[-1].headers["X-RateLimit-Remaining"] == "0"

    clock.advance(timedelta(seconds=15))
    refused = client.get("/v1/audit-events", headers=account.headers)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert refused.headers["Retry-After"] == "45"
    assert refused.headers["X-RateLimit-Limit"] == "60"
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.headers["X-RateLimit-Reset"] == str(WINDOW_END)
    assert client.get("/auth/me", headers=account.headers).status_code == 429

    clock.advance(timedelta(seconds=45))
    response = client.get("/auth/me", headers=account.headers)
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Remaining"] == "59"
    assert response.headers["X-RateLimit-Reset"] == str(WINDOW_END + 60)


def test_each_key_and_each_dashboard_user_has_its_own_budget(client, account):
    other_key = client.post("/auth/api-keys", headers=account.headers).json()["secret"]
    token = client.post("/auth/login", json={"email": account.email, "password": PASSWORD}).json()["access_token"]
    spend(client, account.headers, LIMIT)
    assert client.get("/auth/me", headers=account.headers).status_code == 429

    for headers in (bearer(other_key), bearer(token)):
        response = client.get("/auth/me", headers=headers)
        assert response.status_code == 200
        assert response.headers["X-RateLimit-Remaining"] == "59"


def test_a_request_is_counted_once_when_the_accounts_log_moved_since_the_key_was_read(client, account):
    """The hot path counts a request before it learns that its remembered key may be stale; the
    full path that then re-reads the key must not count it again."""
    before = client.get("/auth/me", headers=account.headers)
    moved = client.post("/auth/api-keys", headers=account.headers)  # a new key moves the accounts log
    after = client.get("/auth/me", headers=account.headers)
    again = client.get("/auth/me", headers=account.headers)

    assert before.status_code == after.status_code == again.status_code == 200 and moved.status_code == 201
    remaining = [int(r.headers["X-RateLimit-Remaining"]) for r in (before, moved, after, again)]
    assert remaining == [remaining[0] - i for i in range(4)]


def test_the_budget_is_shared_by_every_api_process(client, account, container, settings, clock, mail):
    """ARCHITECTURE.md §9: rate limits are shared across processes (PostgreSQL-backed)."""
    with second_process(container, settings, clock, mail) as second:
        first_half = spend(client, account.headers, 30)
        second_half = spend(second, account.headers, 30)
        assert {r.status_code for r in first_half + second_half} == {200}
        assert second_half[-1].headers["X-RateLimit-Remaining"] == "0"

        assert second.get("/auth/me", headers=account.headers).status_code == 429
        assert client.get("/auth/me", headers=account.headers).status_code == 429


def test_the_budget_follows_the_tier_table(client, account, container, settings, clock, mail):
    """SPEC.md Limits: a per-minute budget per key, scaled by tier (numbers come from settings)."""
    with second_process(container, settings, clock, mail, rate_limit_tiers={"standard": 3, "growth": 30}) as small:
        answers = spend(small, account.headers, 4)
    assert [r.status_code for r in answers] == [200, 200, 200, 429]
    assert answers[0].headers["X-RateLimit-Limit"] == "3"


# --- login and forgot-password: per client address --------------------------------------------------


WRONG = "not the password"


def login(client: TestClient[Any], email: str, password: str = WRONG) -> Any:
    return client.post("/auth/login", json={"email": email, "password": password})


def test_the_11th_login_attempt_in_five_minutes_is_refused(client, account, clock):
    """SPEC.md Limits: login attempts 10 per 5 minutes per IP (successful ones count too)."""
    attempts = [login(client, account.email, PASSWORD if i % 2 else WRONG) for i in range(10)]
    assert [r.status_code for r in attempts] == [401, 200] * 5

    clock.advance(timedelta(minutes=1))
    refused = login(client, account.email, PASSWORD)  # even the right password
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert refused.headers["Retry-After"] == "240"
    assert refused.headers["X-RateLimit-Limit"] == "10"
    assert refused.headers["X-RateLimit-Remaining"] == "0"

    clock.advance(timedelta(minutes=4))
    assert login(client, account.email, PASSWORD).status_code == 200


def test_forgot_password_shares_the_login_budget(client, account, mail):
    """SPEC.md Authentication §4: the forgot-password endpoint shares the per-IP login limit."""
    assert [login(client, account.email).status_code for _ in range(6)] == [401] * 6
    forgot = [client.post("/auth/forgot-password", json={"email": account.email}) for _ in range(5)]
    assert [r.status_code for r in forgot] == [200] * 4 + [429]
    assert forgot[-1].headers["Retry-After"] == "300"
    assert len([m for m in mail.messages if m.kind == "password_reset"]) == 4
    assert login(client, account.email, PASSWORD).status_code == 429
    unknown = client.post("/auth/forgot-password", json={"email": "nobody@example.com"})
    assert unknown.status_code == 429  # the limit does not depend on whether the address exists
