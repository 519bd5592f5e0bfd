"""ARCHITECTURE.md §4: no secret ever enters an event or a table; SPEC.md: only the key's SHA-256 is kept.

One scenario touches every secret the accounts boundary handles, then every row of every table
of the test schema and every log line are searched for each of them.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import timedelta
from typing import Any

import psycopg
from psycopg import sql

from tests.conftest import PASSWORD, approve, signup

NEW_PASSWORD = "a brand new passphrase"
WRONG_PASSWORD = "not my password at all"
MAILED_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$", re.MULTILINE)  # secrets.token_urlsafe(32)


def dump_schema(conninfo: str, schema: str) -> dict[str, str]:
    """Every row of every table of the schema as text; bytea (event state) decoded as UTF-8."""

    def text(value: Any) -> str:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", errors="ignore")
        if isinstance(value, (dict, list)):
            return json.dumps(value, ensure_ascii=False)
        return str(value)

    tables: dict[str, str] = {}
    with psycopg.connect(conninfo) as conn:
        names = [row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s AND table_type = 'BASE TABLE'",
            (schema,),
        ).fetchall()]
        for name in names:
            rows = conn.execute(sql.SQL("SELECT * FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(name))).fetchall()
            tables[name] = "\n".join(" | ".join(text(value) for value in row) for row in rows)
    return tables


def run_scenario(client: Any, container: Any, mail: Any, clock: Any) -> dict[str, list[str]]:
    """Sign-up to logout; returns every secret that crossed the wire, by kind."""
    secrets: dict[str, list[str]] = {"api key": [], "password": [PASSWORD, NEW_PASSWORD, WRONG_PASSWORD], "token": [], "jwt": [],
                                     "webhook secret": []}

    account = signup(client, email="secretive@example.com")
    secrets["api key"].append(account.api_key)
    approve(container, account)
    # A public address literal: checked at creation without a lookup; nothing is ever sent to it here.
    hook = client.post("/v1/webhooks", json={"url": "https://93.184.216.34/hook"}, headers=account.headers)
    assert hook.status_code == 201, hook.text
    secrets["webhook secret"].append(hook.json()["secret"])
    assert client.get("/v1/webhooks", headers=account.headers).status_code == 200
    assert client.post("/auth/resend-verification", json={"email": account.email}).status_code == 200

    assert client.post("/auth/login", json={"email": account.email, "password": WRONG_PASSWORD}).status_code == 401
    first = client.post("/auth/login", json={"email": account.email, "password": PASSWORD}).json()["access_token"]
    secrets["jwt"].append(first)
    session = {"Authorization": f"Bearer {first}"}

    scoped = client.post("/auth/api-keys", headers=session, json={"name": "scoped", "scopes": ["calls:read"]}).json()
    plain = client.post("/auth/api-keys", headers=account.headers).json()
    rotated = client.post(f"/auth/api-keys/{scoped['key_id']}/rotate", headers=account.headers).json()
    secrets["api key"] += [scoped["secret"], plain["secret"], rotated["secret"]]
    assert client.get("/auth/me", headers={"Authorization": f"Bearer {scoped['secret']}"}).status_code == 200
    assert client.delete(f"/auth/api-keys/{plain['key_id']}", headers=session).status_code == 200
    assert client.get("/auth/me", headers={"Authorization": f"Bearer {plain['secret']}"}).status_code == 401

    verification_tokens = [t for m in mail.messages if m.kind == "email_verification" for t in MAILED_TOKEN.findall(m.body)]
    assert len(verification_tokens) == 2
    secrets["token"] += verification_tokens
    assert client.post("/auth/verify-email", json={"token": verification_tokens[-1]}).status_code == 200

    assert client.post("/auth/forgot-password", json={"email": account.email}).status_code == 200
    reset_tokens = [t for m in mail.messages if m.kind == "password_reset" for t in MAILED_TOKEN.findall(m.body)]
    assert len(reset_tokens) == 1
    secrets["token"] += reset_tokens
    reset = client.post("/auth/reset-password", json={"token": reset_tokens[0], "password": NEW_PASSWORD})
    assert reset.status_code == 200
    assert client.post("/auth/reset-password", json={"token": reset_tokens[0], "password": NEW_PASSWORD}).status_code == 400

    clock.advance(timedelta(minutes=1))
    second = client.post("/auth/login", json={"email": account.email, "password": NEW_PASSWORD}).json()["access_token"]
    secrets["jwt"].append(second)
    assert client.post("/auth/logout", json={"token": second}).status_code == 200
    assert client.post("/auth/logout", headers=session).status_code == 200
    assert client.get("/auth/me", headers=session).status_code == 401

    assert client.get("/v1/audit-events", headers={"Authorization": f"Bearer {rotated['secret']}"}).status_code == 403
    assert client.get("/v1/audit-events", headers=account.headers).status_code == 200
    return secrets


def needles(secrets: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Each secret, and the part of it that is never legitimately shown (key suffix, JWT signature)."""
    found: list[tuple[str, str]] = []
    for kind, values in secrets.items():
        for value in values:
            found.append((kind, value))
            if kind == "api key":
                found.append((kind + " suffix", value[16:]))  # the first 16 characters are the displayed prefix
            if kind == "webhook secret":
                found.append((kind + " body", value.removeprefix("whsec_")))
            if kind == "jwt":
                found.append((kind + " signature", value.rsplit(".", 1)[1]))
    return found


def test_no_secret_is_stored_or_logged(client, container, mail, clock, capsys, caplog, service_log):
    caplog.set_level(logging.DEBUG)
    secrets = run_scenario(client, container, mail, clock)
    container.wait_for_views()

    tables = dump_schema(container.database.conninfo(), container.database.schema)
    events = tables["accounts_events"]
    # The dump really shows event contents: public facts of the scenario are readable in it.
    assert "secretive@example.com" in events and secrets["api key"][0][:16] in events
    assert {"api_keys_v1", "audit_events_v1", "rate_limit_windows"} <= set(tables)

    captured = capsys.readouterr()
    logs = {"service": service_log.getvalue(), "stdout": captured.out, "stderr": captured.err, "logging": caplog.text}
    assert logs["service"].count('"event": "http.request"') >= 20  # every request's access line was captured

    leaks = [
        f"{kind} found in {where}"
        for kind, needle in needles(secrets)
        for where, text in {**{f"table {t}": v for t, v in tables.items()}, **{f"log {k}": v for k, v in logs.items()}}.items()
        if needle in text
    ]
    assert leaks == []
