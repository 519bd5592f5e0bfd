"""The links in the e-mails (issue 12 item 5; SPEC.md Endpoints › Auth: verify-email, reset-password):
read from the file outbox as a mail client would, followed with a browser's GET, they land on small
HTML pages that complete the action. The token never shows in a page or in the log."""

from __future__ import annotations

import re
from datetime import timedelta
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from litestar.testing import TestClient

from adapters.email.outbox import FileOutboxEmailSender
from entrypoints.settings import Settings
from tests.fakes.clock import FakeClock
from tests.support.setup import PASSWORD, Account

NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
def mail(tmp_path: Path) -> FileOutboxEmailSender:
    """The outbox ``callwright serve`` writes by default: one .eml file per message."""
    return FileOutboxEmailSender(tmp_path / "outbox")


def mailed_link(tmp_path: Path, settings: Settings, to: str, subject_word: str) -> str:
    """The link of the newest mail to ``to`` whose subject has ``subject_word``, as path and query."""
    found = []
    for path in sorted((tmp_path / "outbox").glob("*.eml"), key=lambda p: p.stat().st_mtime_ns):
        message = message_from_bytes(path.read_bytes(), policy=policy.default)
        if message["To"] == to and subject_word in message["Subject"]:
            found.append(message.get_content())
    assert found, f"no mail to {to} about {subject_word}"
    links = re.findall(r"https?://\S+", found[-1])
    assert len(links) == 1, found[-1]
    assert links[0].startswith(settings.base_url + "/")
    parts = urlsplit(links[0])
    return f"{parts.path}?{parts.query}"


def token_of(link: str) -> str:
    return link.partition("token=")[2]


def assert_page(response: Any, status: int, *words: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    assert "<script" not in response.text and "http" not in response.text.lower().replace("http-equiv", "")
    for word in words:
        assert word in response.text
    return str(response.text)


def test_the_verification_link_confirms_the_address_once(client: TestClient[Any], pending_account: Account,
                                                          settings: Settings, tmp_path: Path) -> None:
    link = mailed_link(tmp_path, settings, pending_account.email, "Confirm")
    assert link.startswith("/verify-email?token=")

    first = assert_page(client.get(link), 200, "confirmed")

    assert token_of(link) not in first
    assert client.get("/auth/me", headers=pending_account.headers).json()["email_verified"] is True
    assert_page(client.get(link), 409, "already been used")


def test_the_verification_mail_names_no_dashboard(pending_account: Account, tmp_path: Path) -> None:
    body = next((tmp_path / "outbox").glob("*.eml")).read_text()
    assert "dashboard" not in body.lower()
    assert "/verify-email?token=" in body


def test_an_expired_verification_link_says_so(client: TestClient[Any], pending_account: Account,
                                              settings: Settings, tmp_path: Path, clock: FakeClock) -> None:
    link = mailed_link(tmp_path, settings, pending_account.email, "Confirm")
    clock.advance(timedelta(days=8))

    assert_page(client.get(link), 410, "expired", "/auth/resend-verification")
    assert client.get("/auth/me", headers=pending_account.headers).json()["email_verified"] is False


@pytest.mark.parametrize("query", ["", "?token=", "?token=no-such-token"])
def test_a_link_without_a_valid_token_is_400(client: TestClient[Any], query: str) -> None:
    assert_page(client.get(f"/verify-email{query}"), 400, "not valid")
    assert_page(client.get(f"/reset-password{query}"), 400 if query != "?token=no-such-token" else 200)


def test_the_token_of_a_followed_link_is_not_logged(client: TestClient[Any], pending_account: Account,
                                                     settings: Settings, tmp_path: Path, service_log: Any) -> None:
    link = mailed_link(tmp_path, settings, pending_account.email, "Confirm")

    assert client.get(link).status_code == 200

    assert '"/verify-email"' in service_log.getvalue()
    assert token_of(link) not in service_log.getvalue()


def test_the_reset_link_opens_a_form_that_sets_the_new_password(client: TestClient[Any], pending_account: Account,
                                                                 settings: Settings, tmp_path: Path) -> None:
    client.post("/auth/forgot-password", json={"email": pending_account.email})
    link = mailed_link(tmp_path, settings, pending_account.email, "Reset")
    assert link.startswith("/reset-password?token=")

    form = assert_page(client.get(link), 200, '<form method="post">', 'name="password"')
    assert token_of(link) not in form
    weak = assert_page(client.post(link, data={"password": "short"}), 422, '<form method="post">')
    assert token_of(link) not in weak
    assert_page(client.post(link, data={"password": NEW_PASSWORD}), 200, "Password changed")

    assert client.post("/auth/login", json={"email": pending_account.email, "password": PASSWORD}).status_code == 401
    assert client.post("/auth/login", json={"email": pending_account.email, "password": NEW_PASSWORD}).status_code == 200
    assert_page(client.post(link, data={"password": "another new passphrase"}), 409, "already been used")


def test_the_pages_are_not_in_the_api_schema(client: TestClient[Any]) -> None:
    paths = client.get("/schema/openapi.json").json()["paths"]
    assert "/auth/verify-email" in paths
    assert "/verify-email" not in paths and "/reset-password" not in paths
