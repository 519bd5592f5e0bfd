"""Races on real PostgreSQL: uniqueness through index aggregates, facts that must all be recorded."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from application.accounts import authentication, keys, registration, sessions
from application.errors import ConflictError
from domain.accounts.api_key import ApiKey
from tests.support.setup import PASSWORD


def test_concurrent_signups_with_one_email_create_exactly_one_account(container):
    def attempt(_: int) -> str:
        try:
            registration.register(container.accounts, email="race@example.com", password=PASSWORD, name=None)
            return "created"
        except ConflictError as exc:
            return exc.code

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(attempt, range(16)))
    assert results.count("created") == 1
    assert set(results) == {"created", "email_taken"}


def test_every_concurrent_use_of_a_rotated_key_is_audited(container):
    accounts = container.accounts
    done = registration.register(accounts, email="grace@example.com", password=PASSWORD, name=None)
    owner = authentication.authenticate_key(accounts, done.key.secret, method="GET", path="/")
    _, old = keys.rotate_key(accounts, owner, done.key.key_id)

    def use(i: int) -> str:
        return authentication.authenticate_key(accounts, done.key.secret, method="GET", path=f"/v1/x/{i}").tenant_id

    with ThreadPoolExecutor(max_workers=8) as pool:
        tenants = list(pool.map(use, range(24)))
    assert set(tenants) == {done.tenant.tenant_id}
    uses = [e for e in accounts.events.get(old.id) if isinstance(e, ApiKey.RotatedKeyUsed)]
    assert len(uses) == 24


def test_concurrent_logins_of_one_user_all_succeed(container):
    registration.register(container.accounts, email="many@example.com", password=PASSWORD, name=None)

    def login(_: int) -> int:
        return sessions.login(container.accounts, email="many@example.com", password=PASSWORD, client_ip="127.0.0.1").expires_in

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(login, range(12))) == [86400] * 12


def test_concurrent_suppressions_of_one_tenant_all_reach_its_index(container):
    from application.calling import suppressions
    from application.principal import API_KEY, Principal

    principal = Principal(kind=API_KEY, tenant_id="ten_" + "c" * 32, user_id="usr_" + "c" * 32,
                          verification_status="approved", tier="standard", key_id="key_c")
    numbers = [f"+44207183{i:04d}" for i in range(1000, 1024)]

    def add(number: str) -> str:
        return suppressions.add(container.calling, principal, e164=number, reason="asked", expires_at=None).e164

    with ThreadPoolExecutor(max_workers=8) as pool:
        added = list(pool.map(add, numbers))
    index = suppressions.index_of(container.calling, principal.tenant_id)
    assert sorted(added) == sorted(numbers)
    assert index is not None and all(index.is_suppressed(n, container.clock()) for n in numbers)
    suppressions.remove(container.calling, principal, e164=numbers[0])
    index = suppressions.index_of(container.calling, principal.tenant_id)
    assert not index.is_suppressed(numbers[0], container.clock()) and index.is_suppressed(numbers[1], container.clock())
