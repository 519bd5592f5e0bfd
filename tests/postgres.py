"""Finds a PostgreSQL for the tests: ``CALLWRIGHT_TEST_DATABASE_URL``, else the machine's server
on 127.0.0.1:5432, else an embedded one started for the session. Each test gets its own schema."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

from adapters.postgres.database import DatabaseConfig, start_embedded

TEST_DB = "callwright_test"


def _machine_server() -> DatabaseConfig | None:
    for user in ("postgres", "root"):
        config = DatabaseConfig(host="127.0.0.1", port=5432, dbname="postgres", user=user)
        try:
            with psycopg.connect(config.conninfo(), connect_timeout=2, autocommit=True) as conn:
                exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (TEST_DB,)).fetchone()
                if not exists:
                    try:
                        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEST_DB)))
                    except psycopg.errors.DuplicateDatabase:
                        pass
            return DatabaseConfig(host="127.0.0.1", port=5432, dbname=TEST_DB, user=user)
        except psycopg.OperationalError:
            continue
    return None


def find_server() -> tuple[DatabaseConfig, str]:
    url = os.environ.get("CALLWRIGHT_TEST_DATABASE_URL")
    if url:
        return DatabaseConfig.from_url(url), "configured"
    machine = _machine_server()
    if machine is not None:
        return machine, "machine"
    directory = Path(tempfile.mkdtemp(prefix="callwright-test-pg-"))
    return start_embedded(directory), "embedded"


def fresh_schema(server: DatabaseConfig) -> DatabaseConfig:
    config = server.with_schema("t_" + uuid.uuid4().hex[:16])
    config.ensure_schema()
    return config


def drop_schema(config: DatabaseConfig) -> None:
    """The schema and those the service makes beside it: the analysts' views, a rebuild's generation."""
    with psycopg.connect(config.with_schema("public").conninfo(), autocommit=True) as conn:
        for schema in (config.schema, f"{config.schema}_analytics", f"{config.schema}_rebuild"):
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
