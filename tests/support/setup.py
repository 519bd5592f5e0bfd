"""Setting up tenants in an in-process app (Litestar ``TestClient``): sign-up, approval, scoped
keys, carrier credentials verified at the fake Twilio, the caller number. The process flavour
(a real ``callwright serve``) is in ``tests/e2e/service.py``."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from litestar.testing import TestClient

from adapters.crypto.passwords import ScryptPasswordHasher
from entrypoints.bootstrap import Container
from tests.fakes.twilio.rest import FakeAccount, FakeTwilio

# Cheap scrypt for speed; the production cost is exercised in tests/unit/test_passwords.py.
FAST_HASHER = ScryptPasswordHasher(n=2**10)
PASSWORD = "correct horse battery"
VERIFY_CARRIER = "/v1/providers/carrier/verify"
SELECT_NUMBER = "/v1/providers/select-number"


@dataclass
class Account:
    user_id: str
    tenant_id: str
    email: str
    key_id: str
    api_key: str  # the initial key's secret (the sign-up answer's "secret")

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}


_serial = itertools.count(1)


def signup(client: TestClient[Any], email: str | None = None, password: str = PASSWORD) -> Account:
    """A new tenant awaiting review, with its owner and initial all-permissions key."""
    email = email or f"user{next(_serial)}@example.com"
    response = client.post("/auth/signup", json={"email": email, "password": password})
    assert response.status_code == 201, response.text
    body = response.json()
    return Account(body["user_id"], body["tenant_id"], body["email"], body["key_id"], body["secret"])


def approve(container: Container, account: Account) -> None:
    from application.accounts.administration import approve_user

    approve_user(container.accounts, account.user_id, by="test")


def new_tenant(client: TestClient[Any], container: Container) -> Account:
    """A signed-up and approved tenant."""
    created = signup(client)
    approve(container, created)
    return created


def scoped_key(client: TestClient[Any], account: Account, scopes: list[str]) -> dict[str, str]:
    response = client.post("/auth/api-keys", json={"scopes": scopes}, headers=account.headers)
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['secret']}"}


def verify_carrier(client: TestClient[Any], headers: dict[str, str], account_sid: str, auth_token: str) -> Any:
    """``POST /v1/providers/carrier/verify``; the response, unchecked."""
    return client.post(VERIFY_CARRIER, json={"account_sid": account_sid, "auth_token": auth_token}, headers=headers)


def select_number(client: TestClient[Any], headers: dict[str, str], e164: str) -> Any:
    """``POST /v1/providers/select-number``; the response, unchecked."""
    return client.post(SELECT_NUMBER, json={"e164": e164}, headers=headers)


def carrier_tenant(client: TestClient[Any], container: Container, fake: FakeTwilio, numbers: list[tuple[str, str]],
                   *, friendly_name: str = "Fake account", select: bool = True) -> tuple[Account, FakeAccount]:
    """An approved tenant whose credentials for a new fake carrier account holding ``numbers`` are
    verified; unless ``select`` is False, the first number is its caller number."""
    tenant = new_tenant(client, container)
    carrier = fake.add_account(friendly_name=friendly_name, numbers=numbers)
    verified = verify_carrier(client, tenant.headers, carrier.sid, carrier.auth_token)
    assert verified.status_code == 200, verified.text
    if select:
        assert select_number(client, tenant.headers, numbers[0][0]).status_code == 200
    return tenant, carrier
