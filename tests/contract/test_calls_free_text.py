"""SPEC.md Call create request: free JSON values (``metadata``, ``simulation.facts``) hold text
under the rule of every other text field: a NUL anywhere in them is a 422 at its own loc."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from entrypoints.bootstrap import Container
from tests.support.call_requests import LONDON, batch_body, call_body, problems
from tests.support.setup import Account, new_tenant
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures


@pytest.fixture(scope="module")
def account(client: TestClient[Any], container: Container) -> Account:
    return new_tenant(client, container)


@pytest.mark.parametrize(("metadata", "loc"), [
    ({"crm": "a\x00b"}, ["body", "metadata", "crm"]),
    ({"crm": {"ids": ["ok", "x\x00"]}}, ["body", "metadata", "crm", "ids", 1]),
    ({"cr\x00m": "ok"}, ["body", "metadata", "cr\x00m", "[key]"]),
    ({"crm": {"in\x00ner": 1}}, ["body", "metadata", "crm", "in\x00ner", "[key]"]),
])
def test_a_nul_anywhere_in_metadata_is_422_at_its_loc(client, account, metadata, loc):
    response = client.post("/v1/calls", json=call_body(metadata=metadata), headers=account.headers)

    assert response.status_code == 422, response.text
    assert [(p["loc"], p["type"], p["msg"]) for p in problems(response)] == [
        (loc, "value_error", "Value error, must not contain NUL characters")]


def test_every_nul_in_metadata_is_listed(client, account):
    response = client.post("/v1/calls", json=call_body(metadata={"a": "\x00", "b": ["\x00"]}), headers=account.headers)

    assert [p["loc"] for p in problems(response)] == [["body", "metadata", "a"], ["body", "metadata", "b", 0]]


def test_a_nul_in_a_batch_item_metadata_is_422_at_the_item(client, account):
    body = batch_body([{"to": LONDON, "metadata": {"note": "x\x00"}}])
    response = client.post("/v1/calls/batch", json=body, headers=account.headers)

    assert response.status_code == 422, response.text
    assert [p["loc"] for p in problems(response)] == [["body", "items", 0, "metadata", "note"]]


def test_a_nul_in_a_simulation_fact_is_422_at_the_fact(client, account):
    body = call_body(mode="simulated", simulation={"facts": {"a": ["fine", "x\x00"]}})
    response = client.post("/v1/calls", json=body, headers=account.headers)

    assert [(p["loc"], p["type"]) for p in problems(response)] == [
        (["body", "simulation", "facts", "a", 1], "value_error")]


def test_a_nul_in_a_variable_is_422_at_the_variable(client, account):
    response = client.post("/v1/calls", json=call_body(variables={"name": "A\x00"}), headers=account.headers)

    assert [(p["loc"], p["type"]) for p in problems(response)] == [(["body", "variables", "name"], "value_error")]


def test_metadata_without_nul_is_kept_as_sent(client, account):
    metadata = {"crm": {"ids": ["é", 1, None, True]}, "note": "tab\tok"}
    created = client.post("/v1/calls", json=call_body(metadata=metadata), headers=account.headers)
    assert created.status_code == 201, created.text

    read = client.get(f"/v1/calls/{created.json()['call_id']}", headers=account.headers)
    assert read.json()["metadata"] == metadata
