"""ARCHITECTURE.md §4: no secret ever enters an event or a table; SPEC.md: only the key's SHA-256 is kept.

One scenario touches every secret the accounts boundary handles (and the carrier auth token, verified
against the fake carrier), then every row of every table of the test schema and every log line are
searched for each of them.
"""

from __future__ import annotations

import json
import logging
import re
import time
from datetime import timedelta
from typing import Any

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from twilio.request_validator import RequestValidator

from domain.calls.call import Call
from entrypoints.settings import Settings
from tests.fakes.twilio.rest import FakeTwilio
from tests.support.setup import PASSWORD, approve, select_number, signup, verify_carrier

NEW_PASSWORD = "a brand new passphrase"
WRONG_PASSWORD = "not my password at all"
MAILED_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$", re.MULTILINE)  # secrets.token_urlsafe(32)
WRONG_CARRIER_TOKEN = "d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f"


@pytest.fixture
def fake_carrier() -> Iterator[FakeTwilio]:
    with FakeTwilio() as fake:
        yield fake


@pytest.fixture
def settings(tmp_path: Path, fake_carrier: FakeTwilio) -> Settings:
    return Settings(data_dir=tmp_path / "var", secret_key="test-secret-key-0123456789abcdef",
                    public_base_url="http://127.0.0.1:9",  # the fake carrier's callbacks go nowhere
                    twilio_api_base_url=fake_carrier.base_url)


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


def wait_dialed(container: Any, call_id: str) -> Any:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        call = container.calling.find(Call, Call.create_id(call_id))
        if call.carrier_sid:
            return call
        time.sleep(0.02)
    raise AssertionError("the live call was not dialed")


def run_scenario(client: Any, container: Any, mail: Any, clock: Any, carrier: FakeTwilio) -> dict[str, list[str]]:
    """Sign-up to logout; returns every secret that crossed the wire, by kind."""
    secrets: dict[str, list[str]] = {"api key": [], "password": [PASSWORD, NEW_PASSWORD, WRONG_PASSWORD], "token": [], "jwt": [],
                                     "webhook secret": [], "carrier token": [WRONG_CARRIER_TOKEN]}

    account = signup(client, email="secretive@example.com")
    secrets["api key"].append(account.api_key)
    approve(container, account)
    # A public address literal: checked at creation without a lookup; nothing is ever sent to it here.
    hook = client.post("/v1/webhooks", json={"url": "https://93.184.216.34/hook"}, headers=account.headers)
    assert hook.status_code == 201, hook.text
    secrets["webhook secret"].append(hook.json()["secret"])
    assert client.get("/v1/webhooks", headers=account.headers).status_code == 200
    twilio = carrier.add_account(friendly_name="Secretive Co", numbers=[("+14155550100", "Main")])
    secrets["carrier token"].append(twilio.auth_token)
    assert verify_carrier(client, account.headers, twilio.sid, WRONG_CARRIER_TOKEN).status_code == 422
    assert verify_carrier(client, account.headers, twilio.sid, twilio.auth_token).status_code == 200
    chosen = select_number(client, account.headers, "+14155550100")
    assert chosen.status_code == 200
    assert client.get("/v1/providers/twilio", headers=account.headers).json()["last4"] == twilio.auth_token[-4:]
    live = client.post("/v1/calls", headers=account.headers, json={
        "to": "+442071838750", "objective": "Confirm", "outcome_schema": {"ok": {"type": "boolean"}},
        "consent_type": "prior_express", "mode": "live"})
    assert live.status_code == 201, live.text  # dialed with the unsealed token, through the fake's REST API
    dialed = wait_dialed(container, live.json()["call_id"])
    for path, form in ((f"/webhooks/carrier/twiml/{dialed.call_id}", {}),
                       (f"/webhooks/carrier/status/{dialed.call_id}", {"AnsweredBy": "machine_start"})):
        params = {"CallSid": dialed.carrier_sid, "AccountSid": twilio.sid, **form}
        signature = RequestValidator(twilio.auth_token).compute_signature(container.settings.base_url + path, params)
        assert client.post(path, data=params, headers={"X-Twilio-Signature": signature}).status_code in (200, 204)
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
            if kind == "carrier token":
                found.append((kind + " body", value[:-4]))  # the last four are shown by design
            if kind == "jwt":
                found.append((kind + " signature", value.rsplit(".", 1)[1]))
    return found


def test_no_secret_is_stored_or_logged(client, container, mail, clock, capsys, caplog, service_log, fake_carrier):
    caplog.set_level(logging.DEBUG)
    secrets = run_scenario(client, container, mail, clock, fake_carrier)
    container.wait_for_views()

    tables = dump_schema(container.database.conninfo(), container.database.schema)
    events = tables["accounts_events"]
    # The dump really shows event contents: public facts of the scenario are readable in it.
    assert "secretive@example.com" in events and secrets["api key"][0][:16] in events
    assert "Secretive Co" in tables["calling_events"]  # the provider credential's events are in the dump
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
