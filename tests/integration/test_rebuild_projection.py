"""``callwright admin rebuild-projection`` (issue 17 item 4; entrypoints/bootstrap/rebuild.py): a
read model rebuilt from the log beside the live one while calls are created and listed, then
swapped in. No request fails meanwhile, the progress reaches the head, and once the load stops the
swapped-in table, its counts tables included, equals a generation projected from zero afterwards.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from eventsourcing.postgres import PostgresFactory
from psycopg import sql
from typer.testing import CliRunner

from adapters.postgres.database import DatabaseConfig
from application.follower import ProjectionWorker
from entrypoints.bootstrap.followers import READ_MODELS
from entrypoints.bootstrap.rebuild import rebuild
from projections.analyst_views import analyst_schema_name, install_analyst_views
from tests.support.call_requests import LONDON, call_body
from tests.support.setup import new_tenant
from tests.support.shared_app import shared_app

TABLES = ("calls_list_v1", "calls_list_v1_counts", "calls_list_v1_daily_counts", "calls_list_v1_prefix_counts",
          "calls_list_v1_confidence_counts")


@pytest.fixture
def service(pg_server: DatabaseConfig, tmp_path) -> Iterator[tuple[Any, Any]]:
    with shared_app(pg_server, tmp_path) as (client, container):
        yield client, container


def _rows(database: DatabaseConfig, schema: str, table: str) -> Counter[tuple[Any, ...]]:
    with psycopg.connect(database.conninfo()) as conn:
        columns = [row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
            "ORDER BY 1", (schema, table)).fetchall()]
        query = sql.SQL("SELECT {} FROM {}").format(sql.SQL(", ").join(map(sql.Identifier, columns)),
                                                   sql.Identifier(schema, table))
        return Counter(tuple(json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value
                             for value in row) for row in conn.execute(query).fetchall())


def _reference(database: DatabaseConfig, app: Any, view_class: Any, projection_class: Any) -> DatabaseConfig:
    """The same read model projected from zero in a schema of its own."""
    reference = database.with_schema(f"{database.schema}_ref")
    reference.ensure_schema()
    factory = PostgresFactory(reference.eventsourcing_env(pool_size=1))
    try:
        view = view_class(factory.datastore)
        view.create_table()
        projection = projection_class(view)
        ProjectionWorker(app, projection.process_event, view, name="reference", handles=projection.handles).catch_up()
    finally:
        factory.close()
    return reference


def _settled(client, tenant, container, calls: list[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        states = {client.get(f"/v1/calls/{call}", headers=tenant.headers).json()["status"] for call in calls}
        if states <= {"completed", "failed"} and container.views_current():
            return
        time.sleep(0.05)
    raise AssertionError("the calls did not settle")


def test_a_read_model_rebuilt_under_load_is_swapped_in_without_a_failed_request(service):
    client, container = service
    tenant = new_tenant(client, container)
    answers: Counter[int] = Counter()
    created: list[str] = []
    stop = threading.Event()

    def load() -> None:
        while not stop.is_set():
            response = client.post("/v1/calls", json=call_body(to=LONDON), headers=tenant.headers)
            answers[response.status_code] += 1
            if response.status_code == 201:
                created.append(response.json()["call_id"])
            listed = client.get("/v1/calls", params={"limit": 5}, headers=tenant.headers)
            answers[listed.status_code] += 1

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    while len(created) < 40:
        time.sleep(0.02)
    reported: list[tuple[int, int]] = []
    app, view_class, projection_class = READ_MODELS["calls_list_v1"](container)
    database = container.database
    done = rebuild(database, app, view_class, projection_class, progress=lambda p, h: reported.append((p, h)),
                   after_swap=lambda: install_analyst_views(database.conninfo(), database.schema))
    time.sleep(0.5)  # the load goes on across and after the swap
    stop.set()
    worker.join(timeout=30)

    assert set(answers) == {200, 201}, answers
    assert done.events > 0 and done.swap_ms < 5_000
    assert reported and reported[-1][0] == reported[-1][1] <= done.position  # then the swap's last steps
    _settled(client, tenant, container, created)
    reference = _reference(container.database, app, view_class, projection_class)
    try:
        for table in TABLES:
            assert _rows(container.database, container.database.schema, table) == _rows(
                container.database, reference.schema, table), table
        listed = client.get("/v1/calls", params={"limit": 200}, headers=tenant.headers).json()
        assert listed["total"] == len(created)
        with psycopg.connect(database.conninfo()) as conn:  # the analysts' view over it is back
            shown = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
                sql.Identifier(analyst_schema_name(database.schema), "calls"))).fetchone()[0]
        assert shown == len(created)
    finally:
        with psycopg.connect(container.database.conninfo(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(reference.schema)))


def test_the_command_names_the_read_models_and_refuses_an_unknown_one():
    from entrypoints.cli.main import app as cli

    result = CliRunner().invoke(cli, ["admin", "rebuild-projection", "nothing_v1"])
    assert result.exit_code == 2 and "calls_list_v1" in result.output


@pytest.mark.parametrize("name", sorted(READ_MODELS))
def test_every_read_model_rebuilds_to_what_a_replay_from_zero_gives(service, name):
    client, container = service
    tenant = new_tenant(client, container)
    key = client.post("/auth/api-keys", json={}, headers=tenant.headers).json()["key_id"]
    client.post(f"/auth/api-keys/{key}/rotate", headers=tenant.headers)
    client.post("/v1/templates", headers=tenant.headers, json={
        "name": "t", "objective": "Ask", "outcome_schema": {"ok": {"type": "boolean"}}})
    client.post("/v1/flows", headers=tenant.headers, json={
        "name": "f", "graph_json": {"start": "bye", "nodes": [{"id": "bye", "type": "end"}]}})
    client.post("/v1/suppressions", json={"e164": "+442079460001"}, headers=tenant.headers)
    calls = [client.post("/v1/calls", json=call_body(to=LONDON), headers=tenant.headers).json()["call_id"]
             for _ in range(3)]
    _settled(client, tenant, container, calls)
    app, view_class, projection_class = READ_MODELS[name](container)
    database = container.database
    with psycopg.connect(database.conninfo()) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename LIKE %s",
            (database.schema, f"{name}%")).fetchall() if not row[0].endswith("_tracking")]
    before = {table: _rows(database, database.schema, table) for table in tables}
    rebuild(database, app, view_class, projection_class)
    assert tables and {table: _rows(database, database.schema, table) for table in tables} == before
