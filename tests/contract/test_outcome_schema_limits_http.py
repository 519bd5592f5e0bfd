"""A request's ``outcome_schema`` over its size limits is a 422 listing every problem with the limit
in ``ctx`` (SPEC.md Errors), for a single call and a batch alike; nothing is queued."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from entrypoints.bootstrap import Container
from tests.support.call_requests import LONDON, batch_body, call_body, problems, queued_call_ids
from tests.support.setup import Account, new_tenant
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures

HUGE_ENUM = {"reason": {"type": "enum", "values": [f"r{n}" for n in range(100_000)]}}  # about 790 KB of JSON


@pytest.fixture(scope="module")
def account(client: TestClient[Any], container: Container) -> Account:
    return new_tenant(client, container)


def test_an_enum_of_100000_values_is_422_with_the_limits_in_ctx(client, container, account):
    response = client.post("/v1/calls", json=call_body(outcome_schema=HUGE_ENUM), headers=account.headers)

    assert response.status_code == 422, response.text[:500]
    found = {(tuple(p["loc"]), p["type"]): p["ctx"] for p in problems(response)}
    assert found == {
        (("body", "outcome_schema"), "too_long"): {"max_bytes": 16_384},
        (("body", "outcome_schema", "reason", "values"), "too_long"): {"max_length": 100},
    }
    assert queued_call_ids(container, account.tenant_id) == []


def test_a_long_enum_value_in_a_batch_is_422_at_its_place(client, account):
    body = batch_body([{"to": LONDON}], outcome_schema={"pick": {"type": "enum", "values": ["a", "b" * 101]}})
    response = client.post("/v1/calls/batch", json=body, headers=account.headers)

    assert response.status_code == 422, response.text
    assert [(p["loc"], p["type"], p["ctx"]) for p in problems(response)] == [
        (["body", "outcome_schema", "pick", "values", 1], "string_too_long", {"max_length": 100})]
