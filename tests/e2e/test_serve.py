"""``callwright serve`` as a process (ARCHITECTURE.md §3, §10): the README walk-through, restarts on the
same data directory, the operator CLI against the running server, options and an external PostgreSQL."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import httpx
import psycopg
import pytest
from psycopg import sql

from adapters.postgres.database import DatabaseConfig
from adapters.postgres.database import start_embedded as start_embedded_server
from tests.e2e.service import PASSWORD, ServeProcess, approve_with_cli, base_env, bearer, free_port, run_cli, signup

pytestmark = pytest.mark.e2e

Launch = Callable[..., ServeProcess]


@pytest.fixture
def workdir() -> Iterator[Path]:
    """Data directories live outside pytest's tmp root: every pytest session started on the machine
    resets that root to mode 0700, which would lock out the embedded PostgreSQL's system user."""
    path = Path(tempfile.mkdtemp(prefix="callwright-e2e-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def launch(workdir: Path) -> Iterator[Launch]:
    """Starts ``callwright serve`` and waits for /healthz; every process is stopped at teardown."""
    started: list[ServeProcess] = []

    def start(env: Mapping[str, str], args: Sequence[str] = (), *, host: str, port: int,
              data_dir: Path | None) -> ServeProcess:
        server = ServeProcess(env, args, base_url=f"http://{host}:{port}", data_dir=data_dir,
                              log_path=workdir / f"serve-{len(started)}.log")
        started.append(server)
        server.wait_ready()
        return server

    yield start
    for server in reversed(started):
        server.cleanup()


def embedded_env(data_dir: Path, port: int) -> dict[str, str]:
    return base_env(host="127.0.0.1", port=str(port), data_dir=str(data_dir))


def start_embedded(launch: Launch, data_dir: Path) -> ServeProcess:
    port = free_port()
    return launch(embedded_env(data_dir, port), host="127.0.0.1", port=port, data_dir=data_dir)


def test_readme_walkthrough_and_the_data_survive_a_restart(launch: Launch, workdir: Path) -> None:
    data_dir = workdir / "var"
    server = start_embedded(launch, data_dir)
    with server.client() as http:
        account = signup(http, "dev@example.com")
        assert account["verification_status"] == "pending_review"
        key = bearer(account["secret"])

        pending = http.get("/v1/audit-events", headers=key)
        assert pending.status_code == 403
        assert pending.json()["error"]["code"] == "account_pending_review"

        approve_with_cli(server.env, "dev@example.com")

        approved = http.get("/v1/audit-events", headers=key)
        assert approved.status_code == 200, approved.text
        assert approved.headers["x-ratelimit-limit"] == "60"
        types = [item["type"] for item in approved.json()["items"]]
        assert types[0] == "tenant.approved" and "api_key.issued" in types

        login = http.post("/auth/login", json={"email": "dev@example.com", "password": PASSWORD})
        assert login.status_code == 200, login.text
        session = bearer(login.json()["access_token"])

    assert server.interrupt() == 0, server.output()
    assert (data_dir / "pgdata").is_dir() and (data_dir / "secret.key").is_file()

    again = start_embedded(launch, data_dir)
    with again.client() as http:
        history = http.get("/v1/audit-events", headers=key)
        assert history.status_code == 200, history.text
        assert set(types) | {"user.login"} == {item["type"] for item in history.json()["items"]}
        me = http.get("/auth/me", headers=key)
        assert me.status_code == 200, me.text
        assert me.json()["email"] == "dev@example.com"
        assert me.json()["verification_status"] == "approved"
        # The generated secret key is reused, so dashboard sessions survive the restart too.
        assert http.get("/auth/me", headers=session).json()["user_id"] == account["user_id"]
    assert again.interrupt() == 0, again.output()


def test_create_admin_prints_a_key_that_may_use_the_admin_routes(launch: Launch, workdir: Path) -> None:
    server = start_embedded(launch, workdir / "var")
    with server.client() as http:
        user = signup(http, "customer@example.com")
        done = run_cli(server.env, "admin", "create-admin", "--email", "ops@example.com", "--password", PASSWORD)
        assert done.returncode == 0, done.stderr
        printed = dict(re.findall(r"^(\w+): (\S+)", done.stdout, flags=re.MULTILINE))
        assert printed["secret"].startswith("sk_live_"), done.stdout
        # As the sign-up answer (SPEC.md Resources › API key): the prefix is the secret's first 16 characters.
        assert printed["prefix"] == printed["secret"][:16] and printed["key_id"].startswith("key_"), done.stdout
        assert printed["api_key"] == printed["secret"], done.stdout  # deprecated, for one release
        admin_key = bearer(printed["secret"])

        seen = http.get(f"/v1/admin/users/{user['user_id']}", headers=admin_key)
        assert seen.status_code == 200, seen.text
        assert seen.json()["email"] == "customer@example.com"
        assert seen.json()["verification_status"] == "pending_review"

        me = http.get(f"/v1/admin/users/{printed['user_id']}", headers=admin_key).json()
        assert me["is_admin"] is True and me["verification_status"] == "approved"

        approved = http.post(f"/v1/admin/users/{user['user_id']}/approve", headers=admin_key)
        assert approved.status_code == 200, approved.text
        assert approved.json()["verification_status"] == "approved"
        listed = http.get("/v1/audit-events", headers=bearer(user["secret"]))
        assert listed.status_code == 200, listed.text


def test_serve_options_take_precedence_over_the_environment(launch: Launch, workdir: Path) -> None:
    env_dir, option_dir = workdir / "env-var", workdir / "option-var"
    env_port, option_port = free_port(), free_port()
    # 192.0.2.1 (TEST-NET-1) cannot be bound here: the server only starts if --host wins.
    env = base_env(host="192.0.2.1", port=str(env_port), data_dir=str(env_dir))
    args = ["--host", "127.0.0.1", "--port", str(option_port), "--data-dir", str(option_dir)]
    server = launch(env, args, host="127.0.0.1", port=option_port, data_dir=option_dir)

    assert (option_dir / "pgdata").is_dir() and (option_dir / "secret.key").is_file()
    assert not env_dir.exists()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{env_port}/healthz", timeout=1.0, trust_env=False)
    with server.client() as http:
        assert http.get("/readyz").status_code == 200


@pytest.fixture
def external_schemas() -> Iterator[list[DatabaseConfig]]:
    """Two fresh schemas in one database of the machine's PostgreSQL (or ``CALLWRIGHT_TEST_DATABASE_URL``)."""
    url = os.environ.get("CALLWRIGHT_TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres"
    server = DatabaseConfig.from_url(url).with_schema("public")
    try:
        server.ping(timeout=2)
    except psycopg.OperationalError:
        # No server on the usual port: a private one reached by URL proves the switch as well.
        server = start_embedded_server(Path(tempfile.mkdtemp(prefix="callwright-e2e-external-")) / "pg")
    schemas = [server.with_schema(f"e2e_{uuid.uuid4().hex[:12]}") for _ in range(2)]
    yield schemas
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        for config in schemas:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(config.schema)))


def projected_types(config: DatabaseConfig, tenant_id: str) -> set[str]:
    with psycopg.connect(config.conninfo(), autocommit=True) as conn:
        query = sql.SQL("SELECT type FROM {}.audit_events_v1 WHERE tenant_id = %s").format(
            sql.Identifier(config.schema)
        )
        return {row[0] for row in conn.execute(query, (tenant_id,))}


def test_database_url_switches_to_an_external_postgresql(
    external_schemas: list[DatabaseConfig], launch: Launch, workdir: Path
) -> None:
    # Two services share one database in separate schemas (``?schema=``); both run at once, so each
    # must keep its own read models current (projection locks are per schema).
    services = []
    for n, database in enumerate(external_schemas):
        data_dir, port = workdir / f"var-{n}", free_port()
        env = {**embedded_env(data_dir, port), "CALLWRIGHT_DATABASE_URL": database.to_url()}
        services.append((launch(env, host="127.0.0.1", port=port, data_dir=data_dir), data_dir, database))

    for n, (server, data_dir, database) in enumerate(services):
        email = f"external{n}@example.com"
        with server.client() as http:
            account = signup(http, email)
            approve_with_cli(server.env, email)
            listed = http.get("/v1/audit-events", headers=bearer(account["secret"]))
            assert listed.status_code == 200, listed.text
            assert [item["type"] for item in listed.json()["items"]][:1] == ["tenant.approved"], listed.text
        assert not (data_dir / "pgdata").exists()
        assert {"tenant.approved", "api_key.issued"} <= projected_types(database, account["tenant_id"])
        other = external_schemas[1 - n]
        assert projected_types(other, account["tenant_id"]) == set()

    for server, _, _ in services:
        assert server.interrupt() == 0, server.output()
